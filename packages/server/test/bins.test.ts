import { execFile } from 'node:child_process'
import { accessSync, constants, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { localServiceEnv } from '../../../test/support/service-env.ts'
import { tempDir } from './support/harness.ts'
import { startMos, stopMos } from './support/processes.ts'

const REPO = fileURLToPath(new URL('../../../', import.meta.url))
const PACKAGES = ['sdk', 'engines', 'server', 'conformance']

/** Every `bin` of every workspace package, with the file it points at. */
const bins = PACKAGES.flatMap((name) => {
  const dir = join(REPO, 'packages', name)
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { bin?: Record<string, string> }
  return Object.entries(manifest.bin ?? {}).map(([command, file]) => ({ command, file: join(dir, file) }))
})

describe('the bins', () => {
  it('are the five commands, each an executable file in the repository (not a build output)', () => {
    expect(bins.map((b) => b.command).sort()).toEqual(['mos', 'mos-conformance', 'mos-console-password', 'mos-license', 'mos-server'])
    for (const { file } of bins) {
      expect(file, file).not.toMatch(/[\\/]dist[\\/]/)
      expect(() => accessSync(file, constants.X_OK), file).not.toThrow()
    }
  })

  it.each([
    ['mos', /^Usage: mos <command> FILE/],
    ['mos-conformance', /^Usage: mos-conformance --base-url URL/],
    ['mos-license', /^mos license: issue and inspect/],
    ['mos-console-password', /^mos-console-password: prints the scrypt hash/],
  ])('%s --help runs the built command with plain Node', async (command, usage) => {
    const { file } = bins.find((b) => b.command === command)!
    const { stdout } = await promisify(execFile)(process.execPath, [file, '--help'], { cwd: REPO })
    expect(stdout).toMatch(usage)
  })
  it('mos-server starts the compiled service and stops on SIGTERM', async () => {
    const dir = await tempDir()
    const { file } = bins.find((b) => b.command === 'mos-server')!
    const env = localServiceEnv({ variant: 'B', dataDir: dir.path, apiKeys: 'bin-key' })
    const server = await startMos('mos-server', env, 30_000, { entry: relative(REPO, file), cwd: dir.path })
    try {
      expect(((await (await fetch(`${server.url}/api/v1/health`)).json()) as { status: string }).status).toBe('healthy')
      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(0)
    } finally {
      await stopMos(server, 1000)
      await dir.remove()
    }
  })
})
