import { ERROR_TEXTS } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import { ApiError } from '../errors.ts'
import { requestBodyStream } from './read-upload.ts'

/**
 * The body of a small JSON request as text, never more than `maxBytes` in memory: a declared
 * length over the bound is refused before a byte is read, a longer body (chunked) is cut at the
 * first byte past it. Both answer 413 with the contract's request-size text.
 */
export async function readJsonText(event: H3Event, maxBytes: number): Promise<string> {
  const declared = Number(event.req.headers.get('content-length') ?? NaN)
  if (declared > maxBytes) throw new ApiError(413, ERROR_TEXTS.requestTooLarge(declared, maxBytes))
  const body = requestBodyStream(event)
  if (!body) return ''
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = []
    let bytes = 0
    const stop = (error: ApiError) => {
      body.off('data', onData)
      body.pause()
      reject(error)
    }
    const onData = (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes > maxBytes) return stop(new ApiError(413, ERROR_TEXTS.requestTooLarge(bytes, maxBytes)))
      chunks.push(chunk)
    }
    body.on('data', onData)
    body.on('error', (error: Error) => stop(new ApiError(400, ERROR_TEXTS.malformedBody(error.message))))
    body.on('close', () => {
      if (!body.readableEnded) stop(new ApiError(400, ERROR_TEXTS.malformedBody('the request body ended before it was complete')))
    })
    body.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
  })
}
