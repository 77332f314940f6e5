import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { corpusFiles, shared } from '../../../test/support/corpus.ts'
import { REDIS_URL, redisAvailable, redisKeys, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'
import { throwAwayLicenceEnv } from '../../../test/support/service-env.ts'
import { until } from '../../../test/support/poll.ts'
import { consolePasswordHash, readEventsUntil, signIn, type Fetcher } from './support/console.ts'
import { API_KEY, fetchMos, form, tempDir } from './support/harness.ts'
import { sharedRedisEnv, startMosGroup, stopMosGroup, type MosProcess } from './support/processes.ts'

const hasRedis = await redisAvailable()
const { available, paths } = corpusFiles({ spot: shared('obj', 'spot.obj'), sphere: shared('glb', 'DenseSphere.glb') })

describe.skipIf(!hasRedis || !available)('the console on a cluster (two API processes and a worker on Redis)', () => {
  const prefix = uniquePrefix('console')
  let dir: Awaited<ReturnType<typeof tempDir>>
  let processes: MosProcess[] = []
  const at =
    (index: number): Fetcher =>
    (path, init) =>
      fetch(`${processes[index]!.url}${path}`, init)
  const [first, second] = [at(0), at(1)]

  beforeAll(async () => {
    dir = await tempDir()
    const env = {
      ...sharedRedisEnv({ redisUrl: REDIS_URL, prefix, dataDir: dir.path, apiKeys: API_KEY }),
      ...throwAwayLicenceEnv(),
      SERVICE__CONSOLE__ADMIN_PASSWORD_HASH: await consolePasswordHash(),
      SERVICE__LOG__LEVEL: 'warn',
    }
    processes = await startMosGroup([
      ['api-1', { ...env, SERVICE__SERVER__ROLE: 'api' }],
      ['api-2', { ...env, SERVICE__SERVER__ROLE: 'api' }],
      ['worker', { ...env, SERVICE__SERVER__ROLE: 'worker' }],
    ])
  }, 120_000)
  afterAll(async () => {
    await stopMosGroup(processes)
    await removeRedisKeys(prefix)
    await dir?.remove()
  }, 60_000)

  it('keeps a session made on one API process on the other, in Redis under a digest of the cookie', async () => {
    const admin = await signIn(first)
    const me = (await (await first('/auth/me', { headers: { cookie: admin.cookie } })).json()) as { csrf_token: string }
    const elsewhere = await second('/auth/me', { headers: { cookie: admin.cookie } })
    expect(elsewhere.status).toBe(200)
    expect(((await elsewhere.json()) as { csrf_token: string }).csrf_token).toBe(me.csrf_token)
    const stored = await redisKeys(`${prefix}:records:console-sessions:`)
    expect(stored.length).toBeGreaterThanOrEqual(1)
    expect(stored.join(' ')).not.toContain(admin.cookie.split('=')[1])
    // Signed out on the second, refused on the first.
    const out = await second('/auth/logout', { method: 'POST', headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf } })
    expect(out.status).toBe(204)
    expect((await first('/auth/me', { headers: { cookie: admin.cookie } })).status).toBe(401)
  })

  it('streams on one API process the progress of a task submitted on the other and run by the worker', async () => {
    const admin = await signIn(first)
    const onSecond = {
      ...admin,
      call: ((path, init = {}) => second(path, { ...init, headers: { ...init.headers, cookie: admin.cookie } })) as Fetcher,
    }
    const events = await onSecond.call('/events')
    expect(events.status).toBe(200)
    type Totals = { tasks: { completed: number; failed: number; scope: string } }
    const totals = async () => (await (await onSecond.call('/admin/metrics')).json()) as Totals
    const before = await totals()
    expect(before.tasks).toMatchObject({ scope: 'cluster', completed: expect.any(Number), failed: expect.any(Number) })
    const submitted = await admin.call('/admin/submit/compress', {
      method: 'POST',
      body: await form({ engine: 'meshopt' }, [paths.sphere]),
    })
    expect(submitted.status).toBe(200)
    const { task_id } = (await submitted.json()) as { task_id: string }
    const { seen } = await readEventsUntil(events, (event) => event.data.includes(task_id) && JSON.parse(event.data).status === 'completed')
    const statuses = seen.filter((event) => event.data.includes(task_id)).map((event) => JSON.parse(event.data).status as string)
    // The worker's writes reached this process over Redis pub/sub: at least the start and the end.
    expect(statuses).toContain('completed')
    expect(statuses.some((status) => status === 'processing' || status === 'pending')).toBe(true)
    // Neither API process runs engine jobs; the queue is the cluster's.
    const queue = (await (await onSecond.call('/admin/queue')).json()) as Record<string, unknown>
    expect(queue).toMatchObject({ engine_threads: null, pending: expect.any(Number), processing: expect.any(Number) })
    // The worker counted it where this API process, which runs no task, reads the deployment's totals.
    const after = await until(totals, (read) => read.tasks.completed > before.tasks.completed, 10_000)
    expect(after.tasks).toEqual({
      ...before.tasks,
      completed: before.tasks.completed + 1,
      pending: expect.any(Number),
      processing: expect.any(Number),
    })
    const download = await onSecond.call(`/admin/tasks/${task_id}/download`)
    expect(download.status).toBe(200)
    expect(new TextDecoder().decode(new Uint8Array(await download.arrayBuffer()).slice(0, 4))).toBe('glTF')
  }, 180_000)

  it('lists on either API process every owner’s tasks, from the cluster’s index', async () => {
    const admin = await signIn(second)
    const apiTask = await fetchMos(processes[0]!, '/api/v1/compress', {
      method: 'POST',
      body: await form({ engine: 'draco' }, [paths.spot]),
    })
    expect(apiTask.status).toBe(200)
    const { task_id } = (await apiTask.json()) as { task_id: string }
    const listed = (await (await admin.call('/admin/tasks')).json()) as { tasks: { task_id: string; owner: string }[] }
    expect(listed.tasks[0]).toMatchObject({ task_id, owner: expect.stringMatching(/^[0-9a-f]{32}$/) })
    expect(listed.tasks.map((task) => task.owner)).toContain('console:admin')
  })
})
