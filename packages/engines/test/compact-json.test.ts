import { unzipSync } from 'fflate'
import { afterAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { sharedWideUvs } from '../../../test/support/gltf-fixtures.ts'
import { createEnginePool, loadPlatform } from '../src/index.ts'
import { glbJson } from '../src/io/gltf-limits.ts'
import { writeModel } from '../src/io/index.ts'
import { validateGlb } from './texture-fixtures.ts'
import { glbOf } from './support/compress-file.ts'
import { success } from './support/job-result.ts'

const { available, paths } = corpusFiles({
  texcoordCrash: assimp('glTF2', 'issue_3269', 'texcoord_crash.gltf'),
  specGloss: assimp('glTF2', 'BoxTextured-glTF-pbrSpecularGlossiness', 'BoxTextured.gltf'),
})

/** What glTF-Transform writes out and a reader assumes anyway (io/compact-json.ts). */
const DEFAULTS = /"normalized":false|"byteOffset":0\b|"mode":4\b|"wrap[ST]":10497|"interpolation":"LINEAR"|"samplers":\[\{\}\]/
/** A number printed with more digits than its float32 needs. */
const LONG_FLOAT = /\d\.\d{10,}/

describe('every glTF Mos writes has compact JSON', () => {
  it('keeps a node transform to the digit, as a converted scene far from the origin needs', async () => {
    const doc = sharedWideUvs() // any scene: one triangle mesh under one node
    const translation: [number, number, number] = [4_512_345.123456789, 0.1, -7.000000000000001]
    doc.getRoot().listNodes()[0]!.setTranslation(translation)
    const written = await writeModel(await loadPlatform(), doc, 'glb')
    const json = glbJson(written.bytes) as { nodes: { translation: number[] }[] }
    expect(json.nodes[0]!.translation).toEqual(translation)
    expect(JSON.stringify(json)).not.toMatch(DEFAULTS)
    expect((await validateGlb(written.bytes)).errors).toEqual([])
  })
})

describe.skipIf(!available)('every glTF Mos writes has compact JSON, on corpus files', async () => {
  const pool = createEnginePool({ threads: 1 })
  const platform = await loadPlatform()
  afterAll(() => pool.destroy())

  for (const [name, options] of [
    ['compress', { engine: 'draco' }],
    ['convert', { target_format: 'glb' }],
    ['repair', {}],
  ] as const) {
    it(`${name} ${JSON.stringify(options)}: no spec default and no long material factor in the JSON, and the file valid (texcoord_crash, specular-glossiness box)`, async () => {
      for (const path of [paths.texcoordCrash, paths.specGloss]) {
        const result = success(await pool.run({ name, input: { bytes: await glbOf(platform, path) }, format: 'glb', options }))
        const json = glbJson(result.bytes!) as { materials: unknown[] }
        expect(JSON.stringify(json)).not.toMatch(DEFAULTS)
        expect(JSON.stringify(json.materials)).not.toMatch(LONG_FLOAT)
        expect((await validateGlb(result.bytes!)).errors).toEqual([])
      }
    })
  }

  it('convert to gltf: the zip’s model.gltf is compact too', async () => {
    const result = success(
      await pool.run({
        name: 'convert',
        input: { bytes: await glbOf(platform, paths.specGloss) },
        format: 'glb',
        options: { target_format: 'gltf' },
      }),
    )
    const gltf = new TextDecoder().decode(unzipSync(result.bytes!)['model.gltf'])
    expect(gltf.replace(/\s+/g, '')).not.toMatch(DEFAULTS)
    expect(gltf).toMatch(/"specularFactor": \[\s*0\.2,\s*0\.2,\s*0\.2\s*\]/)
  })
})
