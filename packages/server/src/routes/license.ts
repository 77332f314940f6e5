import { ERROR_TEXTS, LICENSE_REQUIRED_STATUS, type LicenseInfoA, type LicenseInfoB } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import type { ServiceContext } from '../context.ts'
import { ApiError } from '../errors.ts'
import { readJsonText } from '../uploads/read-json-body.ts'
import { enterCommit } from './commit-point.ts'
import { infoDocumentA, infoDocumentB, verifyDocumentA, verifyDocumentB } from '../licensing/license-documents.ts'

/** A licence key is a few hundred bytes: the body is bounded at a few KB, read or declared. */
const LICENSE_BODY_BYTES = 8 * 1024

/** The `license_key` of a JSON body; 400 naming the field when it is absent or empty. */
async function readLicenseKey(event: H3Event, idleMs: number): Promise<string> {
  const text = await readJsonText(event, LICENSE_BODY_BYTES, idleMs)
  let body: unknown
  try {
    body = text.trim() === '' ? {} : JSON.parse(text)
  } catch (error) {
    throw new ApiError(400, ERROR_TEXTS.malformedBody(`body is not JSON (${(error as Error).message})`))
  }
  const key = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).license_key : undefined
  if (key !== undefined && typeof key !== 'string') throw new ApiError(400, ERROR_TEXTS.invalidField('license_key', 'must be a string'))
  if (!key || key.trim() === '') throw new ApiError(400, ERROR_TEXTS.missingField('license_key'))
  return key.trim()
}

/**
 * POST /api/v1/license/verify: checks the key (signature, expiry, machine). From an administrator
 * (`mayActivate`: an admin key, or the console's signed-in administrator), a valid key also becomes
 * the active licence, stored for every process sharing the records. In B a refused key answers 402
 * with the verify document plus `error`.
 */
export async function verifyLicense(event: H3Event, ctx: ServiceContext, mayActivate: boolean): Promise<unknown> {
  const key = await readLicenseKey(event, ctx.config.server.bodyIdleTimeoutMs)
  const check = ctx.access.licensing.check(key)
  const activated = check.ok && mayActivate
  if (activated) {
    enterCommit(event)
    await ctx.access.licensing.activate(key)
  }
  if (ctx.variant === 'A') return { ...verifyDocumentA(check, ctx.config.limits), activated }
  const document = verifyDocumentB(check)
  if (!document.success) {
    return Response.json(
      { error: ERROR_TEXTS.licenseRefused(check.ok ? '' : check.message), ...document },
      { status: LICENSE_REQUIRED_STATUS },
    )
  }
  return { ...document, activated }
}

/** GET /api/v1/license/info: the licence in force, in the variant's shape (2.7). */
export function licenseInfo(ctx: ServiceContext): Promise<LicenseInfoA | LicenseInfoB> {
  return ctx.variant === 'A' ? infoDocumentA(ctx.access.licensing, ctx.config.limits) : infoDocumentB(ctx.access.licensing)
}
