import { OPERATION_NAMES, findOperation, operationFormats } from '@mos/engines'
import { OPERATION_ENDPOINTS, parseCompressFields, TASK_TYPES, UPLOAD_EXTENSIONS, uploadExtensionOf, VARIANTS } from '@mos/sdk/contract'
import { describe, expect, it } from 'vitest'
import type { ServiceContext } from '../src/context.ts'
import { engineOperationCatalog } from '../src/context/operation-catalog.ts'
import { RESERVED_ROUTES, submitRoutes } from '../src/routes/operations.ts'
import { extensionOf } from '../src/routes/submit.ts'

/** Raw form fields that make each endpoint's parse succeed with every default filled. */
const MINIMAL_FIELDS: Record<string, Record<string, string>[]> = {
  compress: [{ engine: 'draco' }, { engine: 'meshopt' }, { engine: 'draco', level: '10', position_quantization_bits: '12' }],
  convert: [{ target_format: 'obj' }],
  repair: [{}],
  diagnose: [{}],
  texture_optimize: [{ format: 'webp' }, { format: 'png', quality: '9' }, { format: 'jpeg', lossy_normal_maps: 'true' }],
  texture_ktx2: [{}, { uastc: 'true' }],
}

// Only what the routes read of the context: the tier's texture limit.
const ctx = { limits: () => ({ maxTextureBytes: 5_000_000 }) } as unknown as ServiceContext

describe('the contract table and the engines registry', () => {
  it('every contract endpoint has an engine operation and every engine operation an endpoint', () => {
    expect(OPERATION_ENDPOINTS.map((endpoint) => endpoint.type)).toEqual([...TASK_TYPES])
    expect([...OPERATION_NAMES].sort()).toEqual([...TASK_TYPES].sort())
    for (const endpoint of OPERATION_ENDPOINTS) expect(findOperation(endpoint.type), endpoint.type).toBeDefined()
  })

  it("the contract's upload extensions (what the CLI judges before sending) are the engines' readers, read as the routes read them", () => {
    for (const type of TASK_TYPES) expect([...UPLOAD_EXTENSIONS[type]].sort(), type).toEqual([...operationFormats(type)].sort())
    for (const name of ['Box.GLB', 'dir.v2/model', 'a\\b\\c.tar.zip', '.obj', 'noext', 'x.'])
      expect(uploadExtensionOf(name), name).toBe(extensionOf(name))
  })

  it('what a route validates, in the contract names, is what the engine parses', () => {
    for (const variant of VARIANTS) {
      for (const route of submitRoutes(variant, engineOperationCatalog())) {
        const operation = findOperation(route.type)!
        const shape = Object.keys((operation.options as unknown as { shape: Record<string, unknown> }).shape)
        for (const raw of MINIMAL_FIELDS[route.type]!) {
          const parsed = route.parseFields(raw, ctx)
          if (!parsed.ok) throw new Error(`${variant} ${route.type}: ${parsed.error}`)
          // Every validated field is an engine option (none is dropped on the way), and it parses.
          for (const key of Object.keys(parsed.value)) expect(shape, `${variant} ${route.type} ${key}`).toContain(key)
          const engine = operation.options.safeParse(parsed.value)
          expect(engine.success, `${variant} ${route.type} ${JSON.stringify(parsed.value)}`).toBe(true)
        }
      }
    }
  })

  it('routes are served or reserved per variant, with the engines formats', () => {
    // The paths of the published interface (sections 4.3-4.8): B reserves diagnose and ktx2.
    expect(submitRoutes('A', engineOperationCatalog()).map((route) => route.path)).toEqual([
      '/compress',
      '/convert',
      '/repair',
      '/diagnose',
      '/textures/optimize',
      '/textures/ktx2',
    ])
    expect(submitRoutes('B', engineOperationCatalog()).map((route) => route.path)).toEqual([
      '/compress',
      '/convert',
      '/repair',
      '/textures/optimize',
    ])
    expect(RESERVED_ROUTES.A).toEqual([])
    expect(RESERVED_ROUTES.B.map((route) => route.path)).toEqual(['/diagnose', '/textures/ktx2'])
    const formats = (type: string) =>
      submitRoutes('A', engineOperationCatalog())
        .find((route) => route.type === type)!
        .formats()
    expect(formats('compress')).toEqual(expect.arrayContaining(['glb', 'gltf', 'obj', 'fbx', 'dae', 'stl', 'ply']))
    expect(formats('compress')).not.toContain('jpg')
    expect(formats('texture_optimize')).toEqual(expect.arrayContaining(['glb', 'jpg', 'png', 'webp']))
  })

  it('texture jobs and compress (whose texture_format re-encodes textures) carry the tier texture limit, other jobs do not', () => {
    const routes = submitRoutes('A', engineOperationCatalog())
    const value = (type: string, raw: Record<string, string>) => {
      const parsed = routes.find((route) => route.type === type)!.parseFields(raw, ctx)
      return parsed.ok ? parsed.value : parsed.error
    }
    expect(value('texture_optimize', { format: 'webp' })).toEqual({
      format: 'webp',
      quality: 82,
      lossy_normal_maps: false,
      maxTextureBytes: 5_000_000,
    })
    expect(value('texture_ktx2', {})).toEqual({ uastc: false, quality: 128, maxTextureBytes: 5_000_000 })
    // A compress job carries the contract's parse as it is (its defaults: sdk's compress-fields.test.ts), and the limit.
    const contract = parseCompressFields('A', { engine: 'meshopt' })
    expect(contract.ok && value('compress', { engine: 'meshopt' })).toEqual(
      contract.ok && { ...contract.value, maxTextureBytes: 5_000_000 },
    )
    expect(value('repair', {})).toEqual({})
  })
})
