import { ERROR_TEXTS } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import { ApiError } from '../errors.ts'
import { readRequestBody } from './request-body.ts'

/**
 * The body of a small JSON request as text, never more than `maxBytes` in memory: a declared
 * length over the bound is refused before a byte is read, a longer body (chunked) is cut at the
 * first byte past it. Both answer 413 with the contract's request-size text. A body that stalls for
 * `idleMs` is refused with 408 (request-body.ts).
 */
export async function readJsonText(event: H3Event, maxBytes: number, idleMs: number): Promise<string> {
  const declared = Number(event.req.headers.get('content-length') ?? NaN)
  if (declared > maxBytes) throw new ApiError(413, ERROR_TEXTS.requestTooLarge(declared, maxBytes))
  const body = readRequestBody(event, idleMs)
  if (!body) return ''
  const chunks: Uint8Array[] = []
  let bytes = 0
  for (;;) {
    const next = await body.next()
    if ('stalled' in next) throw next.stalled
    if ('error' in next) {
      throw new ApiError(400, ERROR_TEXTS.malformedBody('the request body ended before it was complete'))
    }
    if (next.done) break
    bytes += next.value.byteLength
    if (bytes > maxBytes) throw new ApiError(413, ERROR_TEXTS.requestTooLarge(bytes, maxBytes))
    chunks.push(next.value)
  }
  const all = new Uint8Array(bytes)
  let at = 0
  for (const chunk of chunks) {
    all.set(chunk, at)
    at += chunk.byteLength
  }
  return new TextDecoder().decode(all)
}
