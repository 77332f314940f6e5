import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runSuite, type SuiteReport } from '../src/index.ts'
import { API_KEY, startRealServer } from './support/servers.ts'

/**
 * The waits of the suite on our server with the contract's default rate limit (variant A, 60
 * requests a minute): following tasks and batches with the long poll, the run never waits on the
 * limit. Polling every 100 ms instead would spend ten requests a second on every running task.
 */
describe('the task checks against variant A at the default 60 requests a minute', () => {
  let server: Awaited<ReturnType<typeof startRealServer>>
  let report: SuiteReport

  beforeAll(async () => {
    server = await startRealServer('A', { SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '60' })
    report = await runSuite({
      baseUrl: server.url,
      apiKey: API_KEY,
      variant: 'A',
      profiles: ['core', 'mos'],
      include: ['task.lifecycle', 'task.failed-record', 'compress.output.*', 'batch.record', 'batch.partial-failure', 'download.length'],
    })
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  it('passes its checks without one wait on the rate limit', () => {
    expect(report.results.filter((r) => r.outcome === 'fail').map((r) => `${r.id}: ${r.message}`)).toEqual([])
    expect(report.results.filter((r) => r.outcome === 'pass').length).toBeGreaterThanOrEqual(6)
    expect(report.throttledMs).toBe(0)
    expect(report.requests).toBeLessThan(60)
  })
})
