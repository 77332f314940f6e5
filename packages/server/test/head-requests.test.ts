import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { submitResponseSchema, type Variant } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { corpusFiles, shared } from '../../../test/support/corpus.ts'
import { fetchMos, form, tempDir, testEnv, VARIANTS, waitForTask } from './support/harness.ts'
import { startMosGroup, stopMosGroup, type MosProcess } from './support/processes.ts'

const { available, paths } = corpusFiles({ cow: shared('obj', 'cow.obj') })

/** Headers that differ between any two answers (time, request id, the rate limit's count), and the framing of a body. */
const VOLATILE = new Set([
  'date',
  'x-request-id',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'connection',
])
const stable = (headers: Headers) => Object.fromEntries([...headers].filter(([name]) => !VOLATILE.has(name)))

describe.skipIf(!available)('HEAD wherever GET is served, against the compiled server', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  const servers = new Map<Variant, MosProcess>()

  beforeAll(async () => {
    dir = await tempDir()
    const started = await startMosGroup(VARIANTS.map((variant) => [`head-${variant}`, testEnv(variant, join(dir.path, variant))]))
    for (const [index, variant] of VARIANTS.entries()) servers.set(variant, started[index]!)
  }, 120_000)
  afterAll(async () => {
    await stopMosGroup([...servers.values()])
    await dir?.remove()
  })

  describe.each(VARIANTS)('variant %s', (variant) => {
    const server = () => servers.get(variant)!
    /** GET and HEAD of one path: same status and headers, and HEAD has no body. */
    const compare = async (path: string, key?: null) => {
      const get = await fetchMos(server(), path, {}, key)
      const getBody = await get.arrayBuffer()
      const head = await fetchMos(server(), path, { method: 'HEAD' }, key)
      expect(head.status, `HEAD ${path}`).toBe(get.status)
      expect(stable(head.headers), `HEAD ${path}`).toEqual(stable(get.headers))
      expect((await head.arrayBuffer()).byteLength, `HEAD ${path}`).toBe(0)
      return { get, getBody, head }
    }

    it('answers the status and headers of GET, with no body, on the contract routes and their errors', async () => {
      const answers = await Promise.all([
        compare('/api/v1/health', null),
        compare('/api/v1/capabilities'),
        compare('/api/v1/capabilities', null),
        compare('/api/v1/license/info'),
        compare('/api/v1/tasks/no-such-task'),
        compare('/api/v1/tasks/no-such-task/download'),
        compare('/api/v1/batch/no-such-batch'),
        compare('/api/v1/openapi.json', null),
      ])
      expect(answers.map(({ head }) => head.status)).toEqual([200, 200, 401, 200, 404, 404, 404, 200])
      if (variant === 'A') expect(answers[1]!.head.headers.get('x-ratelimit-limit')).toBe(answers[1]!.get.headers.get('x-ratelimit-limit'))
      // A path served only with POST still refuses HEAD, and says what it takes.
      const post = await fetchMos(server(), '/api/v1/compress', { method: 'HEAD' })
      expect(post.status).toBe(405)
      expect(post.headers.get('allow')).toBe('POST')
    })

    it("a task, its events and its download: the download's length and name without its bytes; 404 once the file is gone", async () => {
      const submitted = await fetchMos(server(), '/api/v1/compress', { method: 'POST', body: await form({ engine: 'draco' }, [paths.cow]) })
      expect(submitted.status).toBe(200)
      const { task_id } = submitResponseSchema.parse(await submitted.json())
      const record = await waitForTask((path) => fetchMos(server(), path), task_id)
      expect(record.status).toBe('completed')
      await compare(`/api/v1/tasks/${task_id}`)
      const events = await compare(`/api/v1/tasks/${task_id}/events`)
      expect(events.head.headers.get('content-type')).toMatch(/^text\/event-stream/)
      const download = await compare(`/api/v1/tasks/${task_id}/download`)
      expect(download.head.status).toBe(200)
      expect(download.head.headers.get('content-length')).toBe(String(download.getBody.byteLength))
      expect(download.head.headers.get('content-disposition')).toBe(`attachment; filename="cow.draco.glb"; filename*=UTF-8''cow.draco.glb`)
      // The file gone (as after a disk clean-up): HEAD asks the store and answers GET's 404.
      await rm(join(dir.path, variant, 'files', 'tasks', task_id, 'output'), { recursive: true, force: true })
      const gone = await compare(`/api/v1/tasks/${task_id}/download`)
      expect(gone.head.status).toBe(404)
    })
  })
})
