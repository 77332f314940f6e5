/** Decodes a text model file: UTF-8 (with or without BOM) or UTF-16 with a BOM. */
export function decodeText(bytes: Uint8Array): string {
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2))
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2))
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return new TextDecoder('utf-8').decode(bytes.subarray(3))
  return new TextDecoder('utf-8').decode(bytes)
}

/** Collects text output in encoded chunks, so a large file never becomes one giant JS string. */
export class TextSink {
  private parts: string[] = []
  private size = 0
  private chunks: Uint8Array[] = []
  private readonly encoder = new TextEncoder()
  write(text: string): void {
    this.parts.push(text)
    this.size += text.length
    if (this.size > 1 << 20) this.flush()
  }
  private flush(): void {
    if (this.parts.length === 0) return
    this.chunks.push(this.encoder.encode(this.parts.join('')))
    this.parts = []
    this.size = 0
  }
  bytes(): Uint8Array {
    this.flush()
    const total = this.chunks.reduce((sum, c) => sum + c.byteLength, 0)
    const out = new Uint8Array(total)
    let at = 0
    for (const c of this.chunks) {
      out.set(c, at)
      at += c.byteLength
    }
    return out
  }
}

/** Shortest text for a float32 value at 7 significant digits. */
export function formatFloat(x: number): string {
  if (x === 0 || !Number.isFinite(x)) return '0'
  return String(+x.toPrecision(7))
}

/** Image MIME type from the file's magic bytes (what glTF can carry), or undefined. */
export function imageMimeType(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47) return 'image/png'
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg'
  return undefined
}
