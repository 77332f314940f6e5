import { spawn } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { INTERRUPTED } from '../src/cli/run-tasks.ts'
import { ERROR_TEXTS } from '../src/index.ts'
import { countTriangles, extensionsUsed, gltfReader } from './support/decode.ts'
import { completedTask } from './support/fixtures.ts'
import { API_KEY, loadStartServer, startRealServer } from './support/real-server.ts'
import { startThrottlingProxy } from './support/throttling-proxy.ts'

const MOS = resolve(dirname(fileURLToPath(import.meta.url)), '../bin/mos.mjs')

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs the real `mos` binary (not a TTY: stdout and stderr are pipes). */
function mos(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [MOS, ...args], { env: { ...process.env, MOS_BASE_URL: '', MOS_API_KEY: '', ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', fail)
    child.on('close', (code) => done({ code, stdout, stderr }))
  })
}

const corpus = corpusFiles({
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  knight: shared('glb', 'chr_knight.glb'),
  png: assimp('glTF2', 'BoxTextured-glTF', 'CesiumLogoFlat.png'),
  spot: shared('obj', 'spot.obj'),
  gltf1: assimp('glTF', 'BoxTextured-glTF-Embedded', 'BoxTextured.gltf'),
})
const server = await loadStartServer()

async function decode(path: string) {
  return (await gltfReader()).readBinary(new Uint8Array(await readFile(path)))
}

describe('mos without a server', () => {
  it('--help prints the usage; a usage error exits 2', async () => {
    const help = await mos(['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('mos <command> FILE...')
    expect(help.stdout).toContain('2 on a usage error, 130 after Ctrl-C.')
    const usage = await mos(['convert', 'a.glb'])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain('convert needs --to FORMAT')
  })
})

describe('mos without a command, and its version', () => {
  it('--version and -V print the @mos/sdk version and exit 0; --help lists them', async () => {
    const { version } = JSON.parse(await readFile(resolve(dirname(MOS), '../package.json'), 'utf8')) as { version: string }
    for (const flag of ['--version', '-V']) {
      const run = await mos([flag])
      expect(run.code, run.stderr).toBe(0)
      expect(run.stdout).toBe(`${version}\n`)
      expect(run.stderr).toBe('')
    }
    expect((await mos(['--help'])).stdout).toContain('--version, -V      print the version of mos (its @mos/sdk package)')
  })

  it('no command is a usage error: exit 2, the usage on stderr, nothing on stdout', async () => {
    const run = await mos([])
    expect(run.code).toBe(2)
    expect(run.stdout).toBe('')
    expect(run.stderr).toMatch(/^mos: no command given\n\nUsage: mos <command> FILE\.\.\. \[options\]\n/)
    expect(run.stderr).toContain('2 on a usage error, 130 after Ctrl-C.')
  })
})

describe('mos --json refused before any file is sent', () => {
  it('prints the refusal as the JSON document on stdout, its words on stderr, exit 2', async () => {
    const refusals = [
      { args: ['compress', 'a.glb', '--json', '--bogus'], error: "Unknown option '--bogus'" },
      { args: ['compress', 'a.glb', '--level', 'high', '--json'], error: '--level takes an integer, not "high"' },
      { args: ['convert', '--json', 'a.glb'], error: 'convert needs --to FORMAT' },
      { args: ['shrink', 'a.glb', '--json'], error: 'unknown command "shrink"' },
    ]
    for (const { args, error } of refusals) {
      const run = await mos(args)
      expect(run.code, args.join(' ')).toBe(2)
      const document = JSON.parse(run.stdout) as { ok: boolean; error: string; results: unknown[] }
      expect(document).toEqual({ ok: false, error: expect.stringContaining(error), results: [] })
      expect(run.stderr).toBe(`mos: ${document.error}\nRun \`mos --help\` for usage.\n`)
    }
    // Without --json stdout stays empty; a --json after `--` names a file, not the option.
    for (const args of [
      ['compress', 'a.glb', '--bogus'],
      ['compress', '--bogus', '--', '--json'],
    ]) {
      const run = await mos(args)
      expect(run.code).toBe(2)
      expect(run.stdout).toBe('')
    }
  })
})

describe('mos interrupted by Ctrl-C', () => {
  it('while a result downloads: exit status 130, the file failed as interrupted, no result and no .part left', async () => {
    // A service whose result never finishes arriving: the Ctrl-C comes mid-download, once bytes are on disk.
    const service = createServer((request, response) => {
      response.setHeader('content-type', 'application/json')
      if (request.method === 'POST') return void request.resume().on('end', () => response.end('{"task_id":"t1","status":"pending"}'))
      if (request.url?.endsWith('/download')) {
        response.setHeader('content-type', 'application/octet-stream')
        return void response.write(new Uint8Array(4096).fill(1))
      }
      response.end(JSON.stringify(completedTask('t1')))
    })
    await new Promise<void>((done) => service.listen(0, '127.0.0.1', done))
    const dir = await mkdtemp(join(tmpdir(), 'mos-cli-interrupt-'))
    try {
      const input = join(dir, 'box.glb')
      await writeFile(input, new Uint8Array(100))
      const base = `http://127.0.0.1:${(service.address() as AddressInfo).port}`
      const child = spawn(process.execPath, [MOS, 'compress', input, '--json'], {
        env: { ...process.env, MOS_BASE_URL: base, MOS_API_KEY: 'k' },
      })
      let stdout = ''
      child.stdout.on('data', (chunk) => (stdout += chunk))
      const closed = new Promise<number | null>((done) => child.on('close', done))
      const partial = join(dir, 'box.draco.glb.part')
      while (!existsSync(partial) || statSync(partial).size === 0) await new Promise((resolve) => setTimeout(resolve, 20))
      child.kill('SIGINT')
      expect(await closed).toBe(130)
      expect(JSON.parse(stdout)).toMatchObject({
        ok: false,
        results: [{ input, ok: false, task_id: 't1', error: INTERRUPTED }],
      })
      expect((await readdir(dir)).sort()).toEqual(['box.glb'])
    } finally {
      service.closeAllConnections()
      service.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe.skipIf(!server.startServer || !corpus.available)('mos against the real server', () => {
  let running: Awaited<ReturnType<typeof startRealServer>>
  let work: string
  let env: Record<string, string>

  beforeAll(async () => {
    running = await startRealServer(server.startServer!, 'A')
    work = await mkdtemp(join(tmpdir(), 'mos-cli-'))
    env = { MOS_BASE_URL: running.url, MOS_API_KEY: API_KEY }
  })
  afterAll(async () => {
    await running?.close()
    await rm(work, { recursive: true, force: true })
  })

  it('compress one file: plain progress lines, a summary line, the result beside the input', async () => {
    const input = join(work, 'box.glb')
    await copyFile(corpus.paths.box, input)
    const run = await mos(['compress', input, '--engine', 'meshopt'], env)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toMatch(/box\.glb: (pending|processing|completed)/)
    const output = join(work, 'box.meshopt.glb')
    // The summary, then the record's notes and output-size rule (this box's result is larger than its input by its JSON, which a note says).
    expect(run.stdout).toMatch(
      new RegExp(
        `^ok: ${input.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} → ${output.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}  [\\d.]+ KiB → [\\d.]+ KiB  \\(ratio \\d\\.\\d\\d, [−+]\\d+\\.\\d %\\)  \\d+\\.\\d s\\n(  note: [^\\n]+\\n)*(  output size: [^\\n]+\\n)?$`,
      ),
    )
    const doc = await decode(output)
    expect(extensionsUsed(doc)).toContain('EXT_meshopt_compression')
    expect(countTriangles(doc)).toBe(countTriangles(await decode(corpus.paths.box)))
  })

  it('compress several files with --json and --out: one JSON document, every result decodes', async () => {
    const out = join(work, 'out')
    const run = await mos(
      [
        'compress',
        corpus.paths.box,
        corpus.paths.knight,
        '--out',
        out,
        '--json',
        '--base-url',
        running.url,
        '--api-key',
        API_KEY,
        '--level',
        '9',
      ],
      { MOS_BASE_URL: 'http://127.0.0.1:1' },
    )
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toBe('')
    const report = JSON.parse(run.stdout)
    expect(report.ok).toBe(true)
    expect(report.results.map((r: { input: string }) => r.input)).toEqual([corpus.paths.box, corpus.paths.knight])
    expect((await readdir(out)).sort()).toEqual(['BoxTextured.draco.glb', 'chr_knight.draco.glb'])
    for (const result of report.results) {
      expect(result).toMatchObject({ ok: true, output: expect.stringMatching(/\.draco\.glb$/) })
      expect(result.size_after).toBeGreaterThan(0)
      expect(result.ratio).toBeCloseTo(result.size_after / result.size_before, 5)
      const doc = await decode(result.output)
      expect(extensionsUsed(doc)).toContain('KHR_draco_mesh_compression')
      expect(countTriangles(doc)).toBe(countTriangles(await decode(result.input)))
    }
  })

  it('compress with the Mos extension flags: --simplify 0.5 leaves about half the triangles', async () => {
    const out = join(work, 'simplified')
    const run = await mos(
      ['compress', corpus.paths.spot, '--simplify', '0.5', '--out', out, '--json', '--base-url', running.url, '--api-key', API_KEY],
      {},
    )
    expect(run.code, run.stderr).toBe(0)
    const [result] = JSON.parse(run.stdout).results
    // The OBJ's faces, fanned into triangles as every reader does.
    const faces = (await readFile(corpus.paths.spot, 'utf8')).split('\n').filter((line) => line.startsWith('f '))
    const before = faces.reduce((n, line) => n + line.trim().split(/\s+/).length - 3, 0)
    const after = countTriangles(await decode(result.output))
    expect(after).toBeLessThan(before)
    expect(after / before).toBeGreaterThan(0.45)
    expect(after / before).toBeLessThan(0.55)
  })

  it('--request-timeout bounds a request without progress: a stalled upload fails its file in words, after the documented attempts', async () => {
    // 16 MB: more than the kernel holds of a request on loopback, so the upload itself stalls.
    const input = join(work, 'stalled.glb')
    await writeFile(input, new Uint8Array(16_000_000))
    const proxy = await startThrottlingProxy(running.url, { bytesPerSecond: 16_000_000, stallAfterBytes: 1_000_000 })
    try {
      const started = Date.now()
      const run = await mos(['compress', input, '--json', '--request-timeout', '1'], { ...env, MOS_BASE_URL: proxy.url })
      expect(run.code, run.stderr).toBe(1)
      const { results } = JSON.parse(run.stdout) as { results: { input: string; ok: boolean; error: string }[] }
      expect(results).toEqual([expect.objectContaining({ input, ok: false, error: 'request timed out: no progress for 1000 ms' })])
      // The first attempt and the SDK's two retries, each cut after about a second (the default 120 s would hang here).
      expect(proxy.requests).toBe(3)
      expect(Date.now() - started).toBeLessThan(15_000)
    } finally {
      await proxy.close()
    }
  })

  it('a wrong key fails each file with the server text and exits 1', async () => {
    const run = await mos(['compress', corpus.paths.box, '--json'], { ...env, MOS_API_KEY: 'wrong' })
    expect(run.code).toBe(1)
    const report = JSON.parse(run.stdout)
    expect(report).toMatchObject({ ok: false, results: [{ ok: false, error: ERROR_TEXTS.unauthorized() }] })
  })

  /** Whether the server has a submit route yet: a form without a file gets 400 there, 404 where it is missing. */
  async function hasRoute(path: string): Promise<boolean> {
    const response = await fetch(`${running.url}/api/v1${path}`, {
      method: 'POST',
      headers: { 'X-API-Key': API_KEY },
      body: new FormData(),
    })
    return response.status !== 404
  }

  // The other commands, each once its endpoint is on the server (skipped with a message until then).
  const commands = [
    // A textured model's OBJ is a zip with its .mtl and texture.
    { name: 'convert', route: '/convert', args: ['--to', 'obj'], input: 'box', output: 'BoxTextured.obj.zip' },
    { name: 'repair', route: '/repair', args: [], input: 'box', output: 'BoxTextured.repaired.glb' },
    { name: 'textures', route: '/textures/optimize', args: ['--format', 'webp'], input: 'png', output: 'CesiumLogoFlat.webp' },
    { name: 'ktx2', route: '/textures/ktx2', args: [], input: 'png', output: 'CesiumLogoFlat.ktx2' },
    { name: 'diagnose', route: '/diagnose', args: [], input: 'box', output: undefined },
  ] as const
  for (const command of commands) {
    it(`mos ${command.name}`, async (ctx) => {
      if (!(await hasRoute(command.route))) return ctx.skip(`POST ${command.route} is not on the server yet`)
      const out = join(work, `out-${command.name}`)
      const run = await mos([command.name, corpus.paths[command.input], ...command.args, '--out', out, '--json'], env)
      expect(run.code, run.stdout + run.stderr).toBe(0)
      const [result] = JSON.parse(run.stdout).results
      if (command.output) {
        expect(result.output).toBe(join(out, command.output))
        expect((await readFile(result.output)).byteLength).toBe(result.size_after)
      } else {
        expect(result.result).toMatchObject({ format: expect.any(String), meshes: expect.any(Array) })
        expect(await readdir(out)).toEqual([])
      }
    })
  }

  it('inputs sharing a stem get one result each, and a file in the way is not replaced without --force (issue 20, item 10)', async () => {
    // spot.glb (a copy of the box) and spot.obj (the spot mesh): both would be spot.meshopt.glb.
    const dir = join(work, 'stems')
    await mkdir(dir)
    const glb = join(dir, 'spot.glb')
    const obj = join(dir, 'spot.obj')
    await Promise.all([copyFile(corpus.paths.box, glb), copyFile(corpus.paths.spot, obj)])
    const args = ['compress', glb, obj, '--engine', 'meshopt', '--json']
    const run = await mos(args, env)
    expect(run.code, run.stderr).toBe(0)
    const outputs = JSON.parse(run.stdout).results.map((r: { output: string }) => r.output)
    expect(outputs).toEqual([join(dir, 'spot.glb.meshopt.glb'), join(dir, 'spot.obj.meshopt.glb')])
    expect(countTriangles(await decode(outputs[0]))).toBe(countTriangles(await decode(corpus.paths.box)))
    // spot.obj has 5856 triangles (its face lines), the box 12: each result is its own input's.
    expect(countTriangles(await decode(outputs[1]))).toBe(5856)
    const before = await Promise.all(outputs.map((path: string) => readFile(path)))

    // Again: the results exist, so nothing is uploaded and nothing is replaced.
    const again = await mos(args, env)
    expect(again.code).toBe(2)
    expect(again.stderr).toBe(`mos: ${join(dir, 'spot.glb.meshopt.glb')} exists: not replaced (--force replaces it)\n`)
    // With --json, stdout says the same as a JSON document (no results: nothing was sent).
    expect(JSON.parse(again.stdout)).toEqual({
      ok: false,
      error: `${join(dir, 'spot.glb.meshopt.glb')} exists: not replaced (--force replaces it)`,
      results: [],
    })
    expect(await Promise.all(outputs.map((path: string) => readFile(path)))).toEqual(before)
    const forced = await mos([...args, '--force'], env)
    expect(forced.code, forced.stderr).toBe(0)

    // One name from two folders into one --out, and one file twice: refused before uploading.
    const other = join(work, 'stems-other')
    await mkdir(other)
    await copyFile(corpus.paths.box, join(other, 'spot.glb'))
    const clash = await mos(['compress', glb, join(other, 'spot.glb'), '--out', join(work, 'stems-out')], env)
    expect(clash.code).toBe(2)
    expect(clash.stderr).toContain(`${glb} and ${join(other, 'spot.glb')} would be saved under one name in ${join(work, 'stems-out')}`)
    const twice = await mos(['repair', glb, glb], env)
    expect(twice.code).toBe(2)
    expect(twice.stderr).toBe(`mos: ${glb} is given twice\n`)
  })

  it("says each task's warnings and notes under its summary line, and puts them in --json", async () => {
    const out = join(work, 'out-said')
    // glTF 1.0 to GLB: the reader's warning (its shaders); BoxTextured to STL: the writer's note (its texture).
    const plain = await mos(['convert', corpus.paths.gltf1, '--to', 'glb', '--out', out], env)
    expect(plain.code, plain.stderr).toBe(0)
    const [summary, warning, ...rest] = plain.stdout.trimEnd().split('\n')
    expect(summary).toMatch(/^ok: .*BoxTextured\.gltf → .*BoxTextured\.glb {2}/)
    expect(warning).toMatch(/^ {2}warning: \[gltf 1\.0\] 1 technique \(GLSL shaders\) not carried: /)
    expect(rest).toEqual([])
    const stl = await mos(['convert', corpus.paths.box, '--to', 'stl', '--out', out, '--json'], env)
    expect(stl.code, stl.stderr).toBe(0)
    const [result] = JSON.parse(stl.stdout).results
    expect(result.notes).toContainEqual(expect.stringMatching(/^STL cannot hold /))
    const shown = await mos(['convert', corpus.paths.box, '--to', 'stl', '--out', out, '--force'], env)
    expect(shown.stdout.trimEnd().split('\n').slice(1)).toEqual(result.notes.map((note: string) => `  note: ${note}`))
  })

  it('puts the output-size rule in --json as the task record has it, and under the summary after the notes', async () => {
    const out = join(work, 'out-size-rule')
    // BoxTextured to meshopt: 4696 B in, a larger result (its JSON grows more than the encoding saves), returned with size_rule.
    const run = await mos(['compress', corpus.paths.box, '--engine', 'meshopt', '--out', out, '--json'], env)
    expect(run.code, run.stderr).toBe(0)
    const [result] = JSON.parse(run.stdout).results
    const record = await (await fetch(`${running.url}/api/v1/tasks/${result.task_id}`, { headers: { 'X-API-Key': API_KEY } })).json()
    expect(record.size_rule).toMatchObject({ input_bytes: result.size_before, result_bytes: result.size_after, kept_input: false })
    expect(result.size_rule).toEqual(record.size_rule)
    const shown = await mos(['compress', corpus.paths.box, '--engine', 'meshopt', '--out', out, '--force'], env)
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout.trimEnd().split('\n').slice(1)).toEqual([
      ...(record.notes ?? []).map((note: string) => `  note: ${note}`),
      `  output size: ${record.size_rule.note}`,
    ])
  })

  it('compress of more files than the trial batch limit, with a wrong extension and a missing file among them: each file its own outcome', async () => {
    // The trial allows 5 files a batch: six go as two batches; notes.txt and nonexist.glb fail alone, before anything is sent.
    const dir = join(work, 'over-limit')
    await mkdir(dir)
    const models = ['s1', 's2', 's3', 's4', 's5', 's6'].map((stem) => join(dir, `${stem}.glb`))
    await Promise.all(models.map((path) => copyFile(corpus.paths.box, path)))
    const notes = join(dir, 'notes.txt')
    await copyFile(MOS, notes)
    const missing = join(dir, 'nonexist.glb')
    const run = await mos(['compress', missing, ...models, notes, '--json'], env)
    expect(run.code).toBe(1)
    const results: { input: string; ok: boolean; error?: string; output?: string }[] = JSON.parse(run.stdout).results
    expect(results.map((r) => [r.input, r.ok])).toEqual([[missing, false], ...models.map((path) => [path, true]), [notes, false]])
    expect(results[0]!.error).toBe('no such file (ENOENT)')
    expect(results.at(-1)!.error).toBe(ERROR_TEXTS.unsupportedFormat('txt'))
    for (const result of results.filter((r) => r.ok)) expect(countTriangles(await decode(result.output!))).toBe(12)
  })

  it('twelve files at once (three batches waited on together): every result, and nothing on stderr but progress', async () => {
    // Each file's wait and download listens to the run's one Ctrl-C signal at the same time: more than
    // Node's default of ten listeners, which warned of a leak on stderr.
    const dir = join(work, 'twelve')
    await mkdir(dir)
    const models = Array.from({ length: 12 }, (_, index) => join(dir, `m${index}.glb`))
    await Promise.all(models.map((path) => copyFile(corpus.paths.box, path)))
    const run = await mos(['compress', ...models, '--engine', 'meshopt'], env)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout.split('\n').filter((line) => line.startsWith('ok: '))).toHaveLength(12)
    expect(
      run.stderr.split('\n').filter((line) => line !== '' && !/: (pending|processing|completed|downloading) \d+%$/.test(line)),
    ).toEqual([])
  })

  it('an unsupported file fails with the contract text', async () => {
    const notes = join(work, 'notes.txt')
    await copyFile(MOS, notes)
    const run = await mos(['repair', notes], env)
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/failed: .*notes\.txt: (unsupported format: txt|not found: \/api\/v1\/repair)/)
  })
})

describe.skipIf(!server.startServer || !corpus.available)('mos against a variant B server', () => {
  let running: Awaited<ReturnType<typeof startRealServer>>
  let work: string
  let env: Record<string, string>

  beforeAll(async () => {
    running = await startRealServer(server.startServer!, 'B')
    work = await mkdtemp(join(tmpdir(), 'mos-cli-b-'))
    env = { MOS_BASE_URL: running.url, MOS_API_KEY: API_KEY }
  })
  afterAll(async () => {
    await running?.close()
    await rm(work, { recursive: true, force: true })
  })

  it('compress -l 0 of several files: one request each (the batch takes levels 1 to 10), every file re-packed', async () => {
    const dir = join(work, 'level0')
    await mkdir(dir)
    const inputs = [join(dir, 'a.glb'), join(dir, 'b.glb')]
    await Promise.all(inputs.map((path) => copyFile(corpus.paths.box, path)))
    const run = await mos(['compress', ...inputs, '-l', '0', '--json'], env)
    expect(run.code, run.stdout + run.stderr).toBe(0)
    for (const result of JSON.parse(run.stdout).results) {
      const doc = await decode(result.output)
      expect(extensionsUsed(doc)).not.toContain('KHR_draco_mesh_compression')
      expect(countTriangles(doc)).toBe(12)
    }
  })

  it('compress of more files than a batch may hold, where no document says the limit: refused as a whole, then one request per file', async () => {
    const dir = join(work, 'over-limit')
    await mkdir(dir)
    const inputs = ['s1', 's2', 's3', 's4', 's5', 's6'].map((stem) => join(dir, `${stem}.glb`))
    await Promise.all(inputs.map((path) => copyFile(corpus.paths.box, path)))
    const run = await mos(['compress', ...inputs, '--json'], env)
    expect(run.code, run.stdout + run.stderr).toBe(0)
    const results: { input: string; ok: boolean; output: string }[] = JSON.parse(run.stdout).results
    expect(results.map((r) => [r.input, r.ok])).toEqual(inputs.map((path) => [path, true]))
    for (const result of results) expect(extensionsUsed(await decode(result.output))).toContain('KHR_draco_mesh_compression')
  })
})

describe.skipIf(!server.startServer || !corpus.available)('mos serve', () => {
  it('starts the server (development key printed), which then serves `mos compress`, and stops on SIGTERM', async () => {
    const data = await mkdtemp(join(tmpdir(), 'mos-serve-'))
    const child = spawn(process.execPath, [MOS, 'serve'], {
      env: {
        ...process.env,
        SERVICE__SERVER__PORT: '0',
        SERVICE__SERVER__HOST: '127.0.0.1',
        SERVICE__STORAGE__FS__BASE: data,
        SERVICE__ENGINES__THREADS: '1',
      },
    })
    try {
      let output = ''
      child.stdout.on('data', (chunk) => (output += chunk))
      child.stderr.on('data', (chunk) => (output += chunk))
      const started = Date.now()
      while (!/development API key[^\n]*: (\S+)/.test(output) && Date.now() - started < 30_000) await new Promise((r) => setTimeout(r, 50))
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1]
      const key = /development API key[^\n]*: (\S+)/.exec(output)?.[1]
      expect(url, output).toBeDefined()
      const run = await mos(['compress', corpus.paths.box, '--out', data, '--json'], { MOS_BASE_URL: url!, MOS_API_KEY: key! })
      expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, results: [{ ok: true }] })
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
    } finally {
      child.kill('SIGKILL')
      await rm(data, { recursive: true, force: true })
    }
  })
})
