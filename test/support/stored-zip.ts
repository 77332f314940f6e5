import { crc32 } from 'node:zlib'

/**
 * A zip of the files, stored (not deflated): enough to hand a model and its textures over as one
 * upload, and mutations of it land in the files' own bytes (the fuzz corpus).
 */
export function storedZip(files: Record<string, Uint8Array>): Uint8Array {
  const local: Buffer[] = []
  const central: Buffer[] = []
  let offset = 0
  for (const [name, data] of Object.entries(files)) {
    const nameBytes = Buffer.from(name, 'utf8')
    const crc = crc32(data)
    const header = Buffer.alloc(30)
    header.writeUInt32LE(0x04034b50, 0)
    header.writeUInt16LE(20, 4) // version needed
    header.writeUInt32LE(crc, 14)
    header.writeUInt32LE(data.byteLength, 18)
    header.writeUInt32LE(data.byteLength, 22)
    header.writeUInt16LE(nameBytes.length, 26)
    const entry = Buffer.alloc(46)
    entry.writeUInt32LE(0x02014b50, 0)
    entry.writeUInt16LE(20, 4)
    entry.writeUInt16LE(20, 6)
    entry.writeUInt32LE(crc, 16)
    entry.writeUInt32LE(data.byteLength, 20)
    entry.writeUInt32LE(data.byteLength, 24)
    entry.writeUInt16LE(nameBytes.length, 28)
    entry.writeUInt32LE(offset, 42)
    local.push(header, nameBytes, Buffer.from(data))
    central.push(entry, nameBytes)
    offset += header.length + nameBytes.length + data.byteLength
  }
  const directory = Buffer.concat(central)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(Object.keys(files).length, 8)
  end.writeUInt16LE(Object.keys(files).length, 10)
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(offset, 16)
  return new Uint8Array(Buffer.concat([...local, directory, end]))
}
