import { mockEvent } from 'h3'
import type { IdempotencyStore } from '../../src/idempotency/idempotency-store.ts'
import type { IdempotentRequest } from '../../src/idempotency/idempotent-submit.ts'
import type { FileStore } from '../../src/storage/file-store.ts'

/** A compress request with Idempotency-Key `key` and no files (its fingerprint reads no stored file). */
export function idempotentCompress(store: IdempotencyStore, key: string): IdempotentRequest {
  return {
    event: mockEvent('http://mos/api/v1/compress', { method: 'POST' }),
    store,
    files: {} as FileStore,
    key,
    owner: 'owner',
    path: '/compress',
    upload: { fields: { engine: 'draco' }, files: [] },
    discard: async () => undefined,
  }
}
