import { execFileSync } from 'node:child_process'
import { open, readdir, readFile, rm, statfs } from 'node:fs/promises'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { ERROR_TEXTS } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sleep } from '../../../test/support/poll.ts'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { throwAwayLicenceEnv } from '../../../test/support/service-env.ts'
import { writeBigMesh } from './support/big-mesh.ts'
import { API_KEY, fetchMos, tempDir, waitForTask } from './support/harness.ts'
import { startMos, stopMos, type MosProcess } from './support/processes.ts'

const { available, paths } = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })
const MB = 1024 * 1024
const DISK_FULL = ERROR_TEXTS.internal('insufficient disk space')

/** Mounts a 24 MB tmpfs at `dir` (we run as root in CI); false, with the reason printed, where we cannot. */
function mountSmallDisk(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true })
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', dir], { stdio: 'pipe' })
    return true
  } catch (error) {
    console.warn(`[skip] disk-full suite: cannot mount a tmpfs here (${(error as Error).message.split('\n')[0]})`)
    return false
  }
}

const freeBytes = async (dir: string) => {
  const info = await statfs(dir)
  return info.bavail * info.bsize
}

/** Writes `path` until the disk refuses (or `bytes` are written); resolves with the bytes written. */
async function ballast(path: string, bytes = Infinity): Promise<number> {
  const file = await open(path, 'a')
  let written = 0
  try {
    for (const size of [MB, 4096]) {
      const chunk = new Uint8Array(size)
      while (written + size <= bytes) {
        try {
          await file.write(chunk)
          written += size
        } catch {
          break
        }
      }
    }
  } finally {
    await file.close()
  }
  return written
}

describe.skipIf(!available)('a full disk (fs storage on a 24 MB tmpfs)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let disk: string
  let mounted = false
  let server: MosProcess
  let bigMesh: string
  const submit = async (path: string, file: Uint8Array, name: string, fields: Record<string, string>) => {
    const form = new FormData()
    for (const [key, value] of Object.entries(fields)) form.set(key, value)
    form.set('file', new Blob([new Uint8Array(file)]), name)
    const response = await fetchMos(server, `/api/v1${path}`, { method: 'POST', body: form })
    return { status: response.status, body: (await response.json()) as { error?: string; task_id?: string } }
  }
  const settled = (id: string, timeoutMs = 60_000) => waitForTask((path) => fetchMos(server, path), id, timeoutMs)
  const taskFiles = async () => (await readdir(join(disk, 'files', 'tasks'), { recursive: true }).catch(() => [] as string[])).map(String)

  beforeAll(async () => {
    dir = await tempDir()
    disk = join(dir.path, 'disk')
    mounted = mountSmallDisk(disk)
    bigMesh = join(dir.path, 'mesh.glb')
    await writeBigMesh(bigMesh, 260)
    if (!mounted) return
    server = await startMos('disk-full', {
      SERVICE__AUTH__API_KEYS: API_KEY,
      SERVICE__SERVER__HOST: '127.0.0.1',
      SERVICE__SERVER__PORT: '0',
      SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '1000000',
      SERVICE__STORAGE__FS__BASE: disk,
      SERVICE__ENGINES__THREADS: '1',
      SERVICE__LIMITS__MAX_FILE_SIZE_MB: '100',
      ...throwAwayLicenceEnv(),
    })
  }, 120_000)
  afterAll(async () => {
    await stopMos(server, 5000)
    if (mounted) execFileSync('umount', ['-l', disk])
    // The last-resort handlers in main.ts are never reached by a full disk.
    if (server) expect(server.output()).not.toMatch(/uncaught exception|unhandled rejection/)
    await dir?.remove()
  })

  it('during an upload: 500 "internal error: insufficient disk space", the partial file removed, the service keeps serving', async ({
    skip,
  }) => {
    if (!mounted) skip()
    const before = await freeBytes(disk)
    const answer = await submit('/compress', new Uint8Array(28 * MB), 'huge.glb', { engine: 'draco' })
    expect(answer).toEqual({ status: 500, body: { error: DISK_FULL } })
    expect(server.child.exitCode).toBeNull()
    expect(await taskFiles()).toEqual([])
    expect(await freeBytes(disk)).toBeGreaterThanOrEqual(before - 64 * 1024)
    // Still serving: the next upload runs to the end.
    const next = await submit('/compress', await readFile(paths.box), 'box.glb', { engine: 'draco' })
    expect(next.status).toBe(200)
    expect((await settled(next.body.task_id!)).status).toBe('completed')
  })

  it('during the result write: the task fails with the disk text, nothing of its result is left', async ({ skip }) => {
    if (!mounted) skip()
    const input = await readFile(bigMesh)
    // Room for the upload and its records, not for the OBJ text the conversion writes (several times the GLB).
    const filler = join(disk, 'ballast-result')
    await ballast(filler, (await freeBytes(disk)) - input.length - 2 * MB)
    try {
      const answer = await submit('/convert', input, 'mesh.glb', { target_format: 'obj' })
      expect(answer.status).toBe(200)
      const task = await settled(answer.body.task_id!)
      expect(task).toMatchObject({ status: 'failed', error: DISK_FULL })
      // Neither a half result at the output key nor the part file the engine thread wrote it under.
      const id = answer.body.task_id!
      expect((await taskFiles()).filter((path) => path.startsWith(`${id}/`))).toEqual([`${id}/input`])
      expect(server.child.exitCode).toBeNull()
    } finally {
      await rm(filler, { force: true })
    }
  })

  it('during a record write: the write is retried until space returns, and the task ends with a state', async ({ skip }) => {
    if (!mounted) skip()
    const input = await readFile(bigMesh)
    const first = await submit('/compress', input, 'first.glb', { engine: 'draco' })
    const second = await submit('/compress', input, 'second.glb', { engine: 'draco' })
    expect([first.status, second.status]).toEqual([200, 200])
    // One engine thread: the second waits while the first runs. Fill the disk to the last byte now;
    // the first task's end and the second one's start both have records to write.
    const filler = join(disk, 'ballast-records')
    const logged = server.output().length
    await ballast(filler)
    try {
      const deadline = Date.now() + 30_000
      while (!/writing its record failed/.test(server.output().slice(logged)) && Date.now() < deadline) await sleep(100)
      expect(server.output().slice(logged)).toMatch(/writing its record failed \(insufficient disk space\); retrying/)
      expect(server.child.exitCode).toBeNull()
      expect((await fetch(`${server.url}/api/v1/health`)).status).toBe(200)
    } finally {
      await rm(filler, { force: true })
    }
    for (const id of [first.body.task_id!, second.body.task_id!]) {
      const task = await settled(id)
      // Whichever write met the full disk: the task ends completed, or failed naming the disk.
      if (task.status === 'failed') expect(task.error).toBe(DISK_FULL)
      else expect(task.status).toBe('completed')
    }
  }, 90_000)
})
