import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { http, HttpResponse } from 'msw'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/main.ts'
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

/** Serves every submit endpoint, a completed record whose output is named `outputName`, and the result bytes. */
function serveAll(outputName: (input: string) => string) {
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
