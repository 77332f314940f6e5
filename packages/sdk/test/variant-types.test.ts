import { describe, expectTypeOf, it } from 'vitest'
import { createClient, type CompletedTask, type FailedTask, type HealthA, type HealthB } from '../src/index.ts'
import { createClient as createNodeClient } from '../src/node.ts'

// Checked by `tsc -p packages/sdk` (npm run typecheck); at run time the calls are never made.
describe('variant-specific documents are typed', () => {
  const a = createClient({ baseURL: 'http://x', variant: 'A' })
  const b = createClient({ baseURL: 'http://x', variant: 'B' })
  const unknown = createClient({ baseURL: 'http://x' })

  it('health', () => {
    expectTypeOf(b.health).returns.resolves.toEqualTypeOf<HealthB>()
    expectTypeOf(b.health).returns.resolves.toHaveProperty('uptime_seconds').toEqualTypeOf<number>()
    expectTypeOf(a.health).returns.resolves.toEqualTypeOf<HealthA>()
    expectTypeOf(a.health).returns.resolves.not.toHaveProperty('uptime_seconds')
    expectTypeOf(unknown.health).returns.resolves.toEqualTypeOf<HealthA | HealthB>()
    async function onlyOnB() {
      const health = await a.health()
      // @ts-expect-error variant A's health has no uptime
      return health.uptime_seconds
    }
    void onlyOnB
  })

  it('capabilities, license info and verify', () => {
    expectTypeOf(a.capabilities)
      .returns.resolves.toHaveProperty('features')
      .toEqualTypeOf<('compress' | 'convert' | 'repair' | 'diagnose' | 'texture_optimize' | 'texture_ktx2')[]>()
    expectTypeOf(b.capabilities).returns.resolves.toHaveProperty('license').toHaveProperty('tier').toEqualTypeOf<number>()
    expectTypeOf(a.licenseInfo).returns.resolves.toHaveProperty('tier').toEqualTypeOf<string>()
    expectTypeOf(b.licenseInfo).returns.resolves.toHaveProperty('tier').toEqualTypeOf<number>()
    expectTypeOf(a.licenseVerify).returns.resolves.toHaveProperty('valid').toEqualTypeOf<boolean>()
    expectTypeOf(b.licenseVerify).returns.resolves.toHaveProperty('expires_at').toEqualTypeOf<number>()
    expectTypeOf(a.licenseVerify).returns.resolves.toHaveProperty('expires_at').toEqualTypeOf<string>()
  })

  it('the node client keeps the variant and accepts paths', () => {
    const node = createNodeClient({ baseURL: 'http://x', variant: 'B' })
    expectTypeOf(node.health).returns.resolves.toEqualTypeOf<HealthB>()
    expectTypeOf(node.compress).parameter(0).toHaveProperty('file').extract<string>().toEqualTypeOf<string>()
    // @ts-expect-error the browser-safe client takes no paths
    void (() => a.compress({ file: 'model.glb', engine: 'draco' }))
  })

  it('waits resolve with a terminal record; ...AndWait only with a completed one', () => {
    expectTypeOf(a.waitForTask).returns.resolves.toEqualTypeOf<CompletedTask | FailedTask>()
    expectTypeOf(a.compressAndWait).returns.resolves.toEqualTypeOf<CompletedTask>()
    // @ts-expect-error engine is required
    void (() => a.compress({ file: new Uint8Array(), filename: 'a.glb' }))
    // @ts-expect-error engines are draco or meshopt
    void (() => a.compress({ file: new Uint8Array(), filename: 'a.glb', engine: 'gzip' }))
  })
})
