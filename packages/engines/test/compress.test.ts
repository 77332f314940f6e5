import { readFile } from 'node:fs/promises'
import { NodeIO } from '@gltf-transform/core'
import { afterAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { expectSameGeometry } from '../../../test/support/geometry.ts'
import { embeddedGltf, sharedWideUvs } from '../../../test/support/gltf-fixtures.ts'
import { draco } from '@gltf-transform/functions'
import { unzipSync } from 'fflate'
import { createEnginePool, loadGltfValidator, loadPlatform, validateGltf } from '../src/index.ts'
import { glbJson } from '../src/io/gltf-limits.ts'
import { success } from './support/job-result.ts'

const { available, paths } = corpusFiles({
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  knight: shared('glb', 'chr_knight.glb'),
  pirate: shared('glb', 'pirate-meshopt.glb'),
})

describe.skipIf(!available)('compress job on real files', async () => {
  const pool = createEnginePool({ threads: 2 })
  const platform = await loadPlatform()
  afterAll(() => pool.destroy())

  for (const [name, path] of Object.entries(paths)) {
    for (const engine of ['draco', 'meshopt'] as const) {
      it(`${name} with ${engine} keeps triangles and bounds`, async () => {
        const progress: number[] = []
        const result = await pool.run(
          { name: 'compress', input: { path }, format: 'glb', options: { engine, level: 7 } },
          { onProgress: (p) => progress.push(p) },
        )
        if (!result.ok) throw new Error(result.message)
        expect(progress.length).toBeGreaterThan(0)
        const input = await platform.io.readBinary(new Uint8Array(await readFile(path)))
        const output = await platform.io.readBinary(result.bytes!)
        const extension = engine === 'draco' ? 'KHR_draco_mesh_compression' : 'EXT_meshopt_compression'
        expect(
          output
            .getRoot()
            .listExtensionsUsed()
            .map((e) => e.extensionName),
        ).toContain(extension)
        expectSameGeometry(input, output)
      })
    }
  }

  it('names Mos and its version as the generator of the glTF it writes, a GLB or a .gltf in a zip', async () => {
    const { version } = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
    const glb = success(await pool.run({ name: 'compress', input: { path: paths.box }, format: 'glb', options: { engine: 'meshopt' } }))
    expect((glbJson(glb.bytes!) as { asset?: unknown }).asset).toEqual({ generator: `Mos ${version}`, version: '2.0' })
    const zip = success(await pool.run({ name: 'convert', input: { path: paths.box }, format: 'glb', options: { target_format: 'gltf' } }))
    const gltf = JSON.parse(new TextDecoder().decode(unzipSync(zip.bytes!)['model.gltf']!))
    expect(gltf.asset.generator).toBe(`Mos ${version}`)
  })

  it('re-encodes an already meshopt-compressed file with Draco alone: smaller than its input and than glTF-Transform’s draco()', async () => {
    const bytes = new Uint8Array(await readFile(paths.pirate))
    const result = await pool.run({
      name: 'compress',
      input: { path: paths.pirate },
      format: 'glb',
      options: { engine: 'draco', level: 7 },
    })
    if (!result.ok) throw new Error(result.message)
    const output = await platform.io.readBinary(result.bytes!)
    const used = output
      .getRoot()
      .listExtensionsUsed()
      .map((e) => e.extensionName)
    expect(used).not.toContain('EXT_meshopt_compression')
    expect(output.getRoot().listAccessors().length).toBe(3) // indices, positions, normals: once each
    expectSameGeometry(await platform.io.readBinary(bytes), output)
    expect((await validateGltf(loadGltfValidator(), result.bytes!, 100))!.report.issues.numErrors).toBe(0)
    // The library's own draco() on the decoded file, as `gltf-transform draco` runs it.
    const library = await platform.io.readBinary(bytes)
    library.disposeExtension('EXT_meshopt_compression')
    await library.transform(draco())
    expect(result.bytes!.length).toBeLessThan(bytes.length)
    expect(result.bytes!.length).toBeLessThanOrEqual((await platform.io.writeBinary(library)).length)
  })

  it('turns random bytes into a failed result, and the pool keeps working', async () => {
    const bytes = new Uint8Array(4096).map((_, i) => (i * 7919) % 251)
    const bad = await pool.run({ name: 'compress', input: { bytes }, format: 'glb', options: { engine: 'draco' } })
    expect(bad).toEqual({ ok: false, message: 'not a GLB file (bad magic header)' })
    const good = await pool.run({ name: 'compress', input: { path: paths.box }, format: 'glb', options: { engine: 'draco' } })
    expect(good.ok).toBe(true)
  })
})

// One thread for the smaller cases below; it starts with the first job, so skipped blocks cost nothing.
const single = createEnginePool({ threads: 1 })
afterAll(() => single.destroy())

const skin = corpusFiles({ simpleSkin: assimp('glTF2', 'simple_skin', 'simple_skin.gltf') })

describe.skipIf(!skin.available)('compress of a glTF with several buffers', () => {
  it('merges them into the one binary chunk a GLB holds, keeping the skin', async () => {
    for (const engine of ['draco', 'meshopt'] as const) {
      const result = await single.run({ name: 'compress', input: { path: skin.paths.simpleSkin }, format: 'gltf', options: { engine } })
      if (!result.ok) throw new Error(result.message)
      const output = await (await loadPlatform()).io.readBinary(result.bytes!)
      expect(output.getRoot().listBuffers()).toHaveLength(1)
      expect(output.getRoot().listSkins()).toHaveLength(1)
    }
  })
})

const broken = corpusFiles({
  infinites: assimp('glTF2', 'BoxWithInfinites-glTF-Binary', 'BoxWithInfinites.glb'),
  sceneWithoutNodes: assimp('glTF2', 'TestNoRootNode', 'SceneWithoutNodes.gltf'),
  noScene: assimp('glTF2', 'TestNoRootNode', 'NoScene.gltf'),
  badNumber: assimp('glTF2', 'wrongTypes', 'badNumber.gltf'),
})

describe.skipIf(!broken.available)('compress of files with nothing (valid) to encode', () => {
  it('refuses positions that are not finite numbers, with both engines, pointing to repair', async () => {
    for (const engine of ['draco', 'meshopt'] as const) {
      const result = await single.run({ name: 'compress', input: { path: broken.paths.infinites }, format: 'glb', options: { engine } })
      expect(result).toEqual({
        ok: false,
        message: 'mesh "Mesh" primitive 0: vertex 0 has a position that is not a finite number (-Infinity); run repair first',
      })
    }
  })

  it("explains a glTF the reader trips over with glTF-Validator's first error, not the reader's internals", async () => {
    for (const name of ['compress', 'convert'] as const) {
      const options = name === 'compress' ? { engine: 'meshopt' } : { target_format: 'obj' }
      const result = await single.run({ name, input: { bytes: embeddedGltf(broken.paths.badNumber) }, format: 'gltf', options })
      expect(result).toEqual({ ok: false, message: "invalid glTF: Property 'index' must be defined. (/materials/0/normalTexture)" })
    }
  })

  it('fails a file whose scenes draw no mesh with a reason, instead of writing a file that compresses nothing', async () => {
    for (const path of [broken.paths.sceneWithoutNodes, broken.paths.noScene]) {
      for (const engine of ['draco', 'meshopt'] as const) {
        const result = await single.run({ name: 'compress', input: { bytes: embeddedGltf(path) }, format: 'gltf', options: { engine } })
        expect(result).toEqual({ ok: false, message: 'nothing to compress: no scene of the file draws a mesh' })
      }
    }
  })
})

describe.skipIf(!available)('warnings of skipped work', () => {
  it('come back with the job (texture coordinates outside [0, 1] that two materials share are not quantized), not on the service output', async () => {
    const result = await single.run({
      name: 'compress',
      input: { bytes: await new NodeIO().writeBinary(sharedWideUvs()) },
      format: 'glb',
      options: { engine: 'meshopt' },
    })
    if (!result.ok) throw new Error(result.message)
    expect(result.details?.warnings).toEqual(['meshopt: TEXCOORD_0 kept as floats (outside [0, 1] and no texture grid covers it)'])
    // The next job on the same thread starts with no warnings of its own.
    const next = await single.run({ name: 'compress', input: { path: paths.knight }, format: 'glb', options: { engine: 'draco' } })
    expect(next.ok && next.details?.warnings).toBeFalsy()
  })
})
