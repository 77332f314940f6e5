import {
  compressFieldSpecs,
  conditionValues,
  describeRule,
  ERROR_TEXTS,
  VARIANT_SCHEMAS,
  failedTaskSchema,
  pendingTaskSchema,
  completedTaskSchema,
  submitResponseSchema,
  type FieldSpec,
} from '@mos/sdk/contract'
import { isAbsolute } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { form, useInProcessApp, VARIANTS, waitForTask } from './support/harness.ts'

const { available, paths } = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })

/** A value that breaks the spec's rule, and the text the contract says it gets. */
function badValues(spec: FieldSpec): { value: string; error: string }[] {
  const invalid = ERROR_TEXTS.invalidField(spec.name, describeRule(spec))
  switch (spec.kind) {
    case 'integer':
      return [
        { value: String(spec.min - 1), error: invalid },
        { value: String(spec.max + 1), error: invalid },
        { value: '7.5', error: invalid },
        { value: 'seven', error: invalid },
      ]
    case 'number':
      return [
        { value: String(spec.minExclusive ? spec.min : spec.min - 1), error: invalid },
        { value: String(spec.max + 0.5), error: invalid },
        { value: '1e', error: invalid },
        { value: 'seven', error: invalid },
      ]
    case 'enum':
      return [{ value: 'zstd', error: spec.unsupportedFormatError ? ERROR_TEXTS.unsupportedFormat('zstd') : invalid }]
    case 'boolean':
      return [{ value: 'maybe', error: invalid }]
  }
}

/** Every string anywhere in a JSON value. */
function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (value && typeof value === 'object') return Object.values(value).flatMap(stringsIn)
  return []
}

describe.skipIf(!available).each(VARIANTS)('routes in variant %s (in-process)', (variant) => {
  const service = useInProcessApp(variant, { SERVICE__LIMITS__MAX_FILE_SIZE_MB: '1' })
  const schemas = VARIANT_SCHEMAS[variant]
  const limitStatus = variant === 'A' ? 413 : 402

  const compress = async (fields: Record<string, string | number>, files: Parameters<typeof form>[1] = [paths.box]) =>
    service.call('/api/v1/compress', { method: 'POST', body: await form(fields, files) })

  it('serves health without a key, in the variant shape', async () => {
    const response = await service.call('/api/v1/health', {}, null)
    expect(response.status).toBe(200)
    const body = await response.json()
    expect(schemas.health.parse(body)).toEqual(body)
    if (variant === 'B') expect(body.version).toMatch(/^\d+\.\d+\.\d+/)
  })

  it('serves capabilities in the variant shape, with a key only', async () => {
    expect((await service.call('/api/v1/capabilities', {}, null)).status).toBe(401)
    const response = await service.call('/api/v1/capabilities')
    const body = await response.json()
    expect(schemas.capabilities.parse(body)).toBeTruthy()
    if (variant === 'A') {
      expect(body.engines).toEqual(['draco', 'meshopt'])
      expect(body.features).toContain('compress')
    } else {
      expect(body.engines.draco.available).toBe(true)
      expect(body.engines.meshopt.version).toMatch(/^\d+\.\d+/)
      expect(body.formats.output).not.toContain('fbx')
      // The encoder build that runs, not where it lies on the host (issue 20, item 12).
      expect(body.engines.draco.binary_path).toBe(`draco3dgltf@${body.engines.draco.version} (wasm)`)
      expect(body.engines.meshopt.binary_path).toBe(`meshoptimizer@${body.engines.meshopt.version} (wasm)`)
    }
    const repo = fileURLToPath(new URL('../../../', import.meta.url))
    for (const value of stringsIn(body)) {
      expect(isAbsolute(value), value).toBe(false)
      expect(value).not.toContain(repo)
      expect(value).not.toContain('node_modules')
    }
  })

  it.each([
    ['missing', null],
    ['wrong', 'not-the-key'],
    ['almost right', 'test-key-012345678'],
  ])('answers 401 with the exact text when the key is %s', async (_label, key) => {
    for (const path of ['/api/v1/capabilities', '/api/v1/tasks/abc', '/api/v1/tasks/abc/download']) {
      const response = await service.call(path, {}, key)
      expect(response.status).toBe(401)
      expect(await response.json()).toEqual({ error: ERROR_TEXTS.unauthorized() })
    }
    const post = await service.call('/api/v1/compress', { method: 'POST', body: await form({ engine: 'draco' }, [paths.box]) }, key)
    expect(post.status).toBe(401)
  })

  it('accepts every configured key', async () => {
    const response = await service.call('/api/v1/capabilities', {}, 'second-key')
    expect(response.status).toBe(200)
    expect(schemas.capabilities.safeParse(await response.json()).success).toBe(true)
  })

  it('names a missing file and a missing engine', async () => {
    let response = await compress({ engine: 'draco' }, [])
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({ error: ERROR_TEXTS.missingField('file') })
    response = await compress({})
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({ error: ERROR_TEXTS.missingField('engine') })
  })

  it('names the extension of an unsupported file', async () => {
    const response = await compress({ engine: 'draco' }, [{ name: 'notes.txt', bytes: new TextEncoder().encode('hello') }])
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({ error: ERROR_TEXTS.unsupportedFormat('txt') })
  })

  it('refuses a body that is not multipart', async () => {
    const response = await service.call('/api/v1/compress', {
      method: 'POST',
      body: '{"engine":"draco"}',
      headers: { 'content-type': 'application/json' },
    })
    expect(response.status).toBe(400)
    expect((await response.json()).error).toMatch(/^malformed request: /)
  })

  for (const spec of compressFieldSpecs(variant)) {
    it(`validates ${spec.name} with the contract's text`, async () => {
      // engine=draco, or the value the field's condition asks for (engine=meshopt, texture_format=jpeg).
      const condition = spec.onlyWith ? { [spec.onlyWith.field]: conditionValues(spec.onlyWith)[0]! } : {}
      for (const { value, error } of badValues(spec)) {
        const response = await compress({ engine: 'draco', ...condition, [spec.name]: value })
        expect(response.status, `${spec.name}=${value}`).toBe(400)
        expect(await response.json()).toEqual({ error })
      }
    })
  }

  it('refuses engine-specific fields for the other engine', async () => {
    const response = await compress({ engine: 'meshopt', position_quantization_bits: 12 })
    expect(response.status).toBe(400)
    expect((await response.json()).error).toBe(ERROR_TEXTS.invalidField('position_quantization_bits', 'applies only when engine is draco'))
  })

  it(`accepts level ${variant === 'A' ? '1 but not 0' : '0 (raw, re-packed GLB)'}`, async () => {
    const response = await compress({ engine: 'draco', level: 0 })
    if (variant === 'A') {
      expect(response.status).toBe(400)
      return
    }
    expect(response.status).toBe(200)
    const { task_id } = submitResponseSchema.parse(await response.json())
    const record = await waitForTask((p) => service.call(p), task_id)
    expect(record.status).toBe('completed')
    const download = await service.call(`/api/v1/tasks/${task_id}/download`)
    const bytes = new Uint8Array(await download.arrayBuffer())
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('glTF')
    expect(new TextDecoder().decode(bytes)).not.toContain('KHR_draco_mesh_compression')
  })

  it(`answers ${limitStatus} with the contract's text for a file over the limit, and keeps nothing`, async () => {
    const big = new Uint8Array(1.5 * 1024 * 1024).fill(7)
    const response = await compress({ engine: 'draco' }, [{ name: 'big.glb', bytes: big }])
    expect(response.status).toBe(limitStatus)
    expect(await response.json()).toEqual({ error: ERROR_TEXTS.fileTooLarge(1.5, 1) })
    expect(await service.context.storage.taskStore.list()).not.toContainEqual(expect.objectContaining({ input_filename: 'big.glb' }))
  })

  it('runs a task: pending record, then completed with output, then a download', async () => {
    const response = await compress({ engine: 'meshopt' })
    expect(response.status).toBe(200)
    const submitted = submitResponseSchema.parse(await response.json())
    const first = await (await service.call(`/api/v1/tasks/${submitted.task_id}`)).json()
    expect(['pending', 'processing', 'completed']).toContain(first.status)
    if (first.status === 'pending') expect(pendingTaskSchema.parse(first)).toBeTruthy()
    const record = await waitForTask((p) => service.call(p), submitted.task_id)
    const completed = completedTaskSchema.parse(record)
    expect(completed.input_filename).toBe('BoxTextured.glb')
    expect(completed.output.filename).toBe('BoxTextured.meshopt.glb')
    expect(completed.output.compression_ratio).toBeCloseTo(completed.output.size_bytes / completed.input_size_bytes, 3)
    expect(completed.output.savings_percent).toBeCloseTo((1 - completed.output.compression_ratio!) * 100, 1)
    const download = await service.call(`/api/v1/tasks/${submitted.task_id}/download`)
    expect(download.status).toBe(200)
    expect(download.headers.get('content-type')).toBe('application/octet-stream')
    expect(download.headers.get('content-disposition')).toContain('filename="BoxTextured.meshopt.glb"')
    expect((await download.arrayBuffer()).byteLength).toBe(completed.output.size_bytes)
  })

  it('fails a broken file with a reason, without progress, and refuses its download with 409', async () => {
    const response = await compress({ engine: 'draco' }, [
      { name: 'random.glb', bytes: new Uint8Array(2048).map((_, i) => (i * 31) % 256) },
    ])
    const { task_id } = submitResponseSchema.parse(await response.json())
    const record = await waitForTask((p) => service.call(p), task_id)
    expect(failedTaskSchema.parse(record).error).toBe('not a GLB file (bad magic header)')
    expect(record).not.toHaveProperty('progress')
    const download = await service.call(`/api/v1/tasks/${task_id}/download`)
    expect(download.status).toBe(409)
    expect(await download.json()).toEqual({ error: ERROR_TEXTS.taskNotCompleted(task_id, 'failed') })
  })

  it('answers 404 for unknown tasks and routes', async () => {
    for (const path of ['/api/v1/tasks/0000', '/api/v1/tasks/0000/download', '/api/v1/tasks/..%2F..%2Fetc']) {
      const response = await service.call(path)
      expect(response.status).toBe(404)
      expect((await response.json()).error).toMatch(/^task not found: /)
    }
    const response = await service.call('/api/v1/nothing-here')
    expect(response.status).toBe(404)
    expect(await response.json()).toEqual({ error: ERROR_TEXTS.routeNotFound('/api/v1/nothing-here') })
  })

  if (variant === 'B') {
    it.each(['/api/v1/diagnose', '/api/v1/textures/ktx2'])('reserves %s with 501 and an error body', async (path) => {
      const response = await service.call(path, { method: 'POST', body: await form({}, [paths.box]) })
      expect(response.status).toBe(501)
      expect((await response.json()).error).toMatch(/^not implemented: /)
    })
  }
})
