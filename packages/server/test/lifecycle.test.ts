import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { completedTaskSchema, ERROR_TEXTS, failedTaskSchema, submitResponseSchema } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sleep } from '../../../test/support/poll.ts'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { ConfigError, createServiceContext, loadConfig, startServer } from '../src/index.ts'
import { createTaskRunner } from '../src/tasks/task-runner.ts'
import type { TaskState } from '../src/tasks/task-state.ts'
import { writeBigMesh } from './support/big-mesh.ts'
import { form, realServer, tempDir, testEnv, waitForTask } from './support/harness.ts'
import { REDIS_URL, redisAvailable, redisKeys, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'
import { startTestS3 } from '../../../test/support/s3-server.ts'

const { available, paths } = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })

describe.skipIf(!available)('task time-outs, retention and orphan uploads', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let bigMesh: string
  beforeAll(async () => {
    dir = await tempDir()
    bigMesh = join(dir.path, 'big-mesh.glb')
    await writeBigMesh(bigMesh, 1150, { normals: false }) // 45 MiB: under the trial's 50 MB, seconds of Draco work
  })
  afterAll(() => dir.remove())

  const submit = async (server: Awaited<ReturnType<typeof realServer>>, path: string) => {
    const response = await server.call('/api/v1/compress', { method: 'POST', body: await form({ engine: 'draco', level: 10 }, [path]) })
    expect(response.status).toBe(200)
    return submitResponseSchema.parse(await response.json()).task_id
  }

  // The slow input takes ≥ 5 s of Draco work on an idle machine (more when busy), so these limits of
  // 1–2 s are always passed, while a tiny follow-up task needs no limit at all.
  it('fails a task that runs past the time-out with `timeout`', async () => {
    const base = join(dir.path, 'timeout')
    const server = await realServer(testEnv('A', base, { SERVICE__ENGINES__THREADS: '1', SERVICE__TASKS__TIMEOUT_SECONDS: '2' }))
    try {
      const slow = await submit(server, bigMesh)
      const raw = await waitForTask(server.call, slow)
      const record = failedTaskSchema.parse(raw)
      expect(record.error).toBe(ERROR_TEXTS.taskTimeout(2))
      expect(record.error).toBe('timeout: the task ran longer than the limit of 2 seconds')
      const ran = Date.parse(record.failed_at) - Date.parse(String(raw.started_at))
      expect(ran).toBeGreaterThanOrEqual(2000)
      expect(ran).toBeLessThan(5000)
      expect(typeof raw.expires_at).toBe('string')
    } finally {
      await server.close()
    }
  })

  it('stops the engine thread of a timed-out task: the pool is free at once and runs the next task', async () => {
    const context = createServiceContext(loadConfig({ SERVICE__STORAGE__DRIVER: 'memory', SERVICE__ENGINES__THREADS: '1' }))
    try {
      const put = async (id: string, path: string) => {
        await context.storage.files.write(`tasks/${id}/input`, new Uint8Array(await readFile(path)))
        await context.storage.taskStore.put({
          task_id: id,
          type: 'compress',
          status: 'pending',
          input_filename: 'in.glb',
          input_size_bytes: 1,
          created_at: new Date().toISOString(),
          job: { inputKey: `tasks/${id}/input`, format: 'glb', options: { engine: 'draco', level: 10 }, attempts: 0 },
        })
      }
      await put('slow-1', bigMesh)
      await put('next-1', paths.box)
      const limited = createTaskRunner({
        tasks: context.storage.taskStore,
        files: context.storage.files,
        pool: context.processing.pool,
        timeoutMs: 1000,
      })
      const started = Date.now()
      await limited.run('slow-1')
      // Back right after the limit, not when the ≥ 5 s of work would have ended.
      expect(Date.now() - started).toBeLessThan(4000)
      expect((await context.storage.taskStore.get('slow-1'))?.error).toBe(ERROR_TEXTS.taskTimeout(1))
      // Nothing still runs on the single thread: it was terminated, not left to finish.
      expect(context.processing.pool.active).toBe(0)
      await context.processing.runner.run('next-1')
      expect((await context.storage.taskStore.get('next-1'))?.status).toBe('completed')
    } finally {
      await context.close({ drain: false })
    }
  })

  it('removes records and files of ended tasks after the retention; the download then answers 404', async () => {
    const base = join(dir.path, 'retention')
    // 0.001 h = 3.6 s; the sweep then runs every second. Orphan age 0.02 min: batches older are swept with their tasks.
    const server = await realServer(
      testEnv('B', base, { SERVICE__TASKS__RETENTION_HOURS: '0.001', SERVICE__STORAGE__ORPHAN_UPLOAD_MINUTES: '0.02' }),
    )
    try {
      const batch = await server.call('/api/v1/batch/compress', {
        method: 'POST',
        body: await form({ engine: 'draco' }, [paths.box, paths.box], 'files'),
      })
      expect(batch.status).toBe(200)
      const batchId = String(((await batch.json()) as { batch_id: string }).batch_id)
      const id = await submit(server, paths.box)
      const raw = await waitForTask(server.call, id)
      const record = completedTaskSchema.parse(raw)
      const expiresAt = Date.parse(String(raw.expires_at))
      expect(expiresAt - Date.parse(record.completed_at)).toBeGreaterThanOrEqual(3000)
      expect(expiresAt - Date.parse(record.completed_at)).toBeLessThanOrEqual(4600)
      expect((await (await server.call(`/api/v1/tasks/${id}/download`)).arrayBuffer()).byteLength).toBe(record.output.size_bytes)
      expect(existsSync(join(base, 'files', 'tasks', id, 'output'))).toBe(true)

      const deadline = Date.now() + 20_000
      while ((await server.call(`/api/v1/tasks/${id}`)).status !== 404) {
        if (Date.now() > deadline) throw new Error('task not removed after its retention')
        await sleep(200)
      }
      expect(Date.now()).toBeGreaterThanOrEqual(expiresAt)
      const download = await server.call(`/api/v1/tasks/${id}/download`)
      expect(download.status).toBe(404)
      expect(await download.json()).toEqual({ error: ERROR_TEXTS.taskNotFound(id) })
      expect(existsSync(join(base, 'files', 'tasks', id))).toBe(false)
      expect(await readdir(join(base, 'records', 'tasks')).catch(() => [])).not.toContain(id)
      // The batch follows its tasks out.
      const batchGone = Date.now() + 10_000
      while ((await server.call(`/api/v1/batch/${batchId}`)).status !== 404) {
        if (Date.now() > batchGone) throw new Error('batch not removed after its tasks')
        await sleep(200)
      }
      expect(await readdir(join(base, 'records', 'tasks')).catch(() => [])).toEqual([])
      expect(await readdir(join(base, 'files', 'tasks')).catch(() => [])).toEqual([])
    } finally {
      await server.close()
    }
  })

  it('removes uploads that never got a task record (a process killed mid-request), and only those', async () => {
    const base = join(dir.path, 'orphans')
    // Orphans older than 0.02 min = 1.2 s (the sweep then runs every second).
    const server = await realServer(
      testEnv('A', base, { SERVICE__STORAGE__ORPHAN_UPLOAD_MINUTES: '0.02', SERVICE__TASKS__RETENTION_HOURS: '1' }),
    )
    try {
      // What a killed process leaves: a finished upload without record, and a half-written part file.
      const orphan = join(base, 'files', 'tasks', 'dead-upload-1')
      await mkdir(orphan, { recursive: true })
      await writeFile(join(orphan, 'input'), 'x')
      await writeFile(join(orphan, '.0b7e.part'), 'half')
      const id = await submit(server, paths.box)
      const record = completedTaskSchema.parse(await waitForTask(server.call, id))

      const deadline = Date.now() + 90_000
      while (existsSync(orphan)) {
        if (Date.now() > deadline) throw new Error('orphan upload not removed')
        await sleep(200)
      }
      // The real task keeps its files.
      expect(existsSync(join(base, 'files', 'tasks', id, 'input'))).toBe(true)
      expect((await (await server.call(`/api/v1/tasks/${id}/download`)).arrayBuffer()).byteLength).toBe(record.output.size_bytes)
    } finally {
      await server.close()
    }
  })
})

const hasRedis = await redisAvailable()

describe.skipIf(!available || !hasRedis)('retention on Redis + S3 (role all, bullmq queue)', () => {
  it('removes the record from Redis and both objects from S3; the download then answers 404', async () => {
    const s3 = await startTestS3()
    const prefix = uniquePrefix('retention')
    const dir = await tempDir()
    const server = await realServer(
      testEnv('A', dir.path, {
        SERVICE__STORAGE__DRIVER: 'redis',
        SERVICE__STORAGE__FILES_DRIVER: 's3',
        SERVICE__STORAGE__REDIS__URL: REDIS_URL,
        SERVICE__STORAGE__REDIS__PREFIX: prefix,
        SERVICE__QUEUE__DRIVER: 'bullmq',
        SERVICE__QUEUE__PREFIX: prefix,
        SERVICE__TASKS__RETENTION_HOURS: '0.001',
        ...s3.env,
      }),
    )
    try {
      const response = await server.call('/api/v1/compress', { method: 'POST', body: await form({ engine: 'meshopt' }, [paths.box]) })
      const id = submitResponseSchema.parse(await response.json()).task_id
      completedTaskSchema.parse(await waitForTask(server.call, id))
      const objects = async () => {
        const keys: string[] = []
        for await (const file of server.context.storage.files.list(`tasks/${id}/`)) keys.push(file.key)
        return keys.sort()
      }
      expect(await objects()).toEqual([`tasks/${id}/input`, `tasks/${id}/output`])
      expect(await redisKeys(`${prefix}:records:tasks:${id}`)).toHaveLength(1)

      const deadline = Date.now() + 20_000
      while ((await server.call(`/api/v1/tasks/${id}`)).status !== 404) {
        if (Date.now() > deadline) throw new Error('task not removed after its retention')
        await sleep(200)
      }
      expect((await server.call(`/api/v1/tasks/${id}/download`)).status).toBe(404)
      expect(await objects()).toEqual([])
      expect(await redisKeys(`${prefix}:records:tasks:${id}`)).toEqual([])
    } finally {
      await server.close()
      await s3.close()
      await removeRedisKeys(prefix)
      await dir.remove()
    }
  })
})

describe.skipIf(!available || !hasRedis)('lost jobs (bullmq)', () => {
  it('runs a task whose API process died between writing its record and queuing it', async () => {
    const prefix = uniquePrefix('lost')
    const dir = await tempDir()
    const env = testEnv('A', dir.path, {
      SERVICE__STORAGE__DRIVER: 'redis',
      SERVICE__STORAGE__REDIS__URL: REDIS_URL,
      SERVICE__STORAGE__REDIS__PREFIX: prefix,
      SERVICE__QUEUE__DRIVER: 'bullmq',
      SERVICE__QUEUE__PREFIX: prefix,
    })
    // What the dead process left: the upload and a pending record, but no job in the queue.
    const before = createServiceContext(loadConfig(env))
    const id = 'lost-job-1'
    await before.storage.files.write(`tasks/${id}/input`, new Uint8Array(await readFile(paths.box)))
    await before.storage.taskStore.put({
      task_id: id,
      type: 'compress',
      status: 'pending',
      input_filename: 'box.glb',
      input_size_bytes: 1,
      created_at: new Date().toISOString(),
      job: { inputKey: `tasks/${id}/input`, format: 'glb', options: { engine: 'draco' }, attempts: 0 },
    })
    await before.close({ drain: false })

    const server = await realServer(env)
    try {
      // The start-up sweep queues it again; a worker (role all) runs it.
      completedTaskSchema.parse(await waitForTask(server.call, id, 30_000))
      expect((await server.context.storage.taskStore.get(id))?.job.attempts).toBe(1)
    } finally {
      await server.close()
      await removeRedisKeys(prefix)
      await dir.remove()
    }
  })
})

describe('attempts', () => {
  it('fails a task that was started the maximum number of times without finishing', async () => {
    const context = createServiceContext(loadConfig({ SERVICE__STORAGE__DRIVER: 'memory', SERVICE__TASKS__MAX_ATTEMPTS: '3' }))
    try {
      const task: TaskState = {
        task_id: 'poison-1',
        type: 'compress',
        status: 'processing',
        progress: 30,
        input_filename: 'poison.glb',
        input_size_bytes: 4,
        created_at: new Date().toISOString(),
        started_at: new Date().toISOString(),
        job: { inputKey: 'tasks/poison-1/input', format: 'glb', options: { engine: 'draco' }, attempts: 3 },
      }
      await context.storage.taskStore.put(task)
      await context.processing.runner.run('poison-1')
      const record = failedTaskSchema.parse(await context.storage.taskStore.get('poison-1'))
      expect(record.error).toBe(ERROR_TEXTS.internal('task stopped 3 times without finishing (its worker process ended each time)'))
      expect(typeof (await context.storage.taskStore.get('poison-1'))?.expires_at).toBe('string')
    } finally {
      await context.close({ drain: false })
    }
  })
})

describe('roles', () => {
  it('refuses split roles without a shared queue, and a shared queue on memory storage', async () => {
    await expect(startServer({ env: { SERVICE__SERVER__ROLE: 'api', SERVICE__SERVER__PORT: '0' } })).rejects.toThrow(
      new ConfigError('SERVICE__SERVER__ROLE=api needs SERVICE__QUEUE__DRIVER=bullmq (the local queue lives inside one process)'),
    )
    await expect(
      startServer({ env: { SERVICE__QUEUE__DRIVER: 'bullmq', SERVICE__STORAGE__DRIVER: 'memory', SERVICE__SERVER__PORT: '0' } }),
    ).rejects.toThrow(/needs storage that other processes see/)
  })

  it('reads the cluster settings', () => {
    const config = loadConfig({
      SERVICE__SERVER__ROLE: 'worker',
      SERVICE__STORAGE__DRIVER: 's3',
      SERVICE__QUEUE__DRIVER: 'bullmq',
      SERVICE__TASKS__RETENTION_HOURS: '0.5',
      SERVICE__TASKS__TIMEOUT_SECONDS: '90',
    })
    expect(config.server.role).toBe('worker')
    expect(config.tasks).toMatchObject({ retentionHours: 0.5, timeoutSeconds: 90, maxAttempts: 3 })
    expect(config.queue).toMatchObject({ driver: 'bullmq', redis: { url: '' }, lockSeconds: 30 })
    expect(() => loadConfig({ SERVICE__TASKS__RETENTION_HOURS: 'a day' })).toThrow(
      new ConfigError('SERVICE__TASKS__RETENTION_HOURS: expected a number from 0.0001 to 100000, got "a day"'),
    )
  })
})
