import { delay, http, HttpResponse } from 'msw'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { createClient, sleep, TimeoutError, UserAbortError } from '../src/index.ts'
import { API, BASE, completedTask, KEY, mockServer, processingTask } from './support/fixtures.ts'

const server = mockServer()
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))
afterEach(() => {
  server.resetHandlers()
  vi.useRealTimers()
})
afterAll(() => server.close())

const client = createClient({ baseURL: BASE, apiKey: KEY })

function serveProcessing() {
  const counter = { calls: 0 }
  server.use(
    http.get(`${API}/tasks/t1`, () => {
      counter.calls++
      return HttpResponse.json(processingTask(counter.calls))
    }),
  )
  return counter
}

describe('waitForTask', () => {
  it('polls every pollIntervalMs (fake timers)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    let calls = 0
    server.use(http.get(`${API}/tasks/t1`, () => HttpResponse.json(++calls < 3 ? processingTask(calls * 30) : completedTask())))
    const done = client.waitForTask('t1', { pollIntervalMs: 1_000 })
    const seen: number[] = []
    for (const ms of [0, 999, 1, 999, 1]) {
      await vi.advanceTimersByTimeAsync(ms)
      seen.push(calls)
    }
    expect(seen).toEqual([1, 1, 2, 2, 3])
    expect((await done).status).toBe('completed')
  })

  it('gives up with TimeoutError after timeoutMs and stops polling (fake timers)', async () => {
    // Fake timers: on a busy machine real 10 ms timers may fire once in 60 ms, and the count would
    // say nothing about the client.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const counter = serveProcessing()
    const settled = client.waitForTask('t1', { timeoutMs: 60, pollIntervalMs: 10 }).catch((e: unknown) => e)
    await vi.advanceTimersByTimeAsync(60)
    const error = await settled
    expect(error).toBeInstanceOf(TimeoutError)
    expect((error as Error).message).toBe('task t1 not finished after 60 ms')
    const polls = counter.calls
    expect(polls).toBeGreaterThan(3)
    await vi.advanceTimersByTimeAsync(100)
    expect(counter.calls).toBe(polls)
  })

  it('timeoutMs also cuts a hanging poll short', async () => {
    server.use(
      http.get(`${API}/tasks/t1`, async () => {
        await delay(5_000)
        return HttpResponse.json(completedTask())
      }),
    )
    const started = Date.now()
    await expect(client.waitForTask('t1', { timeoutMs: 50 })).rejects.toBeInstanceOf(TimeoutError)
    expect(Date.now() - started).toBeLessThan(2_000)
  })

  it('stops with UserAbortError when the signal fires, between polls or during one', async () => {
    const counter = serveProcessing()
    const controller = new AbortController()
    const seen: number[] = []
    const pending = client.waitForTask('t1', {
      signal: controller.signal,
      pollIntervalMs: 5,
      onProgress: (task) => {
        seen.push(('progress' in task ? task.progress : undefined) ?? -1)
        if (seen.length === 3) controller.abort()
      },
    })
    await expect(pending).rejects.toBeInstanceOf(UserAbortError)
    expect(seen).toEqual([1, 2, 3])
    await sleep(30)
    expect(counter.calls).toBe(3)
  })

  it('an aborted signal given up front polls nothing', async () => {
    const counter = serveProcessing()
    await expect(client.waitForTask('t1', { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(UserAbortError)
    expect(counter.calls).toBe(0)
  })
})
