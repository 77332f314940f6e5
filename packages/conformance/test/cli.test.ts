import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { XMLParser } from 'fast-xml-parser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { json, pathOf, startProxy, startRealServer, type Proxy } from './support/servers.ts'
import { API_KEY } from './support/servers.ts'

const BIN = new URL('../bin/mos-conformance.js', import.meta.url).pathname

/** Runs the real executable, as an operator would. */
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, ...args], {
      env: { ...process.env, MOS_BASE_URL: '', MOS_API_KEY: '' },
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

const asArray = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value])

describe('the mos-conformance command', () => {
  let server: Awaited<ReturnType<typeof startRealServer>>
  let broken: Proxy
  let dir: string

  beforeAll(async () => {
    server = await startRealServer('A')
    // One deviation: the health document of variant B served by a variant A deployment.
    broken = await startProxy(server.url, { request: (r) => (pathOf(r) === '/api/v1/health' ? json({ status: 'healthy' }) : undefined) })
    dir = await mkdtemp(join(tmpdir(), 'mos-conformance-cli-'))
  })
  afterAll(async () => {
    await broken?.close()
    await server?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('lists the checks of a variant and profile without a deployment', async () => {
    const { code, stdout } = await cli(['--variant', 'B', '--list', '--profile', 'all', '--include', 'reserved'])
    expect(code).toBe(0)
    expect(
      stdout
        .trim()
        .split('\n')
        .map((line) => line.split(' ')[0]),
    ).toEqual(['reserved.diagnose', 'reserved.diagnose.text', 'reserved.texture_ktx2', 'reserved.texture_ktx2.text'])
  })

  it('exits 2 on bad flags', async () => {
    expect((await cli(['--variant', 'C', '--base-url', server.url, '--api-key', API_KEY])).code).toBe(2)
    expect((await cli(['--variant', 'A', '--base-url', server.url, '--api-key', API_KEY, '--rate-limit', 'ten'])).code).toBe(2)
    expect((await cli(['--variant', 'A', '--base-url', server.url, '--api-key', API_KEY, '--no-such-flag'])).code).toBe(2)
    expect((await cli(['--variant', 'A', '--api-key', API_KEY])).stderr).toContain('--base-url')
    // A mistyped --include must not pass by running nothing.
    const none = await cli(['--variant', 'A', '--base-url', server.url, '--api-key', API_KEY, '--include', 'helth'])
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('no check matches')
  })

  it('exits 2 when the deployment cannot be reached', async () => {
    const { code, stderr } = await cli(['--variant', 'A', '--base-url', 'http://127.0.0.1:9', '--api-key', API_KEY])
    expect(code).toBe(2)
    expect(stderr).toContain('cannot reach')
  })

  it('exits 0 against our server and writes JUnit XML and JSON that agree', async () => {
    const junit = join(dir, 'ok.xml')
    const report = join(dir, 'ok.json')
    const { code, stdout } = await cli([
      '--variant',
      'A',
      '--base-url',
      server.url,
      '--api-key',
      API_KEY,
      '--include',
      'health,capabilities,not-found,task',
      '--report',
      `junit=${junit},json=${report}`,
    ])
    expect(code, stdout).toBe(0)
    const results = JSON.parse(await readFile(report, 'utf8')) as {
      summary: { total: number; fail: number; skip: number }
      results: { id: string; outcome: string }[]
    }
    expect(results.summary.fail).toBe(0)

    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(await readFile(junit, 'utf8'))
    const suites = asArray(xml.testsuites.testsuite)
    const cases = suites.flatMap((suite: { testcase: unknown }) => asArray(suite.testcase)) as {
      name: string
      skipped?: unknown
      failure?: unknown
    }[]
    expect(Number(xml.testsuites.tests)).toBe(results.summary.total)
    expect(cases.map((c) => c.name).sort()).toEqual(results.results.map((r) => r.id).sort())
    expect(cases.filter((c) => c.skipped !== undefined).length).toBe(results.summary.skip)
    expect(cases.filter((c) => c.failure !== undefined)).toEqual([])
  })

  it('exits 1 against a deviating server, and the JUnit failure names the check', async () => {
    const junit = join(dir, 'broken.xml')
    const { code, stdout } = await cli([
      '--variant',
      'A',
      '--base-url',
      broken.url,
      '--api-key',
      API_KEY,
      '--include',
      'health.document',
      '--report',
      `junit=${junit}`,
    ])
    expect(code).toBe(1)
    expect(stdout).toContain('FAIL health.document')
    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(await readFile(junit, 'utf8'))
    const cases = asArray(xml.testsuites.testsuite).flatMap((suite: { testcase: unknown }) => asArray(suite.testcase)) as {
      name: string
      failure?: { message: string }
    }[]
    const failed = cases.filter((c) => c.failure)
    expect(failed.map((c) => c.name)).toEqual(['health.document'])
    expect(failed[0]!.failure!.message).toContain('does not match the contract')
    expect(Number(xml.testsuites.failures)).toBe(1)
  })

  it('--certify turns a skipped core check into a failure', async () => {
    const plain = await cli(['--variant', 'A', '--base-url', server.url, '--api-key', API_KEY, '--include', 'limits.file-size'])
    expect(plain.code).toBe(0)
    expect(plain.stdout).toContain('SKIP limits.file-size — needs --max-file-size-mb')
    const certify = await cli([
      '--variant',
      'A',
      '--base-url',
      server.url,
      '--api-key',
      API_KEY,
      '--include',
      'limits.file-size',
      '--certify',
    ])
    expect(certify.code).toBe(1)
    expect(certify.stdout).toContain('FAIL limits.file-size — skipped, and --certify requires it')
  })
})
