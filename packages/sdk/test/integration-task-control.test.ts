import { spawn } from 'node:child_process'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { createClient } from '../src/node.ts'
import { ConflictError, ERROR_TEXTS, NotFoundError, type TaskRecord } from '../src/index.ts'
import { closedPort } from './support/closed-port.ts'
import { API_KEY, loadStartServer, startRealServer } from './support/real-server.ts'

const MOS = resolve(dirname(fileURLToPath(import.meta.url)), '../bin/mos.mjs')
const corpus = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })
const server = await loadStartServer()

/** Runs the real `mos` binary. */
function mos(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [MOS, ...args], { env: { ...process.env, ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', fail)
    child.on('close', (code) => done({ code, stdout, stderr }))
  })
}

describe.skipIf(!server.startServer || !corpus.available)('task control from the SDK and the mos CLI (real server)', () => {
  let running: Awaited<ReturnType<typeof startRealServer>>
  let client: ReturnType<typeof createClient<'A'>>
  let env: Record<string, string>
  const ids: string[] = []

  beforeAll(async () => {
    running = await startRealServer(server.startServer!, 'A')
    client = createClient({ baseURL: running.url, apiKey: API_KEY, variant: 'A' })
    env = { MOS_BASE_URL: running.url, MOS_API_KEY: API_KEY }
    for (let i = 0; i < 3; i++) ids.push((await client.compressAndWait({ file: corpus.paths.box, engine: 'meshopt' })).task_id)
  }, 60_000)
  afterAll(async () => {
    await running?.close()
  })

  it('listTasks iterates every page, newest first, with the filters typed', async () => {
    const pages: TaskRecord[][] = []
    for await (const page of client.listTasks({ limit: 2, status: 'completed', type: 'compress' })) pages.push(page.tasks)
    expect(pages.map((page) => page.length)).toEqual([2, 1])
    expect(pages.flat().map((task) => task.task_id)).toEqual([...ids].reverse())
  })

  it('cancelTask and deleteTask answer typed records and the SDK errors', async () => {
    await expect(client.cancelTask(ids[0]!)).rejects.toBeInstanceOf(ConflictError)
    expect(await client.deleteTask(ids[0]!)).toEqual({ task_id: ids[0], deleted: true })
    await expect(client.getTask(ids[0]!)).rejects.toBeInstanceOf(NotFoundError)
    await expect(client.deleteTask(ids[0]!)).rejects.toBeInstanceOf(NotFoundError)
  })

  it('mos tasks list | cancel | delete', async () => {
    const listed = await mos(['tasks', 'list', '--json'], env)
    expect(listed.code, listed.stderr).toBe(0)
    expect((JSON.parse(listed.stdout) as TaskRecord[]).map((task) => task.task_id)).toEqual([ids[2], ids[1]])
    const plain = await mos(['tasks', 'list', '--max', '1'], env)
    expect(plain.stdout).toMatch(new RegExp(`^${ids[2]}\\tcompleted\\tcompress\\t\\S+Z\\n$`))

    const refused = await mos(['tasks', 'cancel', ids[1]!], env)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(`task ${ids[1]} is completed: nothing to cancel`)
    const deleted = await mos(['tasks', 'delete', ids[1]!, ids[2]!], env)
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(deleted.stdout).toBe(`${ids[1]}\tdeleted\n${ids[2]}\tdeleted\n`)
    expect((await mos(['tasks', 'list', '--json'], env)).stdout.trim()).toBe('[]')
    const usage = await mos(['tasks', 'cancel'], env)
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain('needs at least one task id')
  })

  it('mos tasks --json prints one document whatever the outcome, the words on stderr, the exit status as without', async () => {
    const refusal = (error: string) => ({ ok: false, error, results: [] })
    const wrongKey = await mos(['tasks', 'list', '--json'], { ...env, MOS_API_KEY: 'not-the-key' })
    expect([wrongKey.code, JSON.parse(wrongKey.stdout)]).toEqual([1, refusal(ERROR_TEXTS.unauthorized())])
    expect(wrongKey.stderr).toBe(`mos: ${ERROR_TEXTS.unauthorized()}\n`)
    const down = `http://127.0.0.1:${await closedPort()}`
    const away = await mos(['tasks', 'list', '--json'], { ...env, MOS_BASE_URL: down })
    const unreachable = `connection to ${down} failed: connection refused (ECONNREFUSED)`
    expect([away.code, JSON.parse(away.stdout)]).toEqual([1, refusal(unreachable)])
    expect(away.stderr).toBe(`mos: ${unreachable}\n`)

    const { task_id } = await client.compressAndWait({ file: corpus.paths.box, engine: 'meshopt' })
    const mixed = await mos(['tasks', 'delete', 'no-such-task', task_id, '--json'], env)
    expect(mixed.code).toBe(1)
    expect(JSON.parse(mixed.stdout)).toEqual({
      ok: false,
      results: [
        { input: 'no-such-task', ok: false, error: ERROR_TEXTS.taskNotFound('no-such-task') },
        { input: task_id, ok: true, result: { task_id, deleted: true } },
      ],
    })
    expect(mixed.stderr).toBe(`mos: no-such-task: ${ERROR_TEXTS.taskNotFound('no-such-task')}\n`)
    const usage = await mos(['tasks', 'list', '--status', 'done', '--json'], env)
    const why = '--status must be one of pending, processing, completed, failed, not "done"'
    expect([usage.code, JSON.parse(usage.stdout)]).toEqual([2, refusal(why)])
    expect(usage.stderr).toBe(`mos: ${why}\nRun \`mos tasks --help\` for usage.\n`)
  })
})
