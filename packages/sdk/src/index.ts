// @mos/sdk: the typed client of the Mos service. Imports nothing Node-only: it runs in Node 20+,
// browsers and edge runtimes. Paths and Node streams live on `@mos/sdk/node`.

// Client
export { createClient, createClientWith, CLIENT_DEFAULTS } from './client.ts'
export type { AndWaitHelpers, Client, ClientOptions } from './client.ts'
export { detectVariant } from './detect-variant.ts'
export type { DetectVariantOptions } from './detect-variant.ts'
export type { RequestOptions } from './request.ts'

// Resources
export type * from './resources/operations.ts'
export type * from './resources/tasks.ts'
export type * from './resources/task-control.ts'
export type * from './resources/batches.ts'
export type * from './resources/service.ts'
export type * from './resources/license.ts'

// Uploads
export { toFile } from './upload.ts'
export type { Uploadable, UploadParams, UploadResolver } from './upload.ts'

// Errors
export * from './errors.ts'

// Retries and waiting
export { isRetryable, retryDelayMs, RETRY_DEFAULTS } from './retry.ts'
export { retryAfterMs } from './retry-after.ts'
export type { RetryPolicy } from './retry.ts'
export { sleep, WAIT_DEFAULTS } from './wait.ts'
export type { WaitOptions } from './wait.ts'

// Webhooks (Mos extension)
export { verifyWebhookSignature, WEBHOOK_DEFAULTS, WEBHOOK_SIGNATURE_HEADER } from './webhooks.ts'
export type { VerifyWebhookOptions } from './webhooks.ts'

// Contract
export * from './contract/index.ts'
