import { readFile } from 'node:fs/promises'
import { CANCELLED_ERROR, ERROR_TEXTS, submitResponseSchema, taskListSchema, taskRecordSchema, type TaskRecord } from '@mos/sdk/contract'
import { expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../../test/support/corpus.ts'
import { API_KEY, fetchMos, form, waitForTask } from './harness.ts'
import type { MosProcess } from './processes.ts'

export const { available: taskControlInputs, paths } = corpusFiles({
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
})
/** The second key of the test services, for isolation between keys. */
export const OTHER_KEY = 'second-key'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** CPU seconds a process (its engine threads included) has used, from /proc (Linux). */
async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

export interface TaskControlDeployment {
  /** Where clients send requests. */
  api: () => MosProcess
  /** The processes running engine threads. */
  workers: () => MosProcess[]
  /** Task files left in the file store. */
  filesOf: (taskId: string) => Promise<string[]>
}

/** One suite, run on a single process and on the Redis + BullMQ + S3 cluster. */
export function describeTaskControl(deployment: TaskControlDeployment, bigMesh: () => string) {
  const call = (path: string, init: RequestInit = {}, key: string | null = API_KEY) => fetchMos(deployment.api(), path, init, key)
  const submit = async (file: string, key = API_KEY, fields: Record<string, string | number> = { engine: 'draco' }) => {
    const response = await call('/api/v1/compress', { method: 'POST', body: await form(fields, [file]) }, key)
    expect(response.status).toBe(200)
    return submitResponseSchema.parse(await response.json()).task_id
  }
  const record = async (id: string, key = API_KEY) => taskRecordSchema.parse(await (await call(`/api/v1/tasks/${id}`, {}, key)).json())
  const waitFor = async (id: string, done: (task: TaskRecord) => boolean, timeoutMs = 60_000) => {
    for (const deadline = Date.now() + timeoutMs; ; await sleep(50)) {
      const task = await record(id)
      if (done(task)) return task
      if (Date.now() > deadline) throw new Error(`task ${id} still ${task.status}`)
    }
  }
  const cancel = (id: string, key = API_KEY) => call(`/api/v1/tasks/${id}/cancel`, { method: 'POST' }, key)
  const list = async (query = '', key = API_KEY) => {
    const response = await call(`/api/v1/tasks${query}`, {}, key)
    expect(response.status).toBe(200)
    return taskListSchema.parse(await response.json())
  }

  it('cancels a processing task in its engine thread and a pending one before it runs; the thread is free afterwards', async () => {
    const running = await submit(bigMesh(), API_KEY, { engine: 'draco', level: 10 })
    const waiting = await submit(paths.box)
    await waitFor(running, (task) => task.status === 'processing')

    const cancelledWaiting = await cancel(waiting)
    expect(cancelledWaiting.status).toBe(200)
    expect(await cancelledWaiting.json()).toMatchObject({ task_id: waiting, status: 'failed', error: CANCELLED_ERROR })

    const cpuBefore = await Promise.all(deployment.workers().map((worker) => cpuSeconds(worker.pid)))
    const response = await cancel(running)
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ task_id: running, status: 'failed', error: CANCELLED_ERROR })
    // The engine thread stops: the processes running engines go quiet (generous bounds: a second
    // for the abort to land, then under half a core over the next second).
    await sleep(1000)
    const cpuMid = await Promise.all(deployment.workers().map((worker) => cpuSeconds(worker.pid)))
    await sleep(1000)
    const cpuAfter = await Promise.all(deployment.workers().map((worker) => cpuSeconds(worker.pid)))
    const busiest = Math.max(...cpuAfter.map((after, i) => after - cpuMid[i]!))
    expect(busiest, `CPU seconds in the second after the cancel settled (before it: ${cpuBefore.join(', ')})`).toBeLessThan(0.5)

    // Both stay cancelled: the pending one never ran, the running one kept no result.
    for (const id of [running, waiting]) {
      expect(await record(id)).toMatchObject({ status: 'failed', error: CANCELLED_ERROR })
      expect(await deployment.filesOf(id)).not.toContain(`tasks/${id}/output`)
    }
    expect((await call(`/api/v1/tasks/${running}/download`)).status).toBe(409)
    // Cancelling again answers the same record; a completed task cannot be cancelled.
    expect(await (await cancel(running)).json()).toMatchObject({ status: 'failed', error: CANCELLED_ERROR })
    const next = await submit(paths.box)
    expect(await waitForTask(call, next)).toMatchObject({ status: 'completed' })
    const refused = await cancel(next)
    expect(refused.status).toBe(409)
    expect(await refused.json()).toEqual({ error: `task ${next} is completed: nothing to cancel` })
  }, 120_000)

  it('deletes a task: record and files gone, 404 afterwards; a running task is cancelled first', async () => {
    const done = await submit(paths.box)
    await waitForTask(call, done)
    expect(await deployment.filesOf(done)).toEqual([`tasks/${done}/input`, `tasks/${done}/output`])
    const deleted = await call(`/api/v1/tasks/${done}`, { method: 'DELETE' })
    expect(deleted.status).toBe(200)
    expect(await deleted.json()).toEqual({ task_id: done, deleted: true })
    expect(await deployment.filesOf(done)).toEqual([])
    for (const [path, method] of [
      [`/api/v1/tasks/${done}`, 'GET'],
      [`/api/v1/tasks/${done}/download`, 'GET'],
      [`/api/v1/tasks/${done}`, 'DELETE'],
      [`/api/v1/tasks/${done}/cancel`, 'POST'],
    ] as const) {
      const response = await call(path, { method })
      expect(response.status, `${method} ${path}`).toBe(404)
      expect(await response.json()).toEqual({ error: ERROR_TEXTS.taskNotFound(done) })
    }

    const running = await submit(bigMesh(), API_KEY, { engine: 'draco', level: 10 })
    await waitFor(running, (task) => task.status === 'processing')
    expect((await call(`/api/v1/tasks/${running}`, { method: 'DELETE' })).status).toBe(200)
    expect((await call(`/api/v1/tasks/${running}`)).status).toBe(404)
    // The stopped run writes nothing back: the task stays gone, and the next one runs.
    const next = await submit(paths.box)
    expect(await waitForTask(call, next)).toMatchObject({ status: 'completed' })
    expect((await call(`/api/v1/tasks/${running}`)).status).toBe(404)
    expect(await deployment.filesOf(running)).toEqual([])
    expect((await list()).tasks.map((task) => task.task_id)).not.toContain(running)
  }, 120_000)

  it('answers 404 for every task and batch endpoint to a key that did not make the task, and leaves it alone', async () => {
    const id = await submit(paths.box)
    await waitForTask(call, id)
    const batch = await call('/api/v1/batch/compress', { method: 'POST', body: await form({ engine: 'meshopt' }, [paths.box], 'files') })
    const { batch_id } = (await batch.json()) as { batch_id: string }
    for (const [path, method, error] of [
      [`/api/v1/tasks/${id}`, 'GET', ERROR_TEXTS.taskNotFound(id)],
      [`/api/v1/tasks/${id}/download`, 'GET', ERROR_TEXTS.taskNotFound(id)],
      [`/api/v1/tasks/${id}/cancel`, 'POST', ERROR_TEXTS.taskNotFound(id)],
      [`/api/v1/tasks/${id}`, 'DELETE', ERROR_TEXTS.taskNotFound(id)],
      [`/api/v1/batch/${batch_id}`, 'GET', ERROR_TEXTS.batchNotFound(batch_id)],
    ] as const) {
      const response = await call(path, { method }, OTHER_KEY)
      expect(response.status, `${method} ${path}`).toBe(404)
      expect(await response.json()).toEqual({ error })
    }
    expect((await list(`?batch_id=${batch_id}`, OTHER_KEY)).tasks).toEqual([])
    expect(await record(id)).toMatchObject({ status: 'completed' })
    expect((await call(`/api/v1/batch/${batch_id}`)).status).toBe(200)
  }, 60_000)

  it('lists the caller’s tasks newest first, filtered by status, type and batch, a page at a time', async () => {
    const own = [await submit(paths.box), await submit(paths.engine, API_KEY, { engine: 'meshopt' })]
    const repair = await call('/api/v1/repair', { method: 'POST', body: await form({}, [paths.box]) })
    own.push(submitResponseSchema.parse(await repair.json()).task_id)
    const theirs = await submit(paths.box, OTHER_KEY)
    for (const id of own) await waitForTask(call, id)
    await waitForTask((path) => call(path, {}, OTHER_KEY), theirs)

    // Every page of two, followed to the end, gives each of the key's tasks once, newest first.
    const seen: TaskRecord[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page = await list(`?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
      expect(page.tasks.length).toBeLessThanOrEqual(2)
      seen.push(...page.tasks)
      cursor = page.next_cursor
      pages++
    } while (cursor && pages < 100)
    const ids = seen.map((task) => task.task_id)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids.slice(0, 3)).toEqual([...own].reverse())
    expect(ids).not.toContain(theirs)
    const times = seen.map((task) => task.created_at)
    expect(times).toEqual([...times].sort().reverse())
    expect((await list('', OTHER_KEY)).tasks.map((task) => task.task_id)).toEqual([theirs])

    const repairs = await list('?type=repair')
    expect(repairs.tasks.map((task) => task.task_id)).toContain(own[2])
    expect(repairs.tasks.every((task) => 'type' in task && task.type === 'repair')).toBe(true)
    const cancelled = await list('?status=failed')
    expect(cancelled.tasks.length).toBeGreaterThan(0)
    expect(cancelled.tasks.every((task) => task.status === 'failed')).toBe(true)
    const batch = await call('/api/v1/batch/compress', {
      method: 'POST',
      body: await form({ engine: 'draco' }, [paths.box, paths.engine], 'files'),
    })
    const submitted = (await batch.json()) as { batch_id: string; tasks: { task_id: string }[] }
    const batchList = await list(`?batch_id=${submitted.batch_id}`)
    expect(batchList.tasks.map((task) => task.task_id).sort()).toEqual(submitted.tasks.map((task) => task.task_id).sort())
    expect(batchList.next_cursor).toBeNull()
  }, 120_000)

  it('refuses bad list parameters with the contract’s invalid-field text', async () => {
    for (const [query, field, rule] of [
      ['?limit=0', 'limit', 'must be an integer from 1 to 100'],
      ['?limit=101', 'limit', 'must be an integer from 1 to 100'],
      ['?status=done', 'status', 'must be one of pending, processing, completed, failed'],
      ['?type=zip', 'type', 'must be one of compress, convert, repair, diagnose, texture_optimize, texture_ktx2'],
      ['?cursor=bm90LWEtY3Vyc29y', 'cursor', 'must be a next_cursor from an earlier page'],
    ]) {
      const response = await call(`/api/v1/tasks${query}`)
      expect(response.status, query).toBe(400)
      expect(await response.json()).toEqual({ error: ERROR_TEXTS.invalidField(field!, rule!) })
    }
    expect((await call('/api/v1/tasks', {}, null)).status).toBe(401)
  })
}
