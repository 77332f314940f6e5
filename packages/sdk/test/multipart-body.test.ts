import { describe, expect, it } from 'vitest'
import { multipartBody } from '../src/multipart-body.ts'

/** Reads a stream whole, counting its chunks. */
async function readAll(stream: ReadableStream<Uint8Array>): Promise<{ bytes: Uint8Array; chunks: number }> {
  const parts: Uint8Array[] = []
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) parts.push(chunk)
  const bytes = new Uint8Array(parts.reduce((total, part) => total + part.byteLength, 0))
  let offset = 0
  for (const part of parts) {
    bytes.set(part, offset)
    offset += part.byteLength
  }
  return { bytes, chunks: parts.length }
}

describe('multipartBody', () => {
  const file = new Uint8Array(200_000).map((_, i) => (i * 31) % 251)
  const form = () => {
    const data = new FormData()
    data.append('file', new File([file], 'my "model".glb'))
    data.append('engine', 'draco')
    data.append('note', 'two\nlines')
    data.append('empty', new File([], 'empty.glb'))
    return data
  }

  it('is the form, byte for byte as fetch parses it back, with the length it declares', async () => {
    const body = multipartBody(form())
    const { bytes } = await readAll(body.open(() => undefined))
    expect(bytes.byteLength).toBe(body.length)
    const parsed = await new Response(bytes as BlobPart, { headers: { 'content-type': body.contentType } }).formData()
    const sent = parsed.get('file') as File
    expect(sent.name).toBe('my "model".glb')
    expect(new Uint8Array(await sent.arrayBuffer())).toEqual(file)
    expect(parsed.get('engine')).toBe('draco')
    expect(parsed.get('note')).toBe('two\r\nlines')
    expect([(parsed.get('empty') as File).name, (parsed.get('empty') as File).size]).toEqual(['empty.glb', 0])
  })

  it('reports each chunk it hands over, a file in slices of at most 64 KB, and opens afresh for a retry', async () => {
    const body = multipartBody(form())
    let progress = 0
    const first = await readAll(body.open(() => progress++))
    expect(progress).toBe(first.chunks)
    // 200 000 bytes of file: four slices; the framing and the two text fields between them.
    expect(first.chunks).toBeGreaterThanOrEqual(4 + 3)
    const again = await readAll(body.open(() => undefined))
    expect(again.bytes).toEqual(first.bytes)
  })

  it("fails with the signal's reason once it aborts and hands over nothing more", async () => {
    const controller = new AbortController()
    let progress = 0
    const reader = multipartBody(form())
      .open(() => progress++, controller.signal)
      .getReader()
    await reader.read()
    const reason = new Error('given up')
    controller.abort(reason)
    await expect(reader.read()).rejects.toBe(reason)
    expect(progress).toBe(1)
  })
})
