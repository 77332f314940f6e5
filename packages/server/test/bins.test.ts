import { execFile, spawn } from 'node:child_process'
import { accessSync, constants, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { localServiceEnv } from '../../../test/support/service-env.ts'
import { tempDir } from './support/harness.ts'

const REPO = fileURLToPath(new URL('../../../', import.meta.url))
const PACKAGES = ['sdk', 'engines', 'server', 'conformance']

/** Every `bin` of every workspace package, with the file it points at. */
const bins = PACKAGES.flatMap((name) => {
  const dir = join(REPO, 'packages', name)
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { bin?: Record<string, string> }
  return Object.entries(manifest.bin ?? {}).map(([command, file]) => ({ command, file: join(dir, file) }))
})

describe('the bins', () => {
  it('are the four commands, each an executable file in the repository (not a build output)', () => {
    expect(bins.map((b) => b.command).sort()).toEqual(['mos', 'mos-conformance', 'mos-license', 'mos-server'])
    for (const { file } of bins) {
      expect(file, file).not.toMatch(/[\\/]dist[\\/]/)
      expect(() => accessSync(file, constants.X_OK), file).not.toThrow()
    }
  })

  it.each([
    ['mos', /^Usage: mos <command> FILE/],
    ['mos-conformance', /^Usage: mos-conformance --base-url URL/],
    ['mos-license', /^mos license: issue and inspect/],
  ])('%s --help runs the built command with plain Node', async (command, usage) => {
    const { file } = bins.find((b) => b.command === command)!
    const { stdout } = await promisify(execFile)(process.execPath, [file, '--help'], { cwd: REPO })
    expect(stdout).toMatch(usage)
  })
  it('mos-server starts the compiled service and stops on SIGTERM', async () => {
    const dir = await tempDir()
    const { file } = bins.find((b) => b.command === 'mos-server')!
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('SERVICE__')))
    const child = spawn(process.execPath, [file], {
      cwd: dir.path,
      env: { ...inherited, ...localServiceEnv({ variant: 'B', dataDir: dir.path, apiKeys: 'bin-key' }) },
    })
    try {
      let output = ''
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
      const started = Date.now()
      while (!/listening on http:\/\/\S+:(\d+)/.test(output) && child.exitCode === null && Date.now() - started < 30_000)
        await new Promise((r) => setTimeout(r, 50))
      const port = /listening on http:\/\/\S+:(\d+)/.exec(output)?.[1]
      expect(port, output).toBeDefined()
      expect(((await (await fetch(`http://127.0.0.1:${port}/api/v1/health`)).json()) as { status: string }).status).toBe('healthy')
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
    } finally {
      child.kill('SIGKILL')
      await dir.remove()
    }
  })
})
