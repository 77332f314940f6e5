import { execFileSync } from 'node:child_process'
import { mkdir, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { submitResponseSchema } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { REDIS_URL, redisAvailable, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'
import { API_KEY, fetchMos, form, tempDir, waitForTask } from './support/harness.ts'
import { type MosProcess, sharedRedisEnv, startMos, stopMosGroup } from './support/processes.ts'

const { available, paths } = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })
const hasRedis = await redisAvailable()

/** Binds `from` at `to` (read-write for now); false, with a printed reason, where mounting is not allowed. */
function bindMount(from: string, to: string): boolean {
  try {
    execFileSync('mount', ['--bind', from, to], { stdio: 'pipe' })
    return true
  } catch (error) {
    console.warn(`[skip] read-only storage suite: cannot bind-mount here (${(error as Error).message.split('\n')[0]})`)
    return false
  }
}

/**
 * A worker whose view of the shared files folder turns read-only (a remount, an NFS export changed,
 * a failing disk) while the API process still stores uploads: the engine thread writes each result
 * straight into the file store's folder, and the task said 'internal error: EROFS', the system's
 * code and nothing of what it means, with no cause in the log.
 */
describe.skipIf(!available || !hasRedis)('a worker whose files folder is read-only', () => {
  const prefix = uniquePrefix('read-only')
  let dir: Awaited<ReturnType<typeof tempDir>>
  let view: string
  let mounted = false
  const processes: MosProcess[] = []

  beforeAll(async () => {
    dir = await tempDir()
    const shared = join(dir.path, 'shared')
    view = join(dir.path, 'view')
    await Promise.all([mkdir(shared), mkdir(view)])
    mounted = bindMount(shared, view)
    if (!mounted) return
    const env = { ...sharedRedisEnv({ redisUrl: REDIS_URL, prefix, dataDir: dir.path, apiKeys: API_KEY }), SERVICE__LOG__FORMAT: 'json' }
    processes.push(await startMos('api', { ...env, SERVICE__SERVER__ROLE: 'api', SERVICE__STORAGE__FS__BASE: shared }))
    // Started on a writable view (start-up checks that it can write), made read-only under it.
    processes.push(await startMos('worker', { ...env, SERVICE__SERVER__ROLE: 'worker', SERVICE__STORAGE__FS__BASE: view }))
    execFileSync('mount', ['-o', 'remount,bind,ro', view])
  }, 120_000)

  afterAll(async () => {
    await stopMosGroup(processes)
    if (mounted) execFileSync('umount', ['-l', view])
    await removeRedisKeys(prefix)
    await dir?.remove()
  }, 60_000)

  it('fails the task saying storage failed, logs the system call, and leaves only the input', async ({ skip }) => {
    if (!mounted) skip()
    const [api, worker] = processes as [MosProcess, MosProcess]
    const response = await fetchMos(api, '/api/v1/compress', { method: 'POST', body: await form({ engine: 'draco' }, [paths.box]) })
    expect(response.status).toBe(200)
    const id = submitResponseSchema.parse(await response.json()).task_id
    const done = await waitForTask((path) => fetchMos(api, path), id)
    expect(done).toMatchObject({ status: 'failed', error: 'internal error: storage failed; the service log has the cause' })

    const failed = worker
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((entry) => entry.msg === 'task failed' && entry.taskId === id)
    expect(String(failed?.cause)).toMatch(new RegExp(`^\\[mos\\] \\[fs\\] write tasks/${id}/output: EROFS: read-only file system`))
    expect(await readdir(join(dir.path, 'shared', 'files', 'tasks', id))).toEqual(['input'])
  }, 120_000)
})
