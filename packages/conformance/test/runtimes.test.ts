import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Variant } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runtimeBinary } from '../../../scripts/runtime-binary.mjs'
import { workerdRuntime } from '../../../scripts/workerd.mjs'
import { REDIS_URL, redisAvailable, redisKeys, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'
import { startTestS3, type TestS3 } from '../../../test/support/s3-server.ts'
import { throwAwayLicenceEnv } from '../../../test/support/service-env.ts'
import { hostileUploadCases } from '../../server/test/support/hostile-upload-cases.ts'
import { type MosProcess, sharedRedisEnv, startMos, stopMosGroup } from '../../server/test/support/processes.ts'
import { runSuite, type SuiteReport } from '../src/index.ts'

const API_KEY = 'runtimes-test-key-0123'
const RUNTIMES = ['node', 'deno', 'bun', 'workerd'] as const
type Runtime = (typeof RUNTIMES)[number]
/** The hostile API process's limits: small, so bodies 20× over them stay small. */
const LIMIT_MB = 1
const BATCH_LIMIT_MB = 2

/**
 * The one core check a split deployment answers elsewhere: task counters are counted by the process
 * that ran the task, so they are on the worker's /metrics, not the API's (asserted below instead).
 */
const SPLIT_ROLES_CHECK = 'metrics.counts-tasks'

const hasRedis = await redisAvailable()
const required = process.env.REQUIRE_CORPUS === '1'
const installed = (runtime: Runtime) =>
  runtime === 'node' || (runtime === 'workerd' ? workerdRuntime() !== undefined : runtimeBinary(runtime) !== undefined)
for (const runtime of RUNTIMES.filter((name) => !installed(name) && !required)) {
  console.warn(
    `[test] no ${runtime} binary (npm install brings it on Linux x64): its runtime tests are skipped (REQUIRE_CORPUS=1 fails instead)`,
  )
}

/**
 * The deployment of issue #24: the API role on Node, Deno, Bun and workerd (the Worker bundle, run by
 * `workerd serve` as `npm run start:api:workerd` runs it) in front of Node worker processes,
 * all sharing Redis (records, the BullMQ queue) and an S3-protocol server (files). One Node worker
 * per variant serves every runtime's API processes of that variant. On each runtime: the
 * conformance suite's core profile in A and in B (the contract's every required check), and the
 * upload cases of the hostile-input suite against an API process with small limits, whose own
 * prefix no worker reads (every one of its uploads is refused, so nothing may be left).
 */
describe.skipIf(!hasRedis)('the API role on Node, Deno, Bun and workerd in front of Node workers (Redis, S3)', () => {
  const licence = throwAwayLicenceEnv('lic_runtimes')
  const prefixes = { A: uniquePrefix('runtimes-a'), B: uniquePrefix('runtimes-b') }
  let s3: TestS3
  let dataDir: string
  let workers: MosProcess[] = []

  /** SERVICE__* settings of one deployment (a variant, or the hostile cases' own). */
  const deploymentEnv = (variant: Variant, prefix: string, extra: Record<string, string> = {}) => ({
    ...sharedRedisEnv({ redisUrl: REDIS_URL, prefix, dataDir, s3: s3.env, apiKeys: API_KEY }),
    ...licence,
    SERVICE__SERVER__VARIANT: variant,
    SERVICE__STORAGE__S3__PREFIX: prefix,
    SERVICE__ENGINES__PRESTART: 'false',
    SERVICE__LOG__LEVEL: 'warn',
    ...extra,
  })

  beforeAll(async () => {
    s3 = await startTestS3()
    dataDir = await mkdtemp(join(tmpdir(), 'mos-runtimes-'))
    workers = await Promise.all(
      (['A', 'B'] as const).map((variant) =>
        startMos(`worker-${variant}`, { ...deploymentEnv(variant, prefixes[variant]), SERVICE__SERVER__ROLE: 'worker' }),
      ),
    )
  }, 120_000)
  afterAll(async () => {
    await stopMosGroup(workers)
    await s3?.close()
    await Promise.all(Object.values(prefixes).map((prefix) => removeRedisKeys(prefix)))
    await rm(dataDir, { recursive: true, force: true })
  })

  for (const runtime of RUNTIMES) {
    // Under REQUIRE_CORPUS=1 a missing binary is not skipped: starting the process fails the tests.
    describe.skipIf(!installed(runtime) && !required)(`on ${runtime}`, () => {
      const hostilePrefix = uniquePrefix(`runtimes-hostile-${runtime}`)
      const apis: Partial<Record<Variant | 'hostile', MosProcess>> = {}
      const reports: Partial<Record<Variant, SuiteReport>> = {}
      let completedBefore: number[] = []
      let completedAfter: number[] = []

      beforeAll(async () => {
        const start = (name: string, env: Record<string, string>) =>
          startMos(`${runtime}-${name}`, { ...env, SERVICE__SERVER__ROLE: 'api' }, 60_000, { runtime })
        const started = await Promise.allSettled([
          start('api-A', deploymentEnv('A', prefixes.A)),
          start('api-B', deploymentEnv('B', prefixes.B)),
          start(
            'api-hostile',
            deploymentEnv('A', hostilePrefix, {
              SERVICE__LIMITS__MAX_FILE_SIZE_MB: String(LIMIT_MB),
              SERVICE__LIMITS__MAX_BATCH_SIZE_MB: String(BATCH_LIMIT_MB),
            }),
          ),
        ])
        const running = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
        const failed = started.find((result) => result.status === 'rejected')
        if (failed) {
          await stopMosGroup(running)
          throw failed.reason
        }
        ;[apis.A, apis.B, apis.hostile] = running
        completedBefore = await Promise.all(workers.map(completedTasks))
        // Both variants at once: the checks wait on the workers' tasks far more than on each other.
        const suite = (variant: Variant) =>
          runSuite({
            baseUrl: apis[variant]!.url,
            apiKey: API_KEY,
            variant,
            profiles: ['core'],
            exclude: [SPLIT_ROLES_CHECK],
            concurrency: 4,
          })
        const [a, b] = await Promise.all([suite('A'), suite('B')])
        reports.A = a
        reports.B = b
        console.info(
          `[runtimes] ${runtime}: core profile in ${Math.round(a.durationMs / 1000)} s (A), ${Math.round(b.durationMs / 1000)} s (B)`,
        )
        completedAfter = await Promise.all(workers.map(completedTasks))
      }, 240_000)
      afterAll(async () => {
        const processes = Object.values(apis)
        await stopMosGroup(processes)
        await removeRedisKeys(hostilePrefix)
        // The last-resort handlers of main.ts (and workerd's "Uncaught" reports) are never reached by anything these tests send.
        for (const process_ of processes) expect(process_?.output() ?? '').not.toMatch(/uncaught exception|unhandled rejection/i)
      })

      for (const variant of ['A', 'B'] as const) {
        it(`passes the conformance suite's core profile in variant ${variant}`, () => {
          const report = reports[variant]!
          expect(report.results.filter((r) => r.outcome === 'fail').map((r) => `${r.id}: ${r.message}`)).toEqual([])
          // Uploads, tasks run by the Node worker, and downloads really happened through this runtime.
          for (const id of ['task.lifecycle', 'compress.output.draco', 'compress.output.meshopt', 'download.length']) {
            expect(report.results.find((r) => r.id === id)?.outcome, id).toBe('pass')
          }
        })
      }

      it(`the Node workers' /metrics count the tasks this runtime's API queued (${SPLIT_ROLES_CHECK} in a split deployment)`, () => {
        expect(completedAfter.length).toBe(2)
        completedAfter.forEach((after, index) => expect(after, workers[index]!.name).toBeGreaterThan(completedBefore[index]!))
      })

      it('was served by the runtime named (its process, not a Node fallback)', async () => {
        const { readlink } = await import('node:fs/promises')
        const executable = await readlink(`/proc/${servingPid(runtime, apis.A!)}/exe`)
        expect(executable).toMatch(runtime === 'node' ? /\/node[^/]*$/ : new RegExp(`/${runtime}$`))
      })

      describe('hostile uploads', () => {
        hostileUploadCases({
          // The descriptor count is the serving process's: workerd's, not its launcher's.
          server: () => ({ ...apis.hostile!, pid: servingPid(runtime, apis.hostile!) }),
          apiKey: API_KEY,
          limitMb: LIMIT_MB,
          batchLimitMb: BATCH_LIMIT_MB,
          leftovers: async () => [
            ...(await storedObjects(join(s3.directory, s3.bucket, hostilePrefix))),
            ...(await redisKeys(`${hostilePrefix}:records:tasks`)),
          ],
        })
      })
    })
  }
})

/**
 * The process that serves: on workerd the process started is the launcher (`npm run start:api:workerd`),
 * which names workerd's pid in its `listening on` line.
 */
function servingPid(runtime: Runtime, process_: MosProcess): number {
  if (runtime !== 'workerd') return process_.pid
  const pid = Number(/runtime: workerd [\d-]+, pid (\d+)/.exec(process_.output())?.[1])
  if (!pid) throw new Error(`${process_.name} did not name workerd's pid:\n${process_.output()}`)
  return pid
}

/** Completed tasks in a process's /metrics: `service_tasks_total{status="completed"}` (A) or `service_tasks_completed_total` (B), summed. */
async function completedTasks(process_: MosProcess): Promise<number> {
  const text = await (await fetch(`${process_.url}/api/v1/metrics`, { headers: { 'X-API-Key': API_KEY } })).text()
  let total = 0
  for (const line of text.split('\n')) {
    const match =
      /^(service_tasks_total\{[^}]*status="completed"[^}]*\}|service_tasks_completed_total(?:\{[^}]*\})?) (\d+(?:\.\d+)?)$/.exec(line)
    if (match) total += Number(match[2])
  }
  return total
}

/** Objects s3rver holds under a folder of the bucket (each object is a folder with an `object` file). */
async function storedObjects(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true }).catch(() => [] as string[])
  return entries.map(String).filter((entry) => entry.endsWith('/object') || entry === 'object')
}

/**
 * workerd: the API role runs as a Worker above (the suite's core profile in A and B, the hostile upload
 * cases). What the Worker does not serve is listed here, so a run shows it and why; docs/deployment.md
 * ("workerd") says what would lift each.
 */
describe.skip('on workerd, not served by the Worker (see docs/deployment.md, "workerd")', () => {
  it("the console's page (/console/): its built files are read from disk, which a Worker has not; it answers 503 saying so (the console's API is served)", () => {})
  it("the API reference's script (/api/v1/reference/scalar.js): Scalar's bundle is read from node_modules; it answers 500", () => {})
  it("/metrics' process figures (CPU, memory, event loop): prom-client's default metrics call process.cpuUsage, which workerd does not implement", () => {})
  it("/metrics across requests: each request has its own service context (a Worker may not reuse another request's sockets), so its counters are that request's", () => {})
  it("the wrong-key throttle: it counts in the process, which on a Worker is one request's context", () => {})
})
