import { EXTENSION_ERROR_TEXTS, EXTENSION_HEADERS } from '@mos/sdk/contract'
import { mockEvent } from 'h3'
import { createStorage } from 'unstorage'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ApiError } from '../src/errors.ts'
import { createRecordsIdempotencyStore } from '../src/idempotency/idempotency-store.ts'
import { idempotent, type IdempotentRequest } from '../src/idempotency/idempotent-submit.ts'
import type { FileStore } from '../src/storage/file-store.ts'

afterEach(() => vi.useRealTimers())

describe('idempotent: a duplicate of a request still being handled', () => {
  it('waits 10 s, then gets the 409 with Retry-After: 1; its retry once the first has answered gets the first task', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const store = createRecordsIdempotencyStore(createStorage())
    const request = (): IdempotentRequest => ({
      event: mockEvent('http://mos/api/v1/compress', { method: 'POST' }),
      store,
      // An upload without files: the fingerprint reads no stored file.
      files: {} as FileStore,
      key: 'k-1',
      owner: 'owner',
      path: '/compress',
      upload: { fields: { engine: 'draco' }, files: [] },
      discard: async () => undefined,
    })
    let answer: (response: { task_id: string }) => void = () => undefined
    const first = idempotent(request(), () => new Promise<{ task_id: string }>((resolve) => (answer = resolve)))
    let settled = false
    const duplicate = idempotent(request(), async () => ({ task_id: 'second' }))
      .catch((error: unknown) => error)
      .finally(() => {
        settled = true
      })
    // Fake time in 100 ms steps, each letting the digests and claims (real I/O) run in between.
    for (let step = 0; step < 300 && !settled; step++) await vi.advanceTimersByTimeAsync(100)
    const refused = await duplicate
    expect(refused).toBeInstanceOf(ApiError)
    expect(refused).toMatchObject({ status: 409, message: EXTENSION_ERROR_TEXTS.idempotencyKeyInFlight() })
    expect((refused as ApiError).extraHeaders).toEqual({ 'retry-after': '1' })

    answer({ task_id: 't1' })
    expect(await first).toEqual({ task_id: 't1' })
    const retry = request()
    expect(await idempotent(retry, async () => ({ task_id: 'second' }))).toEqual({ task_id: 't1' })
    expect(retry.event.res.headers.get(EXTENSION_HEADERS.idempotentReplayed)).toBe('true')
  })
})
