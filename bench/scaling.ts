import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createEnginePool } from '../packages/engines/src/index.ts'
import { roundTrip, startBenchService, type BenchService } from './service.ts'
import { percentile, type Input } from './stats.ts'

export interface ScalingResult {
  tasks: number
  oneThreadMs: number
  twoThreadsMs: number
  throughputRatio: number
  /** The same tasks on the engine pool alone (no HTTP, no records): what two threads give on this machine. */
  poolOnly: { oneThreadMs: number; twoThreadsMs: number; throughputRatio: number }
}

async function submitAll(service: BenchService, input: Input, count: number, fields: Record<string, string>): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < count; i++) ids.push(await service.client.submit('/api/v1/compress', input, fields))
  return ids
}

/**
 * Waits until every task ended. Tasks run in queue order, so each round polls from the oldest open
 * task and stops at the first that is still running: a client-like load of a few requests per
 * round, not one per open task (which would take the CPU the engine threads are measured on).
 */
async function waitAll(service: BenchService, ids: string[], onPoll?: (ms: number) => void): Promise<void> {
  const open = [...ids]
  while (open.length > 0) {
    while (open.length > 0) {
      const t = performance.now()
      const record = (await service.client.json(`/api/v1/tasks/${open[0]}`)) as { status: string; error?: string }
      onPoll?.(performance.now() - t)
      if (record.status === 'failed') throw new Error(`task failed: ${record.error}`)
      if (record.status !== 'completed') break
      open.shift()
    }
    if (open.length > 0) await new Promise((r) => setTimeout(r, 25))
  }
}

/**
 * Makespan of `count` compress tasks with one engine thread, then two; the better of `rounds`
 * batches each, since on a shared two-core machine noise only ever adds time (single batches of
 * the same run differed by up to 20%).
 */
export async function measureScaling(input: Input, count: number, rounds = 2): Promise<ScalingResult> {
  const times: number[] = []
  for (const threads of ['1', '2']) {
    const service = await startBenchService({ SERVICE__ENGINES__THREADS: threads })
    try {
      // Warm every thread (a cold one JIT-compiles the codecs' callers on its first tasks).
      await Promise.all(Array.from({ length: Number(threads) * 2 }, () => roundTrip(service, input, { engine: 'draco' })))
      times.push(await bestOf(rounds, async () => waitAll(service, await submitAll(service, input, count, { engine: 'draco' }))))
    } finally {
      await service.stop()
    }
  }
  return { tasks: count, ...ratioOf(times), poolOnly: await measurePoolScaling(input, count, rounds) }
}

/** The shortest of `rounds` timed runs of `work`, in ms. */
async function bestOf(rounds: number, work: () => Promise<void>): Promise<number> {
  let best = Infinity
  for (let round = 0; round < rounds; round++) {
    const start = performance.now()
    await work()
    best = Math.min(best, performance.now() - start)
  }
  return best
}

/** Makespan of `count` compress jobs run straight on the engine pool with one thread, then two. */
async function measurePoolScaling(input: Input, count: number, rounds: number): Promise<ScalingResult['poolOnly']> {
  const dir = await mkdtemp(join(tmpdir(), 'mos-pool-'))
  const path = join(dir, input.name)
  await writeFile(path, input.bytes)
  const job = { name: 'compress', input: { path }, format: 'glb', options: { engine: 'draco' } } as const
  const times: number[] = []
  try {
    for (const threads of [1, 2]) {
      const pool = createEnginePool({ threads, prestart: true })
      try {
        await Promise.all(Array.from({ length: threads * 2 }, () => pool.run(job)))
        times.push(await bestOf(rounds, async () => {
          const results = await Promise.all(Array.from({ length: count }, () => pool.run(job)))
          if (results.some((r) => !r.ok)) throw new Error('a pool job failed')
        }))
      } finally {
        await pool.destroy()
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  return ratioOf(times)
}

function ratioOf([oneThreadMs, twoThreadsMs]: number[]): ScalingResult['poolOnly'] {
  return { oneThreadMs: oneThreadMs!, twoThreadsMs: twoThreadsMs!, throughputRatio: oneThreadMs! / twoThreadsMs! }
}

export interface QueueResult {
  queued: number
  peakRssMb: number
  baselineRssMb: number
  pollP50Ms: number
  pollP99Ms: number
  totalMs: number
}

/** 200 queued tasks: service memory and the latency of GET /tasks/{id} while the threads are busy. */
export async function measureQueue(input: Input, count: number): Promise<QueueResult> {
  const service = await startBenchService({ SERVICE__ENGINES__THREADS: '2' })
  try {
    await roundTrip(service, input, { engine: 'meshopt' })
    const baseline = await service.rss()
    let peak = baseline
    const sampler = setInterval(() => void service.rss().then((r) => (peak = Math.max(peak, r))), 100)
    const polls: number[] = []
    const start = performance.now()
    await waitAll(service, await submitAll(service, input, count, { engine: 'meshopt' }), (ms) => polls.push(ms))
    clearInterval(sampler)
    return {
      queued: count,
      baselineRssMb: baseline / 2 ** 20,
      peakRssMb: peak / 2 ** 20,
      pollP50Ms: percentile(polls, 50),
      pollP99Ms: percentile(polls, 99),
      totalMs: performance.now() - start,
    }
  } finally {
    await service.stop()
  }
}
