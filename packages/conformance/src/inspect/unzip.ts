import { inflateRawSync } from 'node:zlib'

/**
 * Reads the entries of a ZIP archive (stored or deflated), enough to open a glTF bundle. Throws on
 * anything it cannot read; the caller turns that into a check failure.
 */
export function unzip(bytes: Uint8Array): Map<string, Uint8Array> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let end = -1
  for (let i = bytes.byteLength - 22; i >= Math.max(0, bytes.byteLength - 22 - 65_535); i--) {
    if (view.getUint32(i, true) === 0x06054b50) {
      end = i
      break
    }
  }
  if (end < 0) throw new Error('not a ZIP archive (no end of central directory)')
  const count = view.getUint16(end + 10, true)
  let offset = view.getUint32(end + 16, true)
  const entries = new Map<string, Uint8Array>()
  for (let k = 0; k < count; k++) {
    if (view.getUint32(offset, true) !== 0x02014b50) throw new Error('broken ZIP central directory')
    const method = view.getUint16(offset + 10, true)
    const compressedSize = view.getUint32(offset + 20, true)
    const nameLength = view.getUint16(offset + 28, true)
    const extraLength = view.getUint16(offset + 30, true)
    const commentLength = view.getUint16(offset + 32, true)
    const local = view.getUint32(offset + 42, true)
    const name = new TextDecoder().decode(bytes.subarray(offset + 46, offset + 46 + nameLength))
    offset += 46 + nameLength + extraLength + commentLength
    if (view.getUint32(local, true) !== 0x04034b50) throw new Error(`broken ZIP local header for ${name}`)
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true)
    const data = bytes.subarray(start, start + compressedSize)
    if (name.endsWith('/')) continue
    if (method === 0) entries.set(name, data)
    else if (method === 8) entries.set(name, new Uint8Array(inflateRawSync(data)))
    else throw new Error(`ZIP entry ${name} uses unsupported method ${method}`)
  }
  return entries
}
