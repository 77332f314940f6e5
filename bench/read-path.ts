import autocannon from 'autocannon'
import { BENCH_KEY, expectOk, roundTrip, startBenchService } from './service.ts'
import type { Input } from './stats.ts'

export interface ReadPathResult {
  requestsPerSecond: number
  p50Ms: number
  p99Ms: number
  errors: number
}

/** GET /api/v1/tasks/{id} throughput and latency on a warm service (fs storage). */
export async function measureReadPath(input: Input, seconds: number): Promise<ReadPathResult> {
  const service = await startBenchService()
  try {
    await roundTrip(service, input, { engine: 'meshopt' })
    const body = new FormData()
    body.append('file', new Blob([input.bytes as Uint8Array<ArrayBuffer>]), input.name)
    body.append('engine', 'meshopt')
    const { task_id } = (await expectOk(await service.call('/api/v1/compress', { method: 'POST', body }))) as { task_id: string }
    const result = await autocannon({
      url: `${service.url}/api/v1/tasks/${task_id}`,
      headers: { 'X-API-Key': BENCH_KEY },
      connections: 10,
      duration: seconds,
    })
    return {
      requestsPerSecond: result.requests.average,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      errors: result.errors + result.non2xx,
    }
  } finally {
    await service.stop()
  }
}
