import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sharedRedisEnv, startMos, stopMos } from '../packages/server/test/support/processes.ts'
import { runtimeBinary } from '../scripts/runtime-binary.mjs'
import { workerdRuntime } from '../scripts/workerd.mjs'
import { REDIS_URL, removeRedisKeys, uniquePrefix } from '../test/support/redis.ts'
import { startTestS3 } from '../test/support/s3-server.ts'
import { throwAwayLicenceEnv } from '../test/support/service-env.ts'
import { streamedUpload } from './memory.ts'
import { BENCH_KEY } from './service.ts'

export const RUNTIMES = ['node', 'deno', 'bun', 'workerd'] as const
export type Runtime = (typeof RUNTIMES)[number]

export interface RuntimeUploadResult {
  runtime: Runtime
  /** Where the API process writes the file: a local folder, or the S3 server (s3rver, in this process). */
  files: 'fs' | 's3'
  uploadMb: number
  seconds: number
  mbPerSecond: number
  baselineRssMb: number
  peakRssMb: number
  growthMb: number
  /** RSS growth while the first half of the upload arrived: flat means the whole upload grows no further. */
  firstHalfGrowthMb: number
}

const rssOf = async (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024

/** Whether the runtime's binary is installed (Node always is). */
const installed = (runtime: Runtime) =>
  runtime === 'node' || (runtime === 'workerd' ? workerdRuntime() !== undefined : runtimeBinary(runtime) !== undefined)

/**
 * A streamed upload of `uploadMb` into the API role on each runtime (`npm start` on Node,
 * `npm run start:api:deno`, `start:api:bun`, `start:api:workerd`: the same sources and settings) as
 * issue 24 deploys it: records and the BullMQ queue in Redis, files on a local folder or on an
 * S3-protocol server (S3 only on workerd: a Worker has no shared folder). No worker runs: the task
 * stays queued, so the figures are the upload path's alone. Runtimes whose binary is not installed
 * are left out.
 */
export async function measureRuntimeUploads(uploadMb: number): Promise<RuntimeUploadResult[]> {
  const results: RuntimeUploadResult[] = []
  const s3 = await startTestS3()
  try {
    for (const runtime of RUNTIMES.filter(installed)) {
      for (const files of runtime === 'workerd' ? (['s3'] as const) : (['fs', 's3'] as const)) {
        results.push(await measureOne(runtime, files, uploadMb, s3.env))
      }
    }
  } finally {
    await s3.close()
  }
  return results
}

async function measureOne(
  runtime: Runtime,
  files: 'fs' | 's3',
  uploadMb: number,
  s3Env: Record<string, string>,
): Promise<RuntimeUploadResult> {
  const prefix = uniquePrefix(`bench-runtime-${runtime}`)
  const dataDir = await mkdtemp(join(tmpdir(), 'mos-bench-runtime-'))
  const api = await startMos(
    `bench-${runtime}`,
    {
      ...sharedRedisEnv({ redisUrl: REDIS_URL, prefix, dataDir, apiKeys: BENCH_KEY, ...(files === 's3' ? { s3: s3Env } : {}) }),
      ...throwAwayLicenceEnv('lic_bench'),
      SERVICE__SERVER__ROLE: 'api',
      SERVICE__STORAGE__S3__PREFIX: prefix,
      SERVICE__LIMITS__MAX_FILE_SIZE_MB: String(uploadMb * 2),
      SERVICE__LOG__LEVEL: 'warn',
    },
    60_000,
    { runtime },
  )
  try {
    // On workerd the process started is the launcher; the memory is workerd's, whose pid it prints.
    const pid = runtime === 'workerd' ? Number(/runtime: workerd [\d-]+, pid (\d+)/.exec(api.output())?.[1]) : api.pid
    const { body, contentType, sentMb } = streamedUpload(uploadMb)
    const baseline = await rssOf(pid)
    let peak = baseline
    let firstHalfPeak = baseline
    const sampler = setInterval(
      () =>
        void rssOf(pid).then(
          (rss) => {
            peak = Math.max(peak, rss)
            if (sentMb() <= uploadMb / 2) firstHalfPeak = peak
          },
          () => undefined,
        ),
      50,
    )
    const start = performance.now()
    const response = await fetch(`${api.url}/api/v1/compress`, {
      method: 'POST',
      body,
      headers: { 'content-type': contentType, 'X-API-Key': BENCH_KEY },
      duplex: 'half',
    } as RequestInit)
    const text = await response.text()
    const seconds = (performance.now() - start) / 1000
    clearInterval(sampler)
    if (!response.ok) throw new Error(`${runtime} refused the upload: ${response.status} ${text}`)
    return {
      runtime,
      files,
      uploadMb,
      seconds,
      mbPerSecond: uploadMb / seconds,
      baselineRssMb: baseline / 2 ** 20,
      peakRssMb: peak / 2 ** 20,
      growthMb: (peak - baseline) / 2 ** 20,
      firstHalfGrowthMb: (firstHalfPeak - baseline) / 2 ** 20,
    }
  } finally {
    await stopMos(api, 10_000)
    await removeRedisKeys(prefix)
    await rm(dataDir, { recursive: true, force: true })
  }
}
