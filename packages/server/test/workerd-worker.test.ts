import { createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { workerdRuntime } from '../../../scripts/workerd.mjs'
import { REDIS_URL } from '../../../test/support/redis.ts'
import { throwAwayLicenceEnv } from '../../../test/support/service-env.ts'
import { startMos, stopMos } from './support/processes.ts'

const required = process.env.REQUIRE_CORPUS === '1'
const installed = workerdRuntime() !== undefined
if (!installed && !required)
  console.warn('[test] no workerd binary (npm install brings it): its tests are skipped (REQUIRE_CORPUS=1 fails instead)')

/** Settings a Worker starts with (S3 is not reached before a request needs it). */
const WORKER_ENV = {
  SERVICE__SERVER__HOST: '127.0.0.1',
  SERVICE__SERVER__PORT: '0',
  SERVICE__AUTH__API_KEYS: 'workerd-test-key',
  SERVICE__QUEUE__DRIVER: 'bullmq',
  SERVICE__STORAGE__DRIVER: 'redis',
  SERVICE__STORAGE__REDIS__URL: REDIS_URL,
  SERVICE__STORAGE__FILES_DRIVER: 's3',
  SERVICE__STORAGE__S3__BUCKET: 'unused',
  SERVICE__STORAGE__S3__ENDPOINT: 'http://127.0.0.1:9',
  SERVICE__STORAGE__S3__ACCESS_KEY_ID: 'unused',
  SERVICE__STORAGE__S3__SECRET_ACCESS_KEY: 'unused',
  SERVICE__LOG__LEVEL: 'warn',
}

/**
 * `npm run start:api:workerd` (the Worker bundle under the real workerd): settings a Worker cannot
 * run on stop it with the reason, as a bad setting stops `npm start`; the Worker's own paths answer.
 * The conformance suite against it runs in packages/conformance/test/runtimes.test.ts.
 */
describe.skipIf(!installed && !required)('the API role on workerd', () => {
  const refusal = async (env: Record<string, string>) =>
    await startMos('workerd', env, 90_000, { runtime: 'workerd' }).then(
      async (started) => {
        await stopMos(started)
        return 'started'
      },
      (error: Error) => error.message,
    )

  it('refuses settings a Worker cannot run on, with the reason, before it listens', { timeout: 300_000 }, async () => {
    const withEnv = (changes: Record<string, string | undefined>) =>
      Object.fromEntries(Object.entries({ ...WORKER_ENV, ...changes }).filter((entry): entry is [string, string] => entry[1] !== undefined))
    expect(await refusal(withEnv({ SERVICE__STORAGE__FILES_DRIVER: 'fs' }))).toMatch(
      /cannot start on workerd: internal error: configuration error: SERVICE__STORAGE__FILES_DRIVER=fs cannot run on workerd: keep files in s3/,
    )
    expect(await refusal(withEnv({ SERVICE__STORAGE__DRIVER: 'fs', SERVICE__STORAGE__FILES_DRIVER: 's3' }))).toMatch(
      /SERVICE__STORAGE__DRIVER=fs cannot run on workerd: keep records in redis or s3/,
    )
    expect(await refusal(withEnv({ SERVICE__SERVER__ROLE: 'all' }))).toMatch(/SERVICE__SERVER__ROLE=all cannot run on workerd/)
    expect(await refusal(withEnv({ SERVICE__AUTH__API_KEYS: undefined }))).toMatch(/SERVICE__AUTH__API_KEYS must be set on a Worker/)
    expect(await refusal(withEnv({ SERVICE__SERVER__WHATEVER: '1' }))).toMatch(/unknown setting: SERVICE__SERVER__WHATEVER/)
  })

  it('refuses a bad port and a taken one in the words of `npm start`, before workerd starts', { timeout: 300_000 }, async () => {
    // workerd took 'abc' as a host name to resolve and stopped with a stack of its own internals.
    const badPort = await refusal({ ...WORKER_ENV, SERVICE__SERVER__PORT: 'abc' })
    expect(badPort).toMatch(/exited \(1\) before listening/)
    expect(badPort).toMatch(
      /^\[mos\] cannot start on workerd: configuration error: SERVICE__SERVER__PORT: expected an integer from 0 to 65535, got "abc"$/m,
    )
    expect(badPort).not.toMatch(/kj\/|workerd\/server|\*\*\*/)

    const holder = createServer()
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
    const { port } = holder.address() as { port: number }
    try {
      const taken = await refusal({ ...WORKER_ENV, SERVICE__SERVER__PORT: String(port) })
      expect(taken).toMatch(/exited \(1\) before listening/)
      expect(taken).toMatch(new RegExp(`^\\[mos\\] cannot start on workerd: port ${port} on 127\\.0\\.0\\.1 is already in use$`, 'm'))
      expect(taken).not.toMatch(/kj\/|workerd\/server/)
    } finally {
      await new Promise((resolve) => holder.close(resolve))
    }
  })

  it("serves health, capabilities from the build's registry and the licence's tier, and says the console's page is served elsewhere", {
    timeout: 120_000,
  }, async () => {
    const worker = await startMos('workerd', { ...WORKER_ENV, ...throwAwayLicenceEnv('lic_workerd') }, 90_000, { runtime: 'workerd' })
    try {
      expect(worker.output()).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+ \(role: api, runtime: workerd \d{4}-\d\d-\d\d, pid \d+\)/)
      expect(await (await fetch(`${worker.url}/api/v1/health`)).json()).toEqual({ status: 'ok' })
      const capabilities = (await (
        await fetch(`${worker.url}/api/v1/capabilities`, { headers: { 'X-API-Key': WORKER_ENV.SERVICE__AUTH__API_KEYS } })
      ).json()) as { features: string[]; formats: string[] }
      expect(capabilities.features).toEqual(
        expect.arrayContaining(['compress', 'convert', 'repair', 'diagnose', 'texture_optimize', 'texture_ktx2']),
      )
      expect(capabilities.formats).toEqual(expect.arrayContaining(['glb', 'gltf', 'obj', 'fbx', 'stl', 'dae', 'ply']))
      // The licence key is checked on the Worker (Ed25519 through workerd's node:crypto).
      const licence = await fetch(`${worker.url}/api/v1/license/info`, { headers: { 'X-API-Key': WORKER_ENV.SERVICE__AUTH__API_KEYS } })
      expect(await licence.json()).toMatchObject({ status: 'active', tier: 'professional' })
      const page = await fetch(`${worker.url}/console/`)
      expect(page.status).toBe(503)
      expect(((await page.json()) as { error: string }).error).toMatch(/^the console's page is not served by a Worker/)
    } finally {
      await stopMos(worker)
    }
  })
})
