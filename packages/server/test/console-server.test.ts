import { readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { corpusFiles, shared } from '../../../test/support/corpus.ts'
import { until } from '../../../test/support/poll.ts'
import { form, tempDir } from './support/harness.ts'
import { readEventsUntil, signIn, type Fetcher } from './support/console.ts'
import { startMos, stopMos, type MosProcess } from './support/processes.ts'

const { available, paths } = corpusFiles({ knight: shared('glb', 'chr_knight.glb') })

/** What `npm start` is given on a fresh machine: nothing but where to listen and keep its data. */
const startEnv = (dataDir: string) => ({
  SERVICE__SERVER__PORT: '0',
  SERVICE__SERVER__HOST: '127.0.0.1',
  SERVICE__STORAGE__FS__BASE: dataDir,
  SERVICE__ENGINES__THREADS: '1',
  SERVICE__ENGINES__PRESTART: 'false',
  SERVICE__LOG__LEVEL: 'warn',
})

describe.skipIf(!available)('the console on the compiled server, as npm start runs it', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let mos: MosProcess | undefined
  let password = ''
  const fetcher: Fetcher = (path, init) => fetch(`${mos!.url}${path}`, init)

  beforeAll(async () => {
    dir = await tempDir()
    mos = await startMos('console', startEnv(join(dir.path, 'data')), 60_000, { cwd: dir.path })
  }, 90_000)
  afterAll(async () => {
    await stopMos(mos, 10_000)
    await dir?.remove()
  }, 60_000)

  it('prints a development console password, kept beside the data with mode 0600, that signs in', async () => {
    // The lines after the address are written right after it: read once they are there.
    const line = /development console password: (\S+) \(sign in at http:\/\/127\.0\.0\.1:(\d+)\/console\/;/
    const printed = line.exec(
      await until(
        () => mos!.output(),
        (text) => line.test(text),
        30_000,
      ),
    )
    expect(printed, mos!.output()).not.toBeNull()
    password = printed![1]!
    expect(Number(printed![2])).toBe(mos!.port)
    const file = join(dir.path, 'data', 'dev-console-password')
    expect((await readFile(file, 'utf8')).trim()).toBe(password)
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    const wrong = await fetcher('/auth/login', { method: 'POST', body: JSON.stringify({ password: `${password}-not` }) })
    expect([wrong.status, await wrong.json()]).toEqual([401, { error: 'wrong password' }])
    // The API key printed beside it opens the API only.
    const key = /development API key: (\S+) /.exec(mos!.output())![1]!
    expect((await fetcher('/admin/tasks', { headers: { 'X-API-Key': key } })).status).toBe(401)
    const admin = await signIn(fetcher, password)
    expect((await admin.call('/auth/me')).status).toBe(200)
  })

  it('submits a real model through /admin/submit/compress, follows it on /events to completed, downloads it', async () => {
    const admin = await signIn(fetcher, password)
    const submitted = await admin.call('/admin/submit/compress', {
      method: 'POST',
      body: await form({ engine: 'draco', level: 10 }, [paths.knight]),
    })
    expect(submitted.status).toBe(200)
    const { task_id } = (await submitted.json()) as { task_id: string }
    const events = await admin.call(`/events?task=${task_id}`)
    expect(events.status).toBe(200)
    const { match, seen } = await readEventsUntil(events, (event) => JSON.parse(event.data).status === 'completed')
    const statuses = seen.map((event) => (JSON.parse(event.data) as { status: string }).status)
    expect(statuses.at(-1)).toBe('completed')
    const record = JSON.parse(match.data) as { owner: string; output: { size_bytes: number; filename: string } }
    expect(record.owner).toBe('console:admin')
    expect(record.output.filename).toBe('chr_knight.draco.glb')

    const download = await admin.call(`/admin/tasks/${task_id}/download`)
    expect(download.status).toBe(200)
    expect(download.headers.get('content-disposition')).toContain('chr_knight.draco.glb')
    const bytes = new Uint8Array(await download.arrayBuffer())
    expect(new TextDecoder().decode(bytes.slice(0, 4))).toBe('glTF')
    expect(bytes.length).toBe(record.output.size_bytes)
    expect(bytes.length).toBeLessThan((await stat(paths.knight)).size)
    // The same task through the API with the development key is not the key's: 404.
    const key = /development API key: (\S+) /.exec(mos!.output())![1]!
    expect((await fetcher(`/api/v1/tasks/${task_id}`, { headers: { 'X-API-Key': key } })).status).toBe(404)
  }, 180_000)

  it('keeps a session across a restart (sessions live in the records store)', async () => {
    const admin = await signIn(fetcher, password)
    await stopMos(mos, 30_000)
    mos = await startMos('console-again', startEnv(join(dir.path, 'data')), 60_000, { cwd: dir.path })
    // The same development password is printed again: it was kept.
    const again = await until(
      () => mos!.output(),
      (text) => text.includes('development console password: '),
      30_000,
    )
    expect(again).toContain(`development console password: ${password} `)
    expect((await admin.call('/auth/me')).status).toBe(200)
    const listed = (await (await admin.call('/admin/tasks')).json()) as { tasks: { owner: string; status: string }[] }
    expect(listed.tasks.map((task) => [task.owner, task.status])).toEqual([['console:admin', 'completed']])
  }, 120_000)
})
