import { startHelper } from './child.ts'
import { createBenchClient } from './client.ts'
import type { Input } from './stats.ts'

/**
 * The HTTP floor of the overhead section (http-floor-server.ts): what the service's exchange costs
 * on this machine when the server does nothing but store the upload and send a file back. Service
 * minus floor is what Mos itself adds; library plus floor is the least any service that stores
 * uploads should expect to take here (medians of noisy runs can beat it).
 */
export interface HttpFloor {
  /** Upload `input` with `fields`, poll once, download `resultBytes` bytes: the service's round trip, timed. */
  trip(input: Input, fields: Record<string, string>, resultBytes: number): Promise<number>
  stop(): void
}

export async function startHttpFloor(): Promise<HttpFloor> {
  const { child, ready } = await startHelper<{ port: number }>('./http-floor-server.ts')
  const client = createBenchClient(`http://127.0.0.1:${ready.port}`, 'floor')
  return {
    async trip(input, fields, resultBytes) {
      const start = performance.now()
      await client.submit('/upload', input, fields)
      await client.json('/poll')
      await client.download(`/download?bytes=${resultBytes}`)
      return performance.now() - start
    },
    stop() {
      client.close()
      child.kill()
    },
  }
}
