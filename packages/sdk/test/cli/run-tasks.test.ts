import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { http, HttpResponse } from 'msw'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/main.ts'
import { ERROR_TEXTS } from '../../src/index.ts'
import { API, BASE, completedTask, KEY, mockServer } from '../support/fixtures.ts'

// The CLI in-process against msw: which request each command sends, and what it does with the answer.
// The real binary against the real server is in test/integration-cli.test.ts.
const server = mockServer()
let dir: string
beforeAll(async () => {
  server.listen({ onUnhandledRequest: 'error' })
  dir = await mkdtemp(join(tmpdir(), 'mos-cli-unit-'))
  await writeFile(join(dir, 'a.glb'), new Uint8Array(1000))
  await writeFile(join(dir, 'b.glb'), new Uint8Array(2000))
})
afterEach(() => server.resetHandlers())
afterAll(async () => {
  server.close()
  await rm(dir, { recursive: true, force: true })
})

const RESULT = new Uint8Array(400).fill(7)

/** How the mocked deployment treats batches: its license info's limit (absent: no license info, as B), and what it refuses. */
interface BatchRules {
  licenseLimit?: number
  /** The batch endpoint refuses more files than this, as a trial deployment does. */
  refuseOver?: number
}

/** Serves every submit endpoint, a completed record whose output is named `outputName`, and the result bytes. */
function serveAll(outputName: (input: string) => string, rules: BatchRules = {}) {
  const submits: { path: string; fields: Record<string, string>; files: string[] }[] = []
  const inputs = new Map<string, string>()
  let next = 0
  const submit = (path: string) =>
    http.post(`${API}${path}`, async ({ request }) => {
      const form = await request.formData()
      const fields: Record<string, string> = {}
      const files: string[] = []
      for (const [name, value] of form.entries()) typeof value === 'string' ? (fields[name] = value) : files.push(value.name)
      submits.push({ path, fields, files })
      if (path === '/batch/compress') {
        if (rules.refuseOver !== undefined && files.length > rules.refuseOver)
          return HttpResponse.json({ error: ERROR_TEXTS.batchTooLarge(rules.refuseOver) }, { status: 413 })
        const tasks = files.map((filename) => ({ task_id: `t${next++}`, filename, status: 'pending' }))
        tasks.forEach((task) => inputs.set(task.task_id, task.filename))
        return HttpResponse.json({ batch_id: 'b1', total: tasks.length, tasks })
      }
      const id = `t${next++}`
      inputs.set(id, files[0]!)
      return HttpResponse.json({ task_id: id, status: 'pending' })
    })
  server.use(
    ...['/compress', '/convert', '/repair', '/diagnose', '/textures/optimize', '/textures/ktx2', '/batch/compress'].map(submit),
    http.get(`${API}/tasks/:id`, ({ params }) => {
      const input = inputs.get(String(params.id))!
      const task = { ...completedTask(String(params.id)), input_filename: input }
      return HttpResponse.json({
        ...task,
        output: { ...task.output, filename: outputName(input) },
        ...(submits.some((s) => s.path === '/diagnose')
          ? {
              result: {
                format: 'glb',
                version: '2.0',
                file_size_bytes: 1000,
                meshes: [],
                textures: [],
                animations: [],
                total_issues: 0,
                recommendations: [],
              },
            }
          : {}),
      })
    }),
    http.get(`${API}/tasks/:id/download`, () => new HttpResponse(RESULT)),
    http.get(`${API}/license/info`, () =>
      rules.licenseLimit === undefined
        ? HttpResponse.json({ error: ERROR_TEXTS.routeNotFound('/api/v1/license/info') }, { status: 404 })
        : HttpResponse.json({ mode: 'trial', tier: 'trial', limits: { max_file_size_mb: 50, max_batch_count: rules.licenseLimit } }),
    ),
  )
  return submits
}

async function cli(argv: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await runCli({
    argv,
    env: { MOS_BASE_URL: BASE, MOS_API_KEY: KEY },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    signal: new AbortController().signal,
  })
  return { code, stdout, stderr }
}

describe('mos commands send their fields and save their results', () => {
  const a = () => join(dir, 'a.glb')
  const b = () => join(dir, 'b.glb')

  it('compress with Draco bits: one request per file, even for several files', async () => {
    const submits = serveAll((input) => input)
    const out = join(dir, 'draco')
    const run = await cli(['compress', a(), b(), '--position-bits', '16', '--level', '9', '--out', out])
    expect(run.code, run.stderr).toBe(0)
    // Sent in parallel: order by file.
    expect(submits.map((s) => [s.path, s.files, s.fields]).sort((x, y) => String(x[1]).localeCompare(String(y[1])))).toEqual([
      ['/compress', ['a.glb'], { engine: 'draco', level: '9', position_quantization_bits: '16' }],
      ['/compress', ['b.glb'], { engine: 'draco', level: '9', position_quantization_bits: '16' }],
    ])
    expect((await readdir(out)).sort()).toEqual(['a.draco.glb', 'b.draco.glb'])
    expect(new Uint8Array(await readFile(join(out, 'a.draco.glb')))).toEqual(RESULT)
    expect(run.stdout).toContain(`ok: ${a()} → ${join(out, 'a.draco.glb')}  1000 B → 400 B  (ratio 0.40, −60.0 %)`)
  })

  it('compress several files with engine and level only: one batch', async () => {
    const submits = serveAll((input) => input)
    const run = await cli(['compress', a(), b(), '-e', 'meshopt', '--out', join(dir, 'batch'), '--json'])
    expect(run.code).toBe(0)
    expect(submits).toEqual([{ path: '/batch/compress', files: ['a.glb', 'b.glb'], fields: { engine: 'meshopt' } }])
    expect(JSON.parse(run.stdout).results.map((r: { output: string }) => r.output)).toEqual([
      join(dir, 'batch', 'a.meshopt.glb'),
      join(dir, 'batch', 'b.meshopt.glb'),
    ])
  })

  it('convert, textures, ktx2 and repair', async () => {
    const cases = [
      [['convert', '--to', 'ply'], '/convert', { target_format: 'ply' }, 'a.ply', 'a.ply'],
      [
        ['convert', '--to', 'obj', '--simplify', '0.5', '--merge'],
        '/convert',
        { simplify_ratio: '0.5', merge: 'true', target_format: 'obj' },
        'a.obj',
        'a.obj',
      ],
      [['textures', '-f', 'jpeg', '-q', '70'], '/textures/optimize', { format: 'jpeg', quality: '70' }, 'a.glb', 'a.jpg.glb'],
      [['ktx2', '--uastc', '-q', '3'], '/textures/ktx2', { uastc: 'true', quality: '3' }, 'a.glb', 'a.ktx2.glb'],
      [['repair'], '/repair', {}, 'a.glb', 'a.repaired.glb'],
    ] as const
    for (const [n, [args, path, fields, serverName, saved]] of cases.entries()) {
      const submits = serveAll(() => serverName)
      const out = join(dir, `${path.replaceAll('/', '_')}-${n}`)
      const run = await cli([args[0], a(), ...args.slice(1), '--out', out])
      expect(run.code, run.stderr).toBe(0)
      expect(submits).toEqual([{ path, files: ['a.glb'], fields }])
      expect(await readdir(out)).toEqual([saved])
    }
  })

  it('diagnose prints the diagnosis and writes nothing', async () => {
    const submits = serveAll((input) => input)
    const run = await cli(['diagnose', a()])
    expect(run.code).toBe(0)
    expect(submits).toEqual([{ path: '/diagnose', files: ['a.glb'], fields: {} }])
    expect(run.stdout).toMatch(/ok: .*a\.glb {2}1000 B {2}\d\.\d s {2}glb 2\.0: 0 meshes, 0 textures, 0 issues/)
    expect((await readdir(dir)).sort()).not.toContain('a.out.glb')
  })

  it('a failed task is reported and the exit status is 1', async () => {
    server.use(
      http.post(`${API}/repair`, () => HttpResponse.json({ task_id: 'f1', status: 'pending' })),
      http.get(`${API}/tasks/f1`, () =>
        HttpResponse.json({
          task_id: 'f1',
          status: 'failed',
          error: 'internal error: no geometry',
          created_at: completedTask().created_at,
          failed_at: completedTask().created_at,
        }),
      ),
    )
    const run = await cli(['repair', a()])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(`failed: ${a()}: internal error: no geometry`)
  })
})

describe('compress of several files: each file gets its own outcome', () => {
  /** `names` written into a fresh folder (1 000 bytes each); their paths. */
  async function inputs(folder: string, names: string[]) {
    const at = join(dir, folder)
    await mkdir(at, { recursive: true })
    await Promise.all(names.map((name) => writeFile(join(at, name), new Uint8Array(1000))))
    return names.map((name) => join(at, name))
  }
  const batchesOf = (submits: ReturnType<typeof serveAll>) => submits.filter((s) => s.path === '/batch/compress').map((s) => s.files)
  const singlesOf = (submits: ReturnType<typeof serveAll>) =>
    submits
      .filter((s) => s.path === '/compress')
      .map((s) => s.files[0])
      .sort()

  it('a missing file and an extension the service does not take fail alone, before anything is sent; the rest go as a batch', async () => {
    const [a, b, notes] = await inputs('judged', ['a.obj', 'b.obj', 'notes.txt'])
    const missing = join(dir, 'judged', 'nonexist.glb')
    const submits = serveAll((input) => input)
    const folder = join(dir, 'judged')
    const throughFile = join(notes!, 'x.glb')
    const run = await cli(['compress', missing, a!, notes!, b!, folder, throughFile, '--json'])
    expect(run.code).toBe(1)
    expect(batchesOf(submits)).toEqual([['a.obj', 'b.obj']])
    const results = JSON.parse(run.stdout).results
    expect(results.map((r: { input: string; ok: boolean }) => [r.input, r.ok])).toEqual([
      [missing, false],
      [a, true],
      [notes, false],
      [b, true],
      [folder, false],
      [throughFile, false],
    ])
    // In words: each line names its file already (the system's text said it again after 'stat').
    expect(results.map((r: { error?: string }) => r.error)).toEqual([
      'no such file (ENOENT)',
      undefined,
      ERROR_TEXTS.unsupportedFormat('txt'),
      undefined,
      'not a file',
      'a folder on its path is a file (ENOTDIR)',
    ])
  })

  it('batches are split by the limit the license info gives: 6 files at 5 go as 3 and 3', async () => {
    const files = await inputs('split', ['s1.obj', 's2.obj', 's3.obj', 's4.obj', 's5.obj', 's6.obj'])
    const submits = serveAll((input) => input, { licenseLimit: 5, refuseOver: 5 })
    const run = await cli(['compress', ...files, '--json'])
    expect(run.code, run.stderr).toBe(0)
    expect(batchesOf(submits)).toEqual([
      ['s1.obj', 's2.obj', 's3.obj'],
      ['s4.obj', 's5.obj', 's6.obj'],
    ])
    expect(singlesOf(submits)).toEqual([])
    expect(JSON.parse(run.stdout).results.every((r: { ok: boolean }) => r.ok)).toBe(true)
  })

  it('with no limit known, a batch refused as a whole is sent again one request per file', async () => {
    const files = await inputs('refused', ['s1.obj', 's2.obj', 's3.obj', 's4.obj', 's5.obj', 's6.obj'])
    const submits = serveAll((input) => input, { refuseOver: 5 })
    const run = await cli(['compress', ...files, '--json'])
    expect(run.code, run.stderr).toBe(0)
    expect(batchesOf(submits)).toEqual([['s1.obj', 's2.obj', 's3.obj', 's4.obj', 's5.obj', 's6.obj']])
    expect(singlesOf(submits)).toEqual(['s1.obj', 's2.obj', 's3.obj', 's4.obj', 's5.obj', 's6.obj'])
    expect(JSON.parse(run.stdout).results.every((r: { ok: boolean }) => r.ok)).toBe(true)
  })

  it("after a refused batch, each file's failure is its own", async () => {
    const [good, bad] = await inputs('own', ['good.obj', 'bad.obj'])
    const submits = serveAll((input) => input, { refuseOver: 1 })
    server.use(
      http.post(`${API}/compress`, async ({ request }) => {
        const file = (await request.formData()).get('file') as File
        submits.push({ path: '/compress', fields: {}, files: [file.name] })
        if (file.name === 'bad.obj') return HttpResponse.json({ error: ERROR_TEXTS.fileTooLarge(60, 50) }, { status: 413 })
        return HttpResponse.json({ task_id: 'own-good', status: 'pending' })
      }),
      http.get(`${API}/tasks/own-good`, () => HttpResponse.json({ ...completedTask('own-good'), input_filename: 'good.obj' })),
    )
    const run = await cli(['compress', good!, bad!, '--json'])
    expect(run.code).toBe(1)
    expect(singlesOf(submits)).toEqual(['bad.obj', 'good.obj'])
    const results = JSON.parse(run.stdout).results
    expect(results.map((r: { ok: boolean; error?: string }) => [r.ok, r.error])).toEqual([
      [true, undefined],
      [false, ERROR_TEXTS.fileTooLarge(60, 50)],
    ])
  })

  it('level 0 (variant B: no compression) is outside the batch rule: one request per file', async () => {
    const [a, b] = await inputs('level0', ['a.obj', 'b.obj'])
    const submits = serveAll((input) => input, { licenseLimit: 5 })
    const run = await cli(['compress', a!, b!, '-l', '0', '--json'])
    expect(run.code, run.stderr).toBe(0)
    expect(batchesOf(submits)).toEqual([])
    expect(submits.map((s) => s.fields)).toEqual([
      { engine: 'draco', level: '0' },
      { engine: 'draco', level: '0' },
    ])
  })
})
