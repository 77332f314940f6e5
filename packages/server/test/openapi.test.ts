import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import SwaggerParser from '@apidevtools/swagger-parser'
import { EXTENSION_MARK, openApiDocument, VARIANTS } from '@mos/sdk/contract'
import openapiTS, { astToString } from 'openapi-typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { throwAwayLicenceEnv } from '../../../test/support/service-env.ts'
import { openApiFiles } from '../src/routes/openapi-files.ts'
import { SERVICE_VERSION } from '../src/version.ts'
import { fetchMos, form, tempDir, testEnv, waitForTask } from './support/harness.ts'
import { startMos, stopMos, type MosProcess } from './support/processes.ts'

const REPO = fileURLToPath(new URL('../../../', import.meta.url))
const { available, paths } = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })
type Document = Record<string, unknown> & { paths: Record<string, Record<string, Record<string, unknown>>> }

describe('OpenAPI documents', () => {
  it('in docs/openapi/ are what `npm run openapi` writes now', async () => {
    for (const file of openApiFiles()) {
      expect(await readFile(join(REPO, file.path), 'utf8'), `${file.path} is stale: run npm run openapi`).toBe(file.text)
    }
  })

  it.each(VARIANTS)('of variant %s pass a real OpenAPI 3.1 validator and cover every path of the variant', async (variant) => {
    const document = openApiDocument(variant, { version: SERVICE_VERSION }) as Document
    await SwaggerParser.validate(structuredClone(document) as never)
    expect(document.openapi).toBe('3.1.0')
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method} ${path}`),
    )
    expect(operations).toEqual(
      expect.arrayContaining([
        'get /api/v1/tasks/{task_id}',
        'get /api/v1/tasks/{task_id}/download',
        'post /api/v1/batch/compress',
        'get /api/v1/metrics',
      ]),
    )
    // The variants' ranges and reserved paths differ as the contract says.
    const compress = document.paths['/api/v1/compress']!.post as {
      requestBody: { content: Record<string, { schema: { properties: Record<string, { minimum?: number }> } }> }
    }
    expect(compress.requestBody.content['multipart/form-data']!.schema.properties.level!.minimum).toBe(variant === 'A' ? 1 : 0)
    expect(Object.keys(document.paths['/api/v1/diagnose']!.post!.responses as object)).toEqual(
      variant === 'A' ? expect.arrayContaining(['200']) : ['401', '501'],
    )
    // Extensions are marked, contract paths are not.
    const marked = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).flatMap(([method, operation]) => (operation[EXTENSION_MARK] ? [`${method} ${path}`] : [])),
    )
    expect(marked).toEqual(
      expect.arrayContaining([
        'get /api/v1/tasks',
        'post /api/v1/tasks/{task_id}/cancel',
        'delete /api/v1/tasks/{task_id}',
        'get /api/v1/openapi.json',
      ]),
    )
    expect(
      marked.filter((operation) => !/tasks(\/\{task_id\}\/(cancel|events))?$|tasks\/\{task_id\}$|openapi|reference/.test(operation)),
    ).toEqual([])
    const textures = JSON.stringify(document.paths['/api/v1/textures/optimize'])
    expect(textures).toContain(`"lossy_normal_maps":{"type":"boolean","default":false,"${EXTENSION_MARK}":true}`)
  })
})

describe.skipIf(!available)('OpenAPI on the running service', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let mos: MosProcess | undefined
  beforeAll(async () => {
    dir = await tempDir()
    mos = await startMos('openapi', { ...testEnv('A', dir.path), ...throwAwayLicenceEnv() })
  }, 60_000)
  afterAll(async () => {
    await stopMos(mos, 10_000)
    await dir?.remove()
  })
  const call = (path: string, init: RequestInit = {}) => fetchMos(mos!, path, init)

  it('serves its variant’s document without a key', async () => {
    const response = await fetchMos(mos!, '/api/v1/openapi.json', {}, null)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual(openApiDocument('A', { version: SERVICE_VERSION }))
  })

  it('serves the rendered reference from itself: the page, its one script, and a policy that allows only those', async () => {
    const page = await fetchMos(mos!, '/api/v1/reference', {}, null)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    const html = await page.text()
    const sources = [...html.matchAll(/(?:src|data-url)="([^"]+)"/g)].map((match) => match[1])
    expect(sources).toEqual(['/api/v1/openapi.json', '/api/v1/reference/scalar.js'])
    const policy = page.headers.get('content-security-policy') ?? ''
    expect(policy).toContain("script-src 'self'")
    expect(policy).toContain("connect-src 'self'")
    expect(policy).not.toMatch(/https?:/)
    const script = await fetchMos(mos!, '/api/v1/reference/scalar.js', {}, null)
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toContain('javascript')
    expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000)
    // The API's own answers keep the strict policy.
    expect((await call('/api/v1/capabilities')).headers.get('content-security-policy')).toBe(
      "default-src 'none'; frame-ancestors 'none'; sandbox",
    )
  })

  it('gives a client generated by openapi-typescript whose types hold the service’s real answers (tsc)', async () => {
    const document = await (await call('/api/v1/openapi.json')).json()
    await writeFile(join(dir.path, 'api.d.ts'), astToString(await openapiTS(document)))

    const submitted = await (
      await call('/api/v1/compress', { method: 'POST', body: await form({ engine: 'meshopt' }, [paths.box]) })
    ).json()
    const completed = await waitForTask(call, submitted.task_id)
    const answers = {
      health: await (await call('/api/v1/health')).json(),
      capabilities: await (await call('/api/v1/capabilities')).json(),
      submitted,
      completed,
      list: await (await call('/api/v1/tasks?limit=5')).json(),
      refusedCancel: await (await call(`/api/v1/tasks/${submitted.task_id}/cancel`, { method: 'POST' })).json(),
      licenseInfo: await (await call('/api/v1/license/info')).json(),
      deleted: await (await call(`/api/v1/tasks/${submitted.task_id}`, { method: 'DELETE' })).json(),
    }
    const json = (path: string, method: string, status = 200) =>
      `paths['${path}']['${method}']['responses'][${status}]['content']['application/json']`
    const checks = `import type { paths } from './api.d.ts'
export const health: ${json('/api/v1/health', 'get')} = ${JSON.stringify(answers.health)}
export const capabilities: ${json('/api/v1/capabilities', 'get')} = ${JSON.stringify(answers.capabilities)}
export const submitted: ${json('/api/v1/compress', 'post')} = ${JSON.stringify(answers.submitted)}
export const completed: ${json('/api/v1/tasks/{task_id}', 'get')} = ${JSON.stringify(answers.completed)}
export const list: ${json('/api/v1/tasks', 'get')} = ${JSON.stringify(answers.list)}
export const refusedCancel: ${json('/api/v1/tasks/{task_id}/cancel', 'post', 409)} = ${JSON.stringify(answers.refusedCancel)}
export const licenseInfo: ${json('/api/v1/license/info', 'get')} = ${JSON.stringify(answers.licenseInfo)}
export const deleted: ${json('/api/v1/tasks/{task_id}', 'delete')} = ${JSON.stringify(answers.deleted)}
// A wrong answer must not pass: the types are not \`any\`.
// @ts-expect-error status is a closed set
export const wrong: ${json('/api/v1/tasks/{task_id}', 'get')} = { ...completed, status: 'finished' }
`
    await writeFile(join(dir.path, 'check.ts'), checks)
    const tsc = join(REPO, 'node_modules/typescript/bin/tsc')
    const args = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--allowImportingTsExtensions', 'check.ts']
    const run = await promisify(execFile)(process.execPath, [tsc, ...args], { cwd: dir.path }).then(
      () => ({ ok: true, output: '' }),
      (error: { stdout?: string }) => ({ ok: false, output: error.stdout ?? String(error) }),
    )
    expect(run.output).toBe('')
    expect(run.ok).toBe(true)
  }, 60_000)
})
