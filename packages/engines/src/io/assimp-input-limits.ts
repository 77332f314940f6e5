import { ModelInputError } from '../errors.ts'

/**
 * Cheap scans that refuse FBX and COLLADA files declaring arrays larger than a bound, before the
 * bytes reach assimp: assimp reserves memory from the declared counts, and a WASM allocation
 * failure aborts the whole module instead of failing one file.
 */
export interface AssimpInputLimits {
  /** Largest input file. assimpjs copies input at a few MB/s, so this also bounds the copy time. */
  maxInputBytes: number
  /** Largest array a file may declare, in decoded bytes (FBX arrays, COLLADA counts × 4 bytes). */
  maxArrayBytes: number
  /** Largest sum of those: many arrays just under the bound (zlib makes them cheap to ship) add up. */
  maxTotalArrayBytes: number
  /**
   * Most XML elements a COLLADA file may hold: assimp builds a DOM node (~100 bytes of WASM heap)
   * for each, and `<a/>` costs 4 bytes of upload. Real files put their data in text, not elements:
   * the largest of the assimp corpus holds about 10^4.
   */
  maxXmlElements?: number
  /** Most nodes an FBX file may hold (binary records, or `{` blocks in ASCII): the same DOM cost as XML elements. */
  maxFbxNodes?: number
}

const MAX_XML_ELEMENTS = 2_000_000
const MAX_FBX_NODES = 2_000_000

/** Default limits: a 256 MiB file, arrays up to 512 MiB decoded, 2 GiB in all (the WASM heap ends at 4 GiB). */
export const ASSIMP_INPUT_LIMITS: AssimpInputLimits = {
  maxInputBytes: 256 * 1024 * 1024,
  maxArrayBytes: 512 * 1024 * 1024,
  maxTotalArrayBytes: 2 * 1024 * 1024 * 1024,
  maxXmlElements: MAX_XML_ELEMENTS,
  maxFbxNodes: MAX_FBX_NODES,
}

const FBX_BINARY_MAGIC = 'Kaydara FBX Binary  \0'
const ARRAY_ELEMENT_BYTES: Record<string, number> = { f: 4, d: 8, l: 8, i: 4, b: 1, c: 1 }
const SCALAR_BYTES: Record<string, number> = { Y: 2, C: 1, I: 4, F: 4, D: 8, L: 8 }
const MAX_DEPTH = 128

/** True when the bytes start like a binary FBX. */
function isBinaryFbx(bytes: Uint8Array): boolean {
  return bytes.byteLength >= 27 && latin1(bytes.subarray(0, 21)) === FBX_BINARY_MAGIC
}

/** Throws a ModelInputError when an FBX (binary or ASCII) is too large or declares too large an array. */
export function checkFbxInput(bytes: Uint8Array, limits: AssimpInputLimits = ASSIMP_INPUT_LIMITS): void {
  checkSize(bytes, limits, 'FBX')
  // A binary FBX sent through something that treats it as text comes with its zero bytes changed
  // (transparentTest.fbx of the assimp corpus: every 0x00 a space): nothing can tell which were zeros.
  if (latin1(bytes.subarray(0, 20)) === FBX_BINARY_MAGIC.slice(0, 20) && bytes.byteLength > 20 && bytes[20] !== 0) {
    throw new ModelInputError(
      `corrupt binary FBX: its header's zero byte is 0x${bytes[20]!.toString(16).padStart(2, '0')} (a binary file handled as text, its zero bytes replaced?)`,
    )
  }
  const maxNodes = limits.maxFbxNodes ?? MAX_FBX_NODES
  if (isBinaryFbx(bytes)) checkBinaryFbx(bytes, limits, maxNodes)
  else checkAsciiFbx(latin1(bytes), limits, maxNodes)
}

function tooManyFbxNodes(maxNodes: number): ModelInputError {
  return new ModelInputError(`FBX file holds more than ${maxNodes} nodes, over the limit`)
}

function malformedFbx(why: string): never {
  throw new ModelInputError(`malformed binary FBX: ${why}`)
}

function checkAsciiFbx(text: string, limits: AssimpInputLimits, maxNodes: number): void {
  let blocks = 0
  for (let at = text.indexOf('{'); at >= 0; at = text.indexOf('{', at + 1)) if (++blocks > maxNodes) throw tooManyFbxNodes(maxNodes)
  // ASCII FBX declares array lengths as "*N {" before the values.
  checkDeclaredCounts(text, /\*(\d+)\s*\{/g, 8, limits, 'FBX')
}

/** A walk over a binary FBX's node records, with what it has counted so far. */
interface FbxScan {
  bytes: Uint8Array
  view: DataView
  /** 64-bit node offsets from FBX 7.5 on. */
  wide: boolean
  /** Bytes of a node record before its name: end offset, property count, property length, name length. */
  header: number
  limits: AssimpInputLimits
  maxNodes: number
  nodes: number
  arrayBytes: number
}

function checkBinaryFbx(bytes: Uint8Array, limits: AssimpInputLimits, maxNodes: number): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const wide = view.getUint32(23, true) >= 7500
  const scan: FbxScan = { bytes, view, wide, header: wide ? 25 : 13, limits, maxNodes, nodes: 0, arrayBytes: 0 }
  scanNodeList(scan, 27, bytes.byteLength, 0)
}

function readOffset(scan: FbxScan, at: number): number {
  return scan.wide ? Number(scan.view.getBigUint64(at, true)) : scan.view.getUint32(at, true)
}

/** Checks the nodes from `start` to `end` (a file's top level, or a node's children) and their children. */
function scanNodeList(scan: FbxScan, start: number, end: number, depth: number): void {
  if (depth > MAX_DEPTH) malformedFbx('nodes nested too deeply')
  const { header, wide } = scan
  let pos = start
  while (pos + header <= end) {
    const nodeEnd = readOffset(scan, pos)
    if (nodeEnd === 0) return // the null record closing this list
    if (++scan.nodes > scan.maxNodes) throw tooManyFbxNodes(scan.maxNodes)
    const numProps = readOffset(scan, pos + (wide ? 8 : 4))
    const propsLength = readOffset(scan, pos + (wide ? 16 : 8))
    const nameLength = scan.bytes[pos + header - 1]!
    const propsStart = pos + header + nameLength
    const propsEnd = propsStart + propsLength
    if (nodeEnd <= pos || nodeEnd > end || propsEnd > nodeEnd) malformedFbx(`node at byte ${pos} runs past its parent (truncated file?)`)
    scanProperties(scan, pos, numProps, propsStart, propsEnd)
    if (propsEnd < nodeEnd) scanNodeList(scan, propsEnd, nodeEnd, depth + 1)
    pos = nodeEnd
  }
}

/** Checks the properties of the node at `node`: each within their length, each array within the limits. */
function scanProperties(scan: FbxScan, node: number, numProps: number, propsStart: number, propsEnd: number): void {
  const { bytes, view } = scan
  let p = propsStart
  for (let i = 0; i < numProps; i++) {
    if (p >= propsEnd) malformedFbx(`properties of the node at byte ${node} run past their length`)
    const type = String.fromCharCode(bytes[p]!)
    p += 1
    if (type in SCALAR_BYTES) {
      p += SCALAR_BYTES[type]!
    } else if (type in ARRAY_ELEMENT_BYTES) {
      p = checkArrayProperty(scan, ARRAY_ELEMENT_BYTES[type]!, p, propsEnd)
    } else if (type === 'S' || type === 'R') {
      if (p + 4 > propsEnd) malformedFbx(`string header at byte ${p} is truncated`)
      p += 4 + view.getUint32(p, true)
    } else {
      malformedFbx(`unknown property type 0x${bytes[p - 1]!.toString(16)} at byte ${p - 1}`)
    }
  }
  if (p > propsEnd) malformedFbx(`properties of the node at byte ${node} run past their length`)
}

/** Checks the array property whose header starts at `p` against the limits; returns where the next property starts. */
function checkArrayProperty(scan: FbxScan, elementBytes: number, p: number, propsEnd: number): number {
  const { view, limits } = scan
  if (p + 12 > propsEnd) malformedFbx(`array header at byte ${p} is truncated`)
  const length = view.getUint32(p, true)
  const encoding = view.getUint32(p + 4, true)
  const stored = view.getUint32(p + 8, true)
  const decoded = length * elementBytes
  if (decoded > limits.maxArrayBytes) {
    throw new ModelInputError(`FBX array of ${length} elements (${decoded} bytes) exceeds the limit of ${limits.maxArrayBytes} bytes`)
  }
  scan.arrayBytes += decoded
  if (scan.arrayBytes > limits.maxTotalArrayBytes) {
    throw new ModelInputError(`FBX arrays add up to more than the limit of ${limits.maxTotalArrayBytes} bytes`)
  }
  if (encoding === 0 && stored !== decoded) malformedFbx(`array at byte ${p} stores ${stored} bytes for ${decoded}`)
  return p + 12 + stored
}

/** Throws a ModelInputError when a COLLADA file is too large or declares too large a count. */
export function checkDaeInput(bytes: Uint8Array, limits: AssimpInputLimits = ASSIMP_INPUT_LIMITS): void {
  checkSize(bytes, limits, 'COLLADA')
  const text = decodeXmlText(bytes)
  // COLLADA never needs entity declarations; they are how "billion laughs" turns 1 KB into gigabytes.
  if (/<!ENTITY/i.test(text))
    throw new ModelInputError(
      'COLLADA file declares XML entities (<!ENTITY ...>), which COLLADA does not use and which can expand a small file without bound',
    )
  checkXmlElements(text, limits.maxXmlElements ?? MAX_XML_ELEMENTS)
  checkDaeArrays(text)
  checkDeclaredCounts(text, /\bcount\s*=\s*["'](\d+)["']/g, 4, limits, 'COLLADA')
}

/** Largest finite 32-bit float: assimp reads COLLADA arrays as floats. */
const FLOAT32_MAX = 3.4028234663852886e38

/**
 * Refuses COLLADA arrays holding what is not a number of their kind. assimp 5.2 reads them without
 * complaint and then spins: a 5 KB file with one "inf" or "1e308" in a float_array, or "-1e308" or
 * "10:" in a <p> index list, held a thread for over 20 s (found by the fuzz corpus). Exporters only
 * write finite decimal numbers and non-negative integer indices there.
 */
function checkDaeArrays(text: string): void {
  for (const match of text.matchAll(/<(float_array|int_array|p|vcount|v|h)\b[^>]*>([^<]*)</g)) {
    const [, element, content] = match as unknown as [string, string, string]
    if (element === 'float_array') {
      // Some exporters write the decimal separator of their locale ("21,920870", teapots.DAE): assimp reads it.
      if (!/^[\s0-9eE+.,-]*$/.test(content))
        throw new ModelInputError(
          `COLLADA <float_array> holds something that is not a number: ${firstBadToken(content, /^[+-]?[0-9.,eE+-]+$/)}`,
        )
      for (const token of content.split(/\s+/)) {
        if (token === '') continue
        const value = Number(token.replace(',', '.'))
        if (!(Math.abs(value) <= FLOAT32_MAX))
          throw new ModelInputError(`COLLADA <float_array> holds ${JSON.stringify(token)}, not a finite 32-bit number`)
      }
    } else if (element === 'int_array') {
      if (!/^[\s0-9-]*$/.test(content))
        throw new ModelInputError(`COLLADA <int_array> holds something that is not an integer: ${firstBadToken(content, /^-?[0-9]+$/)}`)
    } else if (!/^[\s0-9]*$/.test(content)) {
      throw new ModelInputError(`COLLADA <${element}> holds something that is not an index: ${firstBadToken(content, /^[0-9]+$/)}`)
    }
  }
}

function firstBadToken(content: string, good: RegExp): string {
  const token = content.split(/\s+/).find((t) => t !== '' && !good.test(t)) ?? content.trim().slice(0, 20)
  return JSON.stringify(token.slice(0, 40))
}

function checkXmlElements(text: string, max: number): void {
  let elements = 0
  for (let at = text.indexOf('<'); at >= 0; at = text.indexOf('<', at + 1)) {
    const next = text.charCodeAt(at + 1)
    // A start tag begins with a name character; closing tags, comments and declarations do not count.
    if ((next >= 0x41 && next <= 0x5a) || (next >= 0x61 && next <= 0x7a) || next === 0x5f || next === 0x3a) {
      if (++elements > max) throw new ModelInputError(`COLLADA file holds more than ${max} XML elements, over the limit`)
    }
  }
}

/** XML text of a COLLADA file in UTF-8 or UTF-16 (with its byte-order mark). */
export function decodeXmlText(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes)
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes)
  return latin1(bytes)
}

function checkSize(bytes: Uint8Array, limits: AssimpInputLimits, name: string): void {
  if (bytes.byteLength > limits.maxInputBytes) {
    throw new ModelInputError(`${name} file of ${bytes.byteLength} bytes exceeds the limit of ${limits.maxInputBytes} bytes`)
  }
}

function checkDeclaredCounts(text: string, pattern: RegExp, elementBytes: number, limits: AssimpInputLimits, name: string): void {
  let total = 0
  for (const match of text.matchAll(pattern)) {
    const count = Number(match[1])
    if (count * elementBytes > limits.maxArrayBytes) {
      throw new ModelInputError(
        `${name} file declares ${count} elements (${count * elementBytes} bytes), over the limit of ${limits.maxArrayBytes} bytes`,
      )
    }
    total += count * elementBytes
    if (total > limits.maxTotalArrayBytes) {
      throw new ModelInputError(`${name} file declares more elements in all than the limit of ${limits.maxTotalArrayBytes} bytes`)
    }
  }
}

function latin1(bytes: Uint8Array): string {
  return new TextDecoder('latin1').decode(bytes)
}
