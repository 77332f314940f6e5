import { errorBodySchema } from '@mos/sdk/contract'
import type { z } from 'zod'
import { fail } from './check.ts'
import type { HttpResponse } from './http.ts'

/** One line describing a response, for failure messages. */
export function describeResponse(response: HttpResponse): string {
  const type = response.headers.get('content-type') ?? ''
  const body = /json|text/.test(type) ? response.text().slice(0, 200) : `${response.bytes.byteLength} bytes of ${type || 'unknown type'}`
  return `${response.method} ${response.path} → ${response.status} ${body}`
}

/** Fails unless the response has one of the statuses. */
export function expectStatus(response: HttpResponse, ...statuses: number[]): void {
  if (!statuses.includes(response.status)) {
    fail(`expected HTTP ${statuses.join(' or ')}, got: ${describeResponse(response)}`)
  }
}

/** Fails unless the body is JSON with a JSON content type; returns it. */
export function expectJson(response: HttpResponse): unknown {
  const type = response.headers.get('content-type') ?? ''
  if (!/\bjson\b/i.test(type)) fail(`expected a JSON content type, got "${type}": ${describeResponse(response)}`)
  const body = response.json()
  if (body === undefined) fail(`body is not JSON: ${describeResponse(response)}`)
  return body
}

/** Validates a value against a contract schema; the failure lists every broken rule. */
export function expectSchema<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(value)
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 6)
      .map((issue) => `${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`)
      .join('; ')
    fail(`${what} does not match the contract: ${issues} — got ${JSON.stringify(value).slice(0, 300)}`)
  }
  return parsed.data
}

/** Fails unless the response is an error with the status and the `{"error": string}` body; returns the text. */
export function expectError(response: HttpResponse, ...statuses: number[]): string {
  expectStatus(response, ...statuses)
  return expectSchema(errorBodySchema, expectJson(response), `the ${response.status} body`).error
}

/** Fails unless the error text is exactly `text` (or matches the pattern). */
export function expectErrorText(response: HttpResponse, status: number, text: string | RegExp): void {
  const actual = expectError(response, status)
  const ok = typeof text === 'string' ? actual === text : text.test(actual)
  if (!ok) fail(`expected error text ${typeof text === 'string' ? JSON.stringify(text) : text}, got ${JSON.stringify(actual)}`)
}

/** Fails with `message` unless `condition` holds. */
export function expect(condition: unknown, message: string): asserts condition {
  if (!condition) fail(message)
}
