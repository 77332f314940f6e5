import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ERROR_TEXTS, LIMIT_EXCEEDED_STATUS, submitResponseSchema, type TaskRecord, type Variant } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { corpusFiles, shared } from '../../../test/support/corpus.ts'
import { fetchMos, tempDir, testEnv, VARIANTS, waitForTask } from './support/harness.ts'
import { startMosGroup, stopMosGroup, type MosProcess } from './support/processes.ts'

const { available, paths } = corpusFiles({ cow: shared('obj', 'cow.obj') })

/** One raw form part: its Content-Disposition parameters as bytes on the wire (UTF-8 kept raw), and its body. */
interface RawPart {
  disposition: string
  body: Uint8Array | string
}

/** A multipart body written byte for byte, for what FormData cannot send (raw `filename*`, repeated parts). */
function rawForm(parts: RawPart[]): { body: Uint8Array<ArrayBuffer>; contentType: string } {
  const boundary = `----mos-raw-${Math.random().toString(16).slice(2)}`
  const chunks: Buffer[] = []
  for (const part of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; ${part.disposition}\r\n\r\n`, 'utf8'))
    chunks.push(typeof part.body === 'string' ? Buffer.from(part.body, 'utf8') : Buffer.from(part.body))
    chunks.push(Buffer.from('\r\n'))
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { body: new Uint8Array(Buffer.concat(chunks)), contentType: `multipart/form-data; boundary=${boundary}` }
}

const field = (name: string, value: string): RawPart => ({ disposition: `name="${name}"`, body: value })

const MB = 1024 * 1024
/** The file size limit of the services under test (the trial's 50 MB, capped by the operator). */
const LIMIT_MB = 8

/** A compress form with a file of `bytes` zeros, sent as a stream of unknown length (chunked), as an SDK streaming a file sends it. */
function streamedForm(bytes: number): RequestInit {
  const data = new FormData()
  data.append('engine', 'draco')
  data.append('file', new File([new Uint8Array(bytes)], 'big.glb'))
  const encoded = new Response(data)
  return { body: encoded.body, headers: { 'Content-Type': encoded.headers.get('content-type')! }, duplex: 'half' } as RequestInit
}

describe.skipIf(!available)('uploads against the compiled server', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  const servers = new Map<Variant, MosProcess>()
  let cow: Uint8Array

  beforeAll(async () => {
    dir = await tempDir()
    cow = new Uint8Array(await readFile(paths.cow))
    // The trial (no licence): its used files are what an accepted submit costs.
    const env = (variant: Variant) => testEnv(variant, join(dir.path, variant), { SERVICE__LIMITS__MAX_FILE_SIZE_MB: String(LIMIT_MB) })
    const started = await startMosGroup(VARIANTS.map((variant) => [`uploads-${variant}`, env(variant)]))
    for (const [index, variant] of VARIANTS.entries()) servers.set(variant, started[index]!)
  }, 120_000)
  afterAll(async () => {
    await stopMosGroup([...servers.values()])
    for (const server of servers.values()) expect(server.output()).not.toMatch(/uncaught exception|unhandled rejection/)
    await dir?.remove()
  })

  const server = (variant: Variant) => servers.get(variant)!
  const post = (
    variant: Variant,
    path: string,
    body: FormData | { body: Uint8Array<ArrayBuffer>; contentType: string },
    headers: Record<string, string> = {},
  ) =>
    fetchMos(server(variant), `/api/v1${path}`, {
      method: 'POST',
      body: body instanceof FormData ? body : body.body,
      headers: body instanceof FormData ? headers : { ...headers, 'Content-Type': body.contentType },
    })
  /** Tasks the service knows of (the list endpoint, a Mos extension): every task folder must belong to one. */
  const countTasks = async (variant: Variant) =>
    ((await (await fetchMos(server(variant), '/api/v1/tasks?limit=100')).json()) as { tasks: unknown[] }).tasks.length
  const task = async (variant: Variant, id: string) =>
    (await (await fetchMos(server(variant), `/api/v1/tasks/${id}`)).json()) as TaskRecord & { input_filename: string }

  const usedTrialFiles = async (variant: Variant) =>
    ((await (await fetchMos(server(variant), '/api/v1/license/info')).json()) as { trial: { used_files: number } }).trial.used_files

  describe.each(VARIANTS)('variant %s', (variant) => {
    it('refuses an empty file as a missing one, before a task or a trial file is counted, on every route and in a batch', async () => {
      const before = await usedTrialFiles(variant)
      const empty = () => new File([], 'e.glb')
      const single = new FormData()
      single.append('engine', 'draco')
      single.append('file', empty())
      const refusals = [await post(variant, '/compress', single)]
      const repair = new FormData()
      repair.append('file', empty())
      refusals.push(await post(variant, '/repair', repair))
      // A raw part with no bytes at all between its headers and the boundary.
      refusals.push(
        await post(
          variant,
          '/convert',
          rawForm([field('target_format', 'glb'), { disposition: 'name="file"; filename="e.glb"', body: '' }]),
        ),
      )
      for (const response of refusals) {
        expect(response.status).toBe(400)
        expect(await response.json()).toEqual({ error: ERROR_TEXTS.missingField('file') })
      }
      const batch = new FormData()
      batch.append('engine', 'meshopt')
      batch.append('files', new File([cow as Uint8Array<ArrayBuffer>], 'cow.obj'))
      batch.append('files', empty())
      const refused = await post(variant, '/batch/compress', batch)
      expect(refused.status).toBe(400)
      expect(await refused.json()).toEqual({ error: ERROR_TEXTS.missingField('files') })
      expect(await usedTrialFiles(variant)).toBe(before)
      // Nothing of the refused requests is left in the data folder.
      expect(await readdir(join(dir.path, variant, 'files', 'tasks')).catch(() => [])).toHaveLength(await countTasks(variant))
    })

    it("reports a streamed file's real size up to a quarter over the limit, 'over' what it read past that; readable by Node's fetch, nothing kept", async () => {
      const status = LIMIT_EXCEEDED_STATUS[variant]
      const send = (init: RequestInit) => fetchMos(server(variant), '/api/v1/compress', { method: 'POST', ...init })
      // 9.5 MB on 8: read to its end (without storing it), so the figure is the file's.
      const near = await send(streamedForm(9.5 * MB))
      expect(near.status).toBe(status)
      expect(await near.json()).toEqual({ error: ERROR_TEXTS.fileTooLarge(9.5, LIMIT_MB) })
      // 40 MB on 8: cut once 10 MB (8 + a quarter) were read; the text says it is over that, not that it is that.
      const far = await send(streamedForm(40 * MB))
      expect(far.status).toBe(status)
      const { error } = (await far.json()) as { error: string }
      const over = /^file size over (\d+(?:\.\d)?)MB exceeds limit of 8MB for current license tier$/.exec(error)
      expect(over, error).not.toBeNull()
      expect(Number(over![1])).toBeGreaterThanOrEqual(10)
      expect(Number(over![1])).toBeLessThan(40)
      // With a length declared, the size is known from the headers before a byte is read.
      const data = new FormData()
      data.append('engine', 'draco')
      data.append('file', new File([new Uint8Array(40 * MB)], 'big.glb'))
      const declared = await send({ body: data })
      expect(declared.status).toBe(status)
      expect(await declared.json()).toEqual({ error: ERROR_TEXTS.fileTooLarge(40, LIMIT_MB) })
      expect(await readdir(join(dir.path, variant, 'files', 'tasks')).catch(() => [])).toHaveLength(await countTasks(variant))
    })

    it("refuses a field or a single route's file given twice, on every route, before a task or a trial file is counted", async () => {
      const before = await usedTrialFiles(variant)
      const cowFile = () => new File([cow as Uint8Array<ArrayBuffer>], 'cow.obj')
      const build = (entries: [string, string | File][]) => {
        const data = new FormData()
        for (const [name, value] of entries) data.append(name, value)
        return data
      }
      const cases: [path: string, entries: [string, string | File][], field: string][] = [
        [
          '/compress',
          [
            ['engine', 'draco'],
            ['engine', 'meshopt'],
            ['file', cowFile()],
          ],
          'engine',
        ],
        [
          '/compress',
          [
            ['engine', 'draco'],
            ['level', '3'],
            ['level', '9'],
            ['file', cowFile()],
          ],
          'level',
        ],
        // The same value twice is no less ambiguous a form.
        [
          '/convert',
          [
            ['target_format', 'glb'],
            ['target_format', 'glb'],
            ['file', cowFile()],
          ],
          'target_format',
        ],
        [
          '/compress',
          [
            ['engine', 'draco'],
            ['file', cowFile()],
            ['file', cowFile()],
          ],
          'file',
        ],
        [
          '/repair',
          [
            ['file', cowFile()],
            ['file', cowFile()],
          ],
          'file',
        ],
        [
          '/batch/compress',
          [
            ['engine', 'draco'],
            ['level', '3'],
            ['level', '9'],
            ['files', cowFile()],
            ['files', cowFile()],
          ],
          'level',
        ],
        [
          '/batch/compress',
          [
            ['files', cowFile()],
            ['engine', 'draco'],
            ['engine', 'draco'],
          ],
          'engine',
        ],
      ]
      for (const [path, entries, name] of cases) {
        const response = await post(variant, path, build(entries))
        expect(response.status, `${path} ${name}`).toBe(400)
        expect(await response.json()).toEqual({ error: ERROR_TEXTS.invalidField(name, 'given more than once') })
      }
      // A field after the file part, in a raw body: refused all the same, and the stored file removed.
      const late = rawForm([
        { disposition: 'name="file"; filename="cow.obj"', body: cow },
        field('engine', 'draco'),
        field('engine', 'draco'),
      ])
      const refused = await post(variant, '/compress', late)
      expect(await refused.json()).toEqual({ error: ERROR_TEXTS.invalidField('engine', 'given more than once') })
      expect(await usedTrialFiles(variant)).toBe(before)
      expect(await readdir(join(dir.path, variant, 'files', 'tasks')).catch(() => [])).toHaveLength(await countTasks(variant))
    })

    describe('multipart framing', () => {
      const boundary = '----mos-framing'
      const contentType = `multipart/form-data; boundary=${boundary}`
      /** A compress form whose file part's boundary line is `--boundary` + `line` (a well-formed one: `\r\n`), and any parts before it. */
      const form = (line: string, before = '') => ({
        contentType,
        body: new Uint8Array(
          Buffer.concat([
            Buffer.from(
              `--${boundary}\r\nContent-Disposition: form-data; name="engine"\r\n\r\nmeshopt\r\n${before}` +
                `--${boundary}${line}Content-Disposition: form-data; name="file"; filename="cow.obj"\r\n\r\n`,
            ),
            cow,
            Buffer.from(`\r\n--${boundary}--\r\n`),
          ]),
        ),
      })
      /** Submits the form and returns the bytes stored as the task's input. */
      const storedInput = async (sent: { body: Uint8Array<ArrayBuffer>; contentType: string }) => {
        const response = await post(variant, '/compress', sent)
        expect(response.status, await response.clone().text()).toBe(200)
        const { task_id } = submitResponseSchema.parse(await response.json())
        return new Uint8Array(await readFile(join(dir.path, variant, 'files', 'tasks', task_id, 'input')))
      }

      it('refuses a boundary followed by anything but "--" or a line break, and takes transport padding before it (RFC 2046), the file intact', async () => {
        const before = await usedTrialFiles(variant)
        // Two bytes after the boundary were skipped unread: 'XY' and a lone LF were taken as a line break.
        for (const line of ['XY', '\nX', '\r\r\n', '-\r\n', ' X\r\n', `\r\n--${boundary}\r\n`]) {
          const response = await post(variant, '/compress', form(line))
          expect(response.status, JSON.stringify(line)).toBe(400)
          expect(await response.json()).toEqual({
            error: ERROR_TEXTS.malformedBody('a form boundary is followed by neither "--" nor a line break'),
          })
        }
        expect(await usedTrialFiles(variant)).toBe(before)
        expect(await storedInput(form(' \t \r\n'))).toEqual(cow)
      })

      it("refuses control characters in a part's headers (a bare CR let the next byte through: a file named 'a\\r\\0b.obj')", async () => {
        const before = await usedTrialFiles(variant)
        for (const filename of ['a\r\u0000b.obj', 'a\rb.obj']) {
          const disposition = `name="file"; filename="${filename}"`
          const response = await post(variant, '/compress', rawForm([field('engine', 'meshopt'), { disposition, body: cow }]))
          expect(response.status, JSON.stringify(filename)).toBe(400)
          expect(await response.json()).toEqual({ error: ERROR_TEXTS.malformedBody('a form part has malformed headers') })
        }
        expect(await usedTrialFiles(variant)).toBe(before)
      })

      it('ignores parts with no form-data disposition or an empty name (two were refused as a field named "" given twice)', async () => {
        const part = (headers: string) => `--${boundary}\r\n${headers}\r\n\r\nignored\r\n`
        const ignored = [
          part('X-Note: 1'),
          part('X-Note: 2'),
          part('Content-Disposition: attachment; name="engine"'),
          part('Content-Disposition: form-data; name=""'),
        ]
        expect(await storedInput(form('\r\n', ignored.join('')))).toEqual(cow)
      })
    })

    describe('file names beyond Latin-1', () => {
      it("keeps a name FormData sends as raw UTF-8 (Node's fetch, a File named 牛.obj) through the task to the download", async () => {
        const data = new FormData()
        data.append('engine', 'draco')
        data.append('file', new File([cow as Uint8Array<ArrayBuffer>], '牛.obj'))
        const response = await post(variant, '/compress', data)
        expect(response.status, await response.clone().text()).toBe(200)
        const { task_id } = submitResponseSchema.parse(await response.json())
        const record = await waitForTask((path) => fetchMos(server(variant), path), task_id)
        expect(record).toMatchObject({ status: 'completed', input_filename: '牛.obj', output: { filename: '牛.draco.glb' } })
        const download = await fetchMos(server(variant), `/api/v1/tasks/${task_id}/download`)
        expect(download.status).toBe(200)
        expect(download.headers.get('content-disposition')).toBe(`attachment; filename="_.draco.glb"; filename*=UTF-8''%E7%89%9B.draco.glb`)
        expect((await download.arrayBuffer()).byteLength).toBe((record.output as { size_bytes: number }).size_bytes)
      })

      it('takes raw UTF-8 bytes in filename="…" (Cyrillic, CJK) and RFC 8187 filename*= in UTF-8 or ISO-8859-1, any case, with or without a language (it wins over filename)', async () => {
        const cases: [disposition: string, expected: string][] = [
          ['name="file"; filename="модель.obj"', 'модель.obj'],
          ['name="file"; filename="牛.obj"', '牛.obj'],
          [`name="file"; filename="cow.obj"; filename*=UTF-8''%E7%89%9B%20%D0%BC.obj`, '牛 м.obj'],
          [`name="file"; filename*=utf-8'zh'%E7%89%9B.obj`, '牛.obj'],
          [`name="file"; filename*=utf-8'en'%E7%89%9B.obj`, '牛.obj'],
          // ISO-8859-1 without a language: each byte is the code point of its value (0x80 is U+0080, not windows-1252's €).
          [`name="file"; filename*=ISO-8859-1''k%FChe.obj`, 'kühe.obj'],
          [`name="file"; filename="x.obj"; filename*=iso-8859-1'de'%A4%80%FF.obj`, '¤\u0080ÿ.obj'],
          ['name="file"; filename="kühe.obj"', 'kühe.obj'],
        ]
        for (const [disposition, expected] of cases) {
          const response = await post(variant, '/compress', rawForm([field('engine', 'meshopt'), { disposition, body: cow }]))
          expect(response.status, `${disposition}: ${await response.clone().text()}`).toBe(200)
          const { task_id } = submitResponseSchema.parse(await response.json())
          expect((await task(variant, task_id)).input_filename).toBe(expected)
        }
      })

      it('refuses a filename* that does not decode (bad UTF-8, a bad escape, a charset RFC 8187 does not name), and a part with no name, as malformed', async () => {
        for (const disposition of [
          `name="file"; filename*=UTF-8''%E7%89.obj`,
          `name="file"; filename*=UTF-8''%zz.obj`,
          `name="file"; filename*=koi8-r''%C1.obj`,
          `name="file"; filename*=windows-1252'en'%80.obj`,
          'filename="牛.obj"',
        ]) {
          const response = await post(variant, '/compress', rawForm([field('engine', 'draco'), { disposition, body: cow }]))
          expect(response.status, disposition).toBe(400)
          expect((await response.json()) as { error: string }, disposition).toMatchObject({
            error: expect.stringMatching(/^malformed request: a form part has (malformed headers|no name)$/),
          })
        }
      })
    })
  })
})
