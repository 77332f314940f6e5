import { createHash } from 'node:crypto'

/**
 * Who a request speaks for, as stored: a digest of its API key (keys are never stored as they are).
 * Idempotency keys are scoped by it, so two keys' clients can never see each other's responses.
 */
export const ownerOf = (apiKey: string) => createHash('sha256').update(apiKey).digest('hex').slice(0, 32)
