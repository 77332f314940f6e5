import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const dist = join(pkgDir, 'dist')
const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'))

// dist/ is the workspace build (the vitest global setup runs it, as `npm test` does): rebuilding it
// here would empty it under the other test files, whose servers and CLIs run the compiled SDK.

/** A script run by plain Node (no tsx, no vitest), answering /api/v1/health itself. */
function script(load: string) {
  return `
const http = require('node:http')
const server = http.createServer((req, res) => {
  res.setHeader('content-type', 'application/json')
  res.end(req.url === '/api/v1/health' ? JSON.stringify({ status: 'healthy', version: '1', uptime_seconds: 1, active_tasks: 0, queue_length: 0 }) : '{"error":"not found: ' + req.url + '"}')
  if (req.url !== '/api/v1/health') res.statusCode = 404
})
server.listen(0, '127.0.0.1', async () => {
  const base = 'http://127.0.0.1:' + server.address().port
  const sdk = ${load.replace('ENTRY', 'index')}
  const node = ${load.replace('ENTRY', 'node')}
  const contract = ${load.replace('ENTRY', 'contract')}
  const variant = await sdk.detectVariant(base)
  const health = await node.createClient({ baseURL: base, variant }).health()
  console.log(JSON.stringify({
    variant, health: health.status,
    sameErrors: sdk.NotFoundError === node.NotFoundError,
    contract: contract.TASK_TYPES.length,
    fileFromPath: typeof node.fileFromPath,
  }))
  server.close()
})`
}

describe('the published build', () => {
  it('every publishConfig export target exists', () => {
    const targets = JSON.stringify(manifest.publishConfig.exports).match(/\.\/dist\/[^"]+/g) ?? []
    expect(targets.length).toBeGreaterThanOrEqual(12)
    for (const target of [...targets, manifest.publishConfig.bin.mos, manifest.publishConfig.main, manifest.publishConfig.types]) {
      expect(existsSync(join(pkgDir, target)), target).toBe(true)
    }
  })

  it('the ESM entries load and work in plain Node', async () => {
    const load = `await import(${JSON.stringify(`${dist}/ENTRY.js`)})`
    const { stdout } = await run(process.execPath, ['--input-type=commonjs', '-e', script(load)])
    expect(JSON.parse(stdout)).toEqual({ variant: 'B', health: 'healthy', sameErrors: true, contract: 6, fileFromPath: 'function' })
  })

  it('the CommonJS entries load and work in plain Node', async () => {
    const load = `require(${JSON.stringify(`${dist}/ENTRY.cjs`)})`
    const { stdout } = await run(process.execPath, ['--input-type=commonjs', '-e', script(load)])
    expect(JSON.parse(stdout)).toEqual({ variant: 'B', health: 'healthy', sameErrors: true, contract: 6, fileFromPath: 'function' })
  })

  it('the main entry pulls in no Node built-in (browsers, edge runtimes)', () => {
    const seen = new Set<string>()
    const imports: string[] = []
    const visit = (file: string) => {
      if (seen.has(file)) return
      seen.add(file)
      for (const [, spec] of readFileSync(join(dist, file), 'utf8').matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)) {
        if (spec!.startsWith('./')) visit(spec!.slice(2))
        else imports.push(spec!)
      }
    }
    visit('index.js')
    expect(seen.size).toBeGreaterThan(1)
    expect([...new Set(imports)].sort()).toEqual(['ofetch', 'zod'])
  })

  it('the built CLI runs', async () => {
    const { stdout } = await run(process.execPath, [join(dist, 'cli.js'), '--help'])
    expect(stdout).toContain('Usage: mos <command> FILE...')
  })
})
