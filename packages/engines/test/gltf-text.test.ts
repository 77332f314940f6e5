import { readFile } from 'node:fs/promises'
import { strToU8, zipSync } from 'fflate'
import { afterAll, describe, expect, it } from 'vitest'
import { corpusFiles, shared } from '../../../test/support/corpus.ts'
import { countSceneTriangles, createEnginePool, loadPlatform } from '../src/index.ts'
import { gltfJsonText } from '../src/io/gltf-text.ts'
import { success } from './support/job-result.ts'

const { available, paths } = corpusFiles({ knight: shared('glb', 'chr_knight.glb') })

const GLB_WARNING = '[gltf] the .gltf file is a binary glTF (GLB): read as the .glb it is'

describe('a .gltf is JSON text before its nesting is counted', () => {
  it('bytes that are not UTF-8 are refused saying so, however many [ and { they hold', () => {
    const binary = new Uint8Array(4096).map((_, i) => (i % 2 === 0 ? 0x5b : 0xff))
    expect(() => gltfJsonText(binary)).toThrow(
      /^invalid glTF JSON: the file is not UTF-8 text \(a \.gltf holds JSON; binary glTF is a \.glb\)$/,
    )
  })

  it('text that does not open a JSON object is refused saying so', () => {
    expect(() => gltfJsonText(strToU8(`ply\n${'['.repeat(1000)}`))).toThrow(/^invalid glTF JSON: a \.gltf holds one JSON object/)
  })

  it('a GLB is named as one', () => {
    const glb = new Uint8Array(32)
    new DataView(glb.buffer).setUint32(0, 0x46546c67, true)
    expect(() => gltfJsonText(glb)).toThrow(/binary glTF \(GLB\), not JSON/)
  })

  it('JSON text passes, with a BOM and leading white space, and deep nesting is still refused', () => {
    const json = '\n {"asset":{"version":"2.0"}}'
    expect(gltfJsonText(new Uint8Array([0xef, 0xbb, 0xbf, ...strToU8(json)]))).toBe(json)
    expect(() => gltfJsonText(strToU8(`{"a":${'['.repeat(300)}${']'.repeat(300)}}`))).toThrow(/nested too deeply/)
  })
})

describe.skipIf(!available)('a GLB uploaded under a .gltf name is read as the GLB it is', async () => {
  const pool = createEnginePool({ threads: 1 })
  const platform = await loadPlatform()
  afterAll(() => pool.destroy())
  const knight = async () => new Uint8Array(await readFile(paths.knight))
  const run = async (name: 'compress' | 'repair' | 'diagnose', options: Record<string, unknown>) =>
    success(await pool.run({ name, input: { bytes: await knight() }, format: 'gltf', options }))

  it('compress: the knight compressed, with a warning saying what the file was', async () => {
    const result = await run('compress', { engine: 'draco' })
    const doc = await platform.io.readBinary(result.bytes!)
    expect(countSceneTriangles(doc)).toBe(countSceneTriangles(await platform.io.readBinary(await knight())))
    expect(result.details?.warnings).toEqual([GLB_WARNING])
  })

  it('repair writes a .glb back (its own container), diagnose says glb 2.0', async () => {
    const repaired = await run('repair', {})
    expect(repaired.extension).toBe('glb')
    const diagnosed = await run('diagnose', {})
    const result = JSON.parse(new TextDecoder().decode(diagnosed.bytes!))
    expect(result).toMatchObject({ format: 'glb', version: '2.0' })
    expect(diagnosed.details?.warnings).toEqual([GLB_WARNING])
  })

  it('inside a zip too: compressed with the same warning, and diagnosed as glb 2.0', async () => {
    const zip = zipSync({ 'knight/knight.gltf': await knight() })
    const inZip = async (name: 'compress' | 'diagnose', options: Record<string, unknown>) =>
      success(await pool.run({ name, input: { bytes: zip.slice() }, format: 'zip', options }))
    const compressed = await inZip('compress', { engine: 'meshopt' })
    const doc = await platform.io.readBinary(compressed.bytes!)
    expect(countSceneTriangles(doc)).toBe(countSceneTriangles(await platform.io.readBinary(await knight())))
    expect(compressed.details?.warnings).toEqual([GLB_WARNING])
    const diagnosed = await inZip('diagnose', {})
    expect(JSON.parse(new TextDecoder().decode(diagnosed.bytes!))).toMatchObject({ format: 'glb', version: '2.0' })
    expect(diagnosed.details?.warnings).toEqual([GLB_WARNING])
  })
})
