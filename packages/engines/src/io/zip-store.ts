import { crc32, deflateRawSync } from 'node:zlib'

/**
 * Writes a zip archive (deflate, no zip64) of named files: enough for a COLLADA file and its
 * textures, without a zip dependency. Entries above 4 GiB are not supported.
 */
export function writeZip(files: { name: string; bytes: Uint8Array }[]): Uint8Array {
  const parts: Uint8Array[] = []
  const central: Uint8Array[] = []
  let offset = 0
  for (const file of files) {
    const name = new TextEncoder().encode(file.name)
    const deflated = deflateRawSync(file.bytes)
    // Already-compressed images do not shrink: store those as they are.
    const stored = deflated.byteLength < file.bytes.byteLength
    const data = stored ? deflated : file.bytes
    const method = stored ? 8 : 0
    const crc = crc32(file.bytes)
    const local = new Uint8Array(30 + name.byteLength)
    const lv = new DataView(local.buffer)
    lv.setUint32(0, 0x04034b50, true)
    lv.setUint16(4, 20, true)
    lv.setUint16(6, 0x0800, true) // names are UTF-8
    lv.setUint16(8, method, true)
    lv.setUint32(14, crc, true)
    lv.setUint32(18, data.byteLength, true)
    lv.setUint32(22, file.bytes.byteLength, true)
    lv.setUint16(26, name.byteLength, true)
    local.set(name, 30)
    const entry = new Uint8Array(46 + name.byteLength)
    const cv = new DataView(entry.buffer)
    cv.setUint32(0, 0x02014b50, true)
    cv.setUint16(4, 20, true)
    cv.setUint16(6, 20, true)
    cv.setUint16(8, 0x0800, true)
    cv.setUint16(10, method, true)
    cv.setUint32(16, crc, true)
    cv.setUint32(20, data.byteLength, true)
    cv.setUint32(24, file.bytes.byteLength, true)
    cv.setUint16(28, name.byteLength, true)
    cv.setUint32(42, offset, true)
    entry.set(name, 46)
    parts.push(local, data)
    central.push(entry)
    offset += local.byteLength + data.byteLength
  }
  const centralSize = central.reduce((n, e) => n + e.byteLength, 0)
  const end = new Uint8Array(22)
  const ev = new DataView(end.buffer)
  ev.setUint32(0, 0x06054b50, true)
  ev.setUint16(8, files.length, true)
  ev.setUint16(10, files.length, true)
  ev.setUint32(12, centralSize, true)
  ev.setUint32(16, offset, true)
  const out = new Uint8Array(offset + centralSize + 22)
  let at = 0
  for (const part of [...parts, ...central, end]) {
    out.set(part, at)
    at += part.byteLength
  }
  return out
}
