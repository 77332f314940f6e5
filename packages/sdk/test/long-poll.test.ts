import { http, HttpResponse } from 'msw'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createClient, EXTENSION_HEADERS } from '../src/index.ts'
import { API, BASE, completedTask, KEY, mockServer, processingTask } from './support/fixtures.ts'

const server = mockServer()
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))
afterEach(() => server.resetHandlers())
afterAll(() => server.close())

const client = createClient({ baseURL: BASE, apiKey: KEY, retryPolicy: { initialDelayMs: 1, maxDelayMs: 1 } })

describe('waitForTask on a server with the long poll', () => {
  it('learns the wait from Mos-Wait-Max and then waits on the server, with no pause between requests', async () => {
    const waits: (string | null)[] = []
    server.use(
      http.get(`${API}/tasks/t1`, ({ request }) => {
        const wait = new URL(request.url).searchParams.get('wait')
        waits.push(wait)
        const record = waits.length < 3 ? processingTask(waits.length * 40) : completedTask()
        return HttpResponse.json(record, { headers: { [EXTENSION_HEADERS.waitMax]: '60' } })
      }),
    )
    // A pause of 10 minutes between polls would time the test out: the long poll takes none.
    const task = await client.waitForTask('t1', { pollIntervalMs: 600_000 })
    expect(task.status).toBe('completed')
    expect(waits).toEqual([null, '60', '60'])
  })

  it('polls as before where the server does not advertise it', async () => {
    const waits: (string | null)[] = []
    server.use(
      http.get(`${API}/tasks/t1`, ({ request }) => {
        waits.push(new URL(request.url).searchParams.get('wait'))
        return HttpResponse.json(waits.length < 3 ? processingTask(10) : completedTask())
      }),
    )
    expect((await client.waitForTask('t1', { pollIntervalMs: 5 })).status).toBe('completed')
    expect(waits).toEqual([null, null, null])
  })
})

describe('Idempotency-Key on submits', () => {
  it('sends one random key per submit call, the same on each of its retries, and retries a 5xx then', async () => {
    const keys: (string | null)[] = []
    server.use(
      http.post(`${API}/compress`, ({ request }) => {
        keys.push(request.headers.get(EXTENSION_HEADERS.idempotencyKey))
        return keys.length % 2 === 1
          ? HttpResponse.json({ error: 'internal error: busy' }, { status: 503 })
          : HttpResponse.json({ task_id: `t${keys.length}`, status: 'pending', message: 'compress task queued' })
      }),
    )
    const file = new Uint8Array([1, 2, 3])
    await client.compress({ file, filename: 'a.glb', engine: 'draco' })
    await client.compress({ file, filename: 'a.glb', engine: 'draco' })
    expect(keys).toHaveLength(4)
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(keys[1]).toBe(keys[0])
    expect(keys[3]).toBe(keys[2])
    expect(keys[2]).not.toBe(keys[0])
  })

  it("keeps the caller's own key", async () => {
    let seen: string | null = null
    server.use(
      http.post(`${API}/compress`, ({ request }) => {
        seen = request.headers.get(EXTENSION_HEADERS.idempotencyKey)
        return HttpResponse.json({ task_id: 't1', status: 'pending', message: 'compress task queued' })
      }),
    )
    await client.compress({ file: new Uint8Array([1]), filename: 'a.glb', engine: 'draco' }, { headers: { 'idempotency-key': 'mine-1' } })
    expect(seen).toBe('mine-1')
  })
})
