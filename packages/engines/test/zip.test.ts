import { randomBytes } from 'node:crypto'
import { strToU8, unzipSync, zipSync } from 'fflate'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ModelInputError } from '../src/errors.ts'
import { unzipSafely, zipFiles, zipLimits, type ZipLimits } from '../src/io/zip.ts'

const roomy: ZipLimits = { maxTotalBytes: 64 * 1024 * 1024, maxEntryBytes: 64 * 1024 * 1024, maxEntries: 100 }

/** Offsets of each central directory record (for patching headers as a hostile archive would). */
function centralRecords(zip: Uint8Array): number[] {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength)
  let eocd = zip.byteLength - 22
  while (view.getUint32(eocd, true) !== 0x06054b50) eocd--
  const records: number[] = []
  for (let at = view.getUint32(eocd + 16, true), i = 0; i < view.getUint16(eocd + 10, true); i++) {
    records.push(at)
    at += 46 + view.getUint16(at + 28, true) + view.getUint16(at + 30, true) + view.getUint16(at + 32, true)
  }
  return records
}

const refusal = (zip: Uint8Array, limits: ZipLimits = roomy) => {
  try {
    unzipSafely(zip, limits)
  } catch (error) {
    expect(error).toBeInstanceOf(ModelInputError)
    return (error as Error).message
  }
  throw new Error('the archive was accepted')
}

describe('zip: one reader and writer on fflate', () => {
  it('round-trips stored and deflated entries, nested paths, empty and non-ASCII names', () => {
    const files = {
      'model.gltf': { bytes: strToU8(JSON.stringify({ asset: { version: '2.0' } })), level: 6 as const },
      'textures/albedo map.png': { bytes: new Uint8Array(5000).map((_, i) => (i * 31) % 256), level: 0 as const },
      'bin/model.bin': { bytes: new Uint8Array(100_000).map((_, i) => i % 7), level: 1 as const },
      'empty.txt': { bytes: new Uint8Array(0), level: 6 as const },
      'zürich.obj': { bytes: strToU8('v 0 0 0\n'), level: 9 as const },
    }
    const zip = zipFiles(files)
    const back = unzipSafely(zip, roomy)
    expect([...back.keys()]).toEqual(Object.keys(files))
    for (const [path, { bytes }] of Object.entries(files)) expect(back.get(path)).toEqual(bytes)
    // The level decides the method: 0 stores (images are already compressed), others deflate.
    const methods: Record<string, number> = {}
    unzipSync(zip, {
      filter: (entry) => {
        methods[entry.name] = entry.compression
        return false
      },
    })
    expect(methods).toEqual({ 'model.gltf': 8, 'textures/albedo map.png': 0, 'bin/model.bin': 8, 'empty.txt': 8, 'zürich.obj': 8 })
  })

  it('writes the same bytes for the same files whenever it runs (entries carry a fixed time)', () => {
    const files = { 'model.gltf': { bytes: strToU8('{"asset":{"version":"2.0"}}'), level: 6 as const } }
    vi.useFakeTimers({ now: new Date('2026-01-01T10:00:00Z') })
    const first = zipFiles(files)
    vi.setSystemTime(new Date('2027-06-30T23:59:58Z'))
    const second = zipFiles(files)
    expect(Buffer.from(second).equals(Buffer.from(first))).toBe(true)
  })

  afterEach(() => {
    vi.useRealTimers()
  })

  it('skips folders and macOS resource forks, and strips leading ./', () => {
    const zip = zipSync({ 'a/': new Uint8Array(0), '__MACOSX/._a.obj': strToU8('x'), 'a/._b.obj': strToU8('x'), './a/c.obj': strToU8('c') })
    expect([...unzipSafely(zip, roomy).keys()]).toEqual(['a/c.obj'])
  })

  it('refuses paths that leave the archive', () => {
    for (const name of ['../evil.obj', '/etc/evil.obj', 'a/../../evil.obj', 'C:/evil.obj', '..\\evil.obj']) {
      expect(refusal(zipSync({ [name]: strToU8('x') }))).toMatch(/points outside the archive$/)
    }
  })

  it('derives its limits from the allocation bound', () => {
    expect(zipLimits({ maxAllocationBytes: 8 * 1024 * 1024 })).toEqual({
      maxTotalBytes: 8 * 1024 * 1024,
      maxEntryBytes: 8 * 1024 * 1024,
      maxEntries: 10_000,
    })
    expect(zipLimits({ maxAllocationBytes: 4 * 1024 * 1024 * 1024 }).maxEntryBytes).toBe(512 * 1024 * 1024)
  })

  it('refuses more entries than the limit', () => {
    const zip = zipSync(Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`f-${i}.txt`, strToU8(String(i))])))
    expect(refusal(zip, { ...roomy, maxEntries: 4 })).toBe('zip has 5 entries, more than the 4 limit')
    expect(unzipSafely(zip, { ...roomy, maxEntries: 5 }).size).toBe(5)
  })

  it('refuses declared sizes past the per-file and the total limit before inflating anything', () => {
    const zip = zipSync({ 'a.bin': [new Uint8Array(3000), { level: 1 }], 'b.bin': [new Uint8Array(3000), { level: 1 }] })
    expect(refusal(zip, { ...roomy, maxEntryBytes: 2999 })).toBe('zip entry "a.bin" declares 3000 bytes, more than the 2999 limit per file')
    expect(refusal(zip, { ...roomy, maxTotalBytes: 5999 })).toBe('zip contents exceed the 5999-byte limit')
    expect(unzipSafely(zip, { ...roomy, maxTotalBytes: 6000, maxEntryBytes: 3000 }).size).toBe(2)
  })

  it('stops an entry that inflates past the cap although its header declares little (zip bomb)', () => {
    const zip = zipSync({ 'bomb.bin': [new Uint8Array(4 * 1024 * 1024), { level: 9 }] })
    new DataView(zip.buffer).setUint32(centralRecords(zip)[0]! + 24, 10, true) // declares 10 bytes
    expect(refusal(zip, { ...roomy, maxEntryBytes: 1024 * 1024 })).toBe(
      'zip entry "bomb.bin" inflates past the 1048576-byte limit (zip bomb?)',
    )
  })

  it('refuses encrypted entries, unknown methods, truncated archives and non-archives', () => {
    const encrypted = zipSync({ 'a.obj': strToU8('v 0 0 0') })
    new DataView(encrypted.buffer).setUint16(centralRecords(encrypted)[0]! + 8, 1, true)
    expect(refusal(encrypted)).toBe('zip entry "a.obj" is encrypted')

    const bzip2 = zipSync({ 'a.obj': strToU8('v 0 0 0') })
    new DataView(bzip2.buffer).setUint16(centralRecords(bzip2)[0]! + 10, 12, true)
    expect(refusal(bzip2)).toBe('zip entry "a.obj" uses compression method 12 (only stored and deflate)')

    const whole = zipSync({ 'a.bin': [new Uint8Array(randomBytes(50_000)), { level: 6 }] })
    // The data cut short, the central directory kept (moved up, its offset patched): the entry runs past the end.
    const cut = new Uint8Array([...whole.subarray(0, 1000), ...whole.subarray(centralRecords(whole)[0]!)])
    new DataView(cut.buffer).setUint32(cut.byteLength - 22 + 16, 1000, true)
    expect(refusal(cut)).toBe('truncated zip: entry "a.bin" runs past the end')
    // The directory itself cut: no end record to find.
    expect(refusal(whole.subarray(0, whole.byteLength - 10))).toBe('not a zip file (no end of central directory)')

    expect(refusal(strToU8('not a zip at all, just some text that is long enough'))).toBe('not a zip file (no end of central directory)')
  })
})
