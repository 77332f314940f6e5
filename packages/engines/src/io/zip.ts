import { Inflate, zipSync, type Zippable } from 'fflate'
import { errorMessage, ModelInputError } from '../errors.ts'
import { allocationLimit, type ReadOptions } from './limits.ts'

export interface ZipLimits {
  /** Most bytes all entries may inflate to together (default: the read allocation bound). */
  maxTotalBytes: number
  /** Most bytes one entry may inflate to. */
  maxEntryBytes: number
  /** Most entries in the archive. */
  maxEntries: number
}

/** Limits for an uploaded zip, derived from the read options' allocation bound. */
export function zipLimits(options: ReadOptions = {}): ZipLimits {
  const total = allocationLimit(options)
  return { maxTotalBytes: total, maxEntryBytes: Math.min(total, 512 * 1024 * 1024), maxEntries: 10_000 }
}

/** Compressed input pushed per inflate step: bounds how far one step can overshoot a cap (deflate's max ratio is ~1032:1). */
const INFLATE_STEP = 16 * 1024

/**
 * The one zip reader and writer of Mos, on fflate: `unzipSafely` for uploads, `zipFiles` for outputs.
 *
 * The reader walks the central directory itself and inflates with fflate's streaming `Inflate`
 * rather than calling fflate's `unzipSync`: that one inflates each entry into a buffer of the size
 * its header declares and cuts the rest off without a word (measured: an entry declaring 100 bytes
 * that inflates to 1 MB comes back as 100 bytes), so a lying header would turn into a silently wrong
 * model instead of the "zip bomb?" failure below.
 */

/** Deflate level of an entry: 0 stores (for data already compressed, such as images), 1–9 deflate. */
export type ZipLevel = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9

/**
 * The time every written entry carries. fflate stamps the current time otherwise, and then the same
 * input and options give different bytes on every run (caches, checksums and byte-for-byte
 * comparisons of outputs all miss).
 */
const ENTRY_TIME = new Date(2000, 0, 1)

/**
 * Packs `path → { bytes, level }` into a zip (entries in the order given, each dated `ENTRY_TIME`).
 *
 * @example
 * zipFiles({ 'model.gltf': { bytes: json, level: 6 }, 'texture.png': { bytes: png, level: 0 } })
 */
export function zipFiles(entries: Record<string, { bytes: Uint8Array; level: ZipLevel }>): Uint8Array {
  const zippable: Zippable = {}
  for (const [path, { bytes, level }] of Object.entries(entries)) zippable[path] = [bytes, { level }]
  return zipSync(zippable, { mtime: ENTRY_TIME })
}

/**
 * Unpacks a zip into `path → bytes`, refusing what could escape the archive or exhaust memory:
 * absolute paths, drive letters and `..` segments (zip-slip); encrypted, ZIP64 or unknown-method
 * entries; more entries or bytes than `limits` allow. Declared sizes are checked first, then the real
 * inflated sizes while inflating in small steps, so a zip bomb that lies in its headers is stopped
 * near the cap rather than after inflating. Directory entries and macOS resource forks are skipped.
 */
export function unzipSafely(bytes: Uint8Array, limits: ZipLimits): Map<string, Uint8Array> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const eocd = findEndOfCentralDirectory(bytes, view)
  const entries = view.getUint16(eocd + 10, true)
  const cdOffset = view.getUint32(eocd + 16, true)
  if (entries === 0xffff || cdOffset === 0xffffffff) throw new ModelInputError('ZIP64 archives are not supported')
  if (entries > limits.maxEntries) throw new ModelInputError(`zip has ${entries} entries, more than the ${limits.maxEntries} limit`)
  const files = new Map<string, Uint8Array>()
  let total = 0
  for (const { name, flags, method, compressedSize, declaredSize, localOffset } of centralDirectory(bytes, view, cdOffset, entries)) {
    const path = safeEntryPath(name)
    if (path === null) continue
    if (flags & 1) throw new ModelInputError(`zip entry "${name}" is encrypted`)
    if (compressedSize === 0xffffffff || declaredSize === 0xffffffff) throw new ModelInputError('ZIP64 archives are not supported')
    if (declaredSize > limits.maxEntryBytes)
      throw new ModelInputError(`zip entry "${name}" declares ${declaredSize} bytes, more than the ${limits.maxEntryBytes} limit per file`)
    if (total + declaredSize > limits.maxTotalBytes) throw new ModelInputError(`zip contents exceed the ${limits.maxTotalBytes}-byte limit`)
    if (localOffset + 30 > bytes.byteLength || view.getUint32(localOffset, true) !== 0x04034b50)
      throw new ModelInputError(`invalid zip: bad local header for "${name}"`)
    const dataStart = localOffset + 30 + view.getUint16(localOffset + 26, true) + view.getUint16(localOffset + 28, true)
    if (dataStart + compressedSize > bytes.byteLength) throw new ModelInputError(`truncated zip: entry "${name}" runs past the end`)
    const data = bytes.subarray(dataStart, dataStart + compressedSize)
    let content: Uint8Array
    if (method === 0) content = data
    else if (method === 8) content = inflateCapped(data, Math.min(limits.maxEntryBytes, limits.maxTotalBytes - total), name)
    else throw new ModelInputError(`zip entry "${name}" uses compression method ${method} (only stored and deflate)`)
    total += content.byteLength
    if (total > limits.maxTotalBytes) throw new ModelInputError(`zip contents exceed the ${limits.maxTotalBytes}-byte limit`)
    files.set(path, content)
  }
  return files
}

/** One entry of a zip's central directory, as it declares itself. */
interface CentralEntry {
  name: string
  flags: number
  method: number
  compressedSize: number
  declaredSize: number
  localOffset: number
}

/** The entries of a zip's central directory in order; throws where the directory is corrupt. */
function* centralDirectory(bytes: Uint8Array, view: DataView, cdOffset: number, entries: number): Generator<CentralEntry> {
  let at = cdOffset
  for (let e = 0; e < entries; e++) {
    if (at + 46 > bytes.byteLength || view.getUint32(at, true) !== 0x02014b50)
      throw new ModelInputError('invalid zip: corrupt central directory')
    const flags = view.getUint16(at + 8, true)
    const nameLength = view.getUint16(at + 28, true)
    const rawName = bytes.subarray(at + 46, at + 46 + nameLength)
    yield {
      name: new TextDecoder(flags & 0x800 ? 'utf-8' : 'latin1').decode(rawName),
      flags,
      method: view.getUint16(at + 10, true),
      compressedSize: view.getUint32(at + 20, true),
      declaredSize: view.getUint32(at + 24, true),
      localOffset: view.getUint32(at + 42, true),
    }
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true)
  }
}

/**
 * The bytes a zip's files hold once unpacked, as its central directory declares them (the entries
 * `unzipSafely` takes; nothing is inflated): what a deflated upload's size is better compared with.
 * Undefined for what is not a readable zip.
 * @example zipContentBytes(zipSync({ 'a.obj': objBytes })) // objBytes.byteLength
 */
export function zipContentBytes(bytes: Uint8Array): number | undefined {
  try {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    const eocd = findEndOfCentralDirectory(bytes, view)
    let total = 0
    for (const entry of centralDirectory(bytes, view, view.getUint32(eocd + 16, true), view.getUint16(eocd + 10, true))) {
      if (safeEntryPath(entry.name) !== null) total += entry.declaredSize
    }
    return total
  } catch {
    return undefined
  }
}

function findEndOfCentralDirectory(bytes: Uint8Array, view: DataView): number {
  for (let i = bytes.byteLength - 22; i >= Math.max(0, bytes.byteLength - 22 - 65535); i--) {
    if (view.getUint32(i, true) === 0x06054b50) return i
  }
  throw new ModelInputError('not a zip file (no end of central directory)')
}

/** The entry's path inside the archive, null for entries to skip; throws for paths that escape it. */
function safeEntryPath(name: string): string | null {
  const path = name.replace(/\\/g, '/')
  if (path.startsWith('/') || /^[a-zA-Z]:/.test(path) || path.split('/').includes('..')) {
    throw new ModelInputError(`zip entry "${name}" points outside the archive`)
  }
  if (path.endsWith('/') || path.startsWith('__MACOSX/') || path.split('/').some((part) => part.startsWith('._'))) return null
  return path.replace(/^(\.\/)+/, '')
}

function inflateCapped(data: Uint8Array, cap: number, name: string): Uint8Array {
  const chunks: Uint8Array[] = []
  let size = 0
  let done = false
  const inflate = new Inflate((chunk, final) => {
    size += chunk.byteLength
    if (size > cap) throw new ModelInputError(`zip entry "${name}" inflates past the ${cap}-byte limit (zip bomb?)`)
    chunks.push(chunk)
    if (final) done = true
  })
  try {
    for (let i = 0; i < data.byteLength; i += INFLATE_STEP) {
      inflate.push(data.subarray(i, Math.min(i + INFLATE_STEP, data.byteLength)), i + INFLATE_STEP >= data.byteLength)
    }
    if (data.byteLength === 0) inflate.push(new Uint8Array(0), true)
  } catch (error) {
    if (error instanceof ModelInputError) throw error
    throw new ModelInputError(`invalid zip: entry "${name}" does not inflate (${errorMessage(error)})`)
  }
  if (!done && data.byteLength > 0) throw new ModelInputError(`truncated zip: entry "${name}" ends early`)
  if (chunks.length === 1) return chunks[0]!
  const out = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.byteLength
  }
  return out
}
