import { readFile } from 'node:fs/promises'
import type { Document, Primitive } from '@gltf-transform/core'
import { zipSync } from 'fflate'
import { describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { poolReadingBack } from './support/fidelity-readback.ts'

/**
 * Meshes that come without a material (an OBJ without an .mtl, an STL, a PLY without a texture) are
 * written to glTF with a plain grey non-metallic material, as their viewers draw them, and not left to
 * glTF's default (white, metallic 1), which viewers draw near black; a glTF input keeps its author's
 * choice, and an OBJ output stays a bare .obj.
 */
const { available, paths } = corpusFiles({
  cow: shared('obj', 'cow.obj'),
  wuson: assimp('STL', 'Wuson.stl'),
  colouredPly: assimp('PLY', 'float-color.ply'),
  cubePly: assimp('PLY', 'cube_uv.ply'),
  camerasGltf: assimp('glTF2', 'cameras', 'Cameras.gltf'),
  camerasBin: assimp('glTF2', 'cameras', 'simpleSquare.bin'),
})

const file = async (path: string) => new Uint8Array(await readFile(path))

describe.skipIf(!available)('meshes without a material: plain grey and non-metallic in glTF outputs', async () => {
  const { run, readValid } = await poolReadingBack()
  const primitives = (doc: Document): Primitive[] =>
    doc
      .getRoot()
      .listMeshes()
      .flatMap((mesh) => mesh.listPrimitives())
  /** Base colour, metallic and roughness of each primitive's material (null: none). */
  const looks = (doc: Document) =>
    primitives(doc).map((prim) => {
      const material = prim.getMaterial()
      return (
        material && {
          base: material.getBaseColorFactor(),
          metallic: material.getMetallicFactor(),
          roughness: material.getRoughnessFactor(),
        }
      )
    })
  const grey = { base: [0.8, 0.8, 0.8, 1], metallic: 0, roughness: 1 }

  it('cow.obj (no .mtl) through convert to glb and gltf, and compress: one grey material, named in the notes', async () => {
    const outputs = [
      await run('convert', await file(paths.cow), 'obj', { target_format: 'glb' }),
      await run('convert', await file(paths.cow), 'obj', { target_format: 'gltf' }),
      await run('compress', await file(paths.cow), 'obj', { engine: 'meshopt' }),
      await run('compress', await file(paths.cow), 'obj', { engine: 'draco' }),
    ]
    for (const result of outputs) {
      const doc = await readValid(result.bytes!, result.extension!)
      expect(looks(doc)).toEqual([grey])
      expect(result.details?.notes).toContain(
        'no material in the OBJ: 1 primitive given a plain grey non-metallic material, as OBJ viewers show it',
      )
    }
  })

  it('an STL and a PLY without texture: grey; a PLY with vertex colours: white, so that its colours show as they are', async () => {
    const stl = await run('convert', await file(paths.wuson), 'stl', { target_format: 'glb' })
    expect(looks(await readValid(stl.bytes!, 'glb'))).toEqual([grey])
    expect(stl.details?.notes).toContain(
      'no material in the STL: 1 primitive given a plain grey non-metallic material, as STL viewers show it',
    )
    const cube = await run('compress', await file(paths.cubePly), 'ply', { engine: 'meshopt' })
    expect(looks(await readValid(cube.bytes!, 'glb'))).toEqual([grey])
    const coloured = await run('convert', await file(paths.colouredPly), 'ply', { target_format: 'glb' })
    const doc = await readValid(coloured.bytes!, 'glb')
    expect(looks(doc)).toEqual([{ base: [1, 1, 1, 1], metallic: 0, roughness: 1 }])
    expect(primitives(doc)[0]!.getAttribute('COLOR_0')).not.toBeNull()
    expect(coloured.details?.notes).toContain(
      'no material in the PLY: 1 primitive given a plain non-metallic material, as PLY viewers show it',
    )
  })

  it('a glTF without a material keeps glTF’s default; an OBJ written as OBJ stays a bare .obj', async () => {
    const gltf = zipSync({ 'Cameras.gltf': await file(paths.camerasGltf), 'simpleSquare.bin': await file(paths.camerasBin) })
    const fromGltf = await run('convert', gltf, 'zip', { target_format: 'glb' })
    expect(looks(await readValid(fromGltf.bytes!, 'glb'))).toEqual([null])
    expect(JSON.stringify(fromGltf.details?.notes ?? [])).not.toContain('no material')
    const obj = await run('convert', await file(paths.cow), 'obj', { target_format: 'obj' })
    expect(obj.extension).toBe('obj')
    expect(new TextDecoder().decode(obj.bytes!)).not.toMatch(/^(mtllib|usemtl) /m)
  })
})
