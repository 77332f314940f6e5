import { startBenchService, type BenchService, waitForTask } from './service.ts'
import type { Input } from './stats.ts'

/** One kind of task of the mixed load: endpoint, fields, and which input it takes. */
interface MixedTask {
  endpoint: string
  fields: Record<string, string>
  input: Input
}

export interface MemoryAfterTasksResult {
  label: string
  tasks: number
  /** Service RSS (MB) at start-up, after one round of every task kind, after `tasks` more, and after the idle recycle. */
  startRssMb: number
  warmRssMb: number
  afterRssMb: number
  idleRssMb: number
  ratio: number
  seconds: number
}

const mb = (bytes: number) => Math.round(bytes / 2 ** 20)

/**
 * RSS of the service around a mixed load: every task type (compress with both engines, convert,
 * repair, diagnose, texture optimize and KTX2) over the given models, `tasks` of them, two at a time
 * on two engine threads. A service whose memory returns ends near its warm-up figure; one whose
 * threads keep the high-water mark of every codec's WASM memory does not.
 */
export async function measureMemoryAfterTasks(
  label: string,
  models: Input[],
  textured: Input,
  tasks: number,
  env: Record<string, string>,
): Promise<MemoryAfterTasksResult> {
  const kinds: MixedTask[] = [
    ...models.flatMap((input): MixedTask[] => [
      { endpoint: '/api/v1/compress', fields: { engine: 'draco' }, input },
      { endpoint: '/api/v1/compress', fields: { engine: 'meshopt' }, input },
      { endpoint: '/api/v1/convert', fields: { target_format: 'obj' }, input },
      { endpoint: '/api/v1/repair', fields: {}, input },
      { endpoint: '/api/v1/diagnose', fields: {}, input },
    ]),
    { endpoint: '/api/v1/textures/optimize', fields: { format: 'webp' }, input: textured },
    { endpoint: '/api/v1/textures/ktx2', fields: {}, input: textured },
  ]
  const service = await startBenchService({ SERVICE__ENGINES__THREADS: '2', ...env })
  try {
    const startRss = await service.rss()
    const start = performance.now()
    await runAll(service, kinds, kinds.length, 2)
    const warmRss = await service.rss()
    await runAll(service, kinds, tasks, 2)
    const afterRss = await service.rss()
    const idleSeconds = Number(env.SERVICE__ENGINES__IDLE_RECYCLE_SECONDS ?? 0)
    // Past the idle recycle, with a moment for the old threads to end and fresh ones to load.
    if (idleSeconds > 0) await new Promise((r) => setTimeout(r, idleSeconds * 1000 + 3000))
    const idleRss = await service.rss()
    return {
      label,
      tasks,
      startRssMb: mb(startRss),
      warmRssMb: mb(warmRss),
      afterRssMb: mb(afterRss),
      idleRssMb: mb(idleRss),
      ratio: afterRss / warmRss,
      seconds: (performance.now() - start) / 1000,
    }
  } finally {
    await service.stop()
  }
}

/** Runs `count` tasks cycling through `kinds`, `parallel` at a time (the results are downloaded, as a client would). */
async function runAll(service: BenchService, kinds: MixedTask[], count: number, parallel: number): Promise<void> {
  let next = 0
  const lane = async () => {
    while (next < count) {
      const kind = kinds[next++ % kinds.length]!
      const taskId = await service.client.submit(kind.endpoint, kind.input, kind.fields)
      await waitForTask(service, taskId)
      await service.client.download(`/api/v1/tasks/${taskId}/download`)
    }
  }
  await Promise.all(Array.from({ length: parallel }, lane))
}
