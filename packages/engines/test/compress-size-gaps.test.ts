import type { Document } from '@gltf-transform/core'
import { draco, unpartition } from '@gltf-transform/functions'
import { afterAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { countSceneTriangles, createEnginePool, loadPlatform } from '../src/index.ts'
import { readFile } from 'node:fs/promises'
import { compressFileWith, expectBoundsKept } from './support/compress-file.ts'

const { available, paths } = corpusFiles({
  shapes: shared('glb', 'ShapeCollection.glb'),
  sphere: shared('glb', 'DenseSphere.glb'),
  spot: shared('obj', 'spot.obj'),
  beast: shared('obj', 'beast.obj'),
  pirate: shared('obj', 'pirate.obj'),
  texcoordCrash: assimp('glTF2', 'issue_3269', 'texcoord_crash.gltf'),
  clearcoat: assimp('glTF2', 'ClearCoat-glTF', 'ClearCoatTest.gltf'),
  ...Object.fromEntries(
    ['08', '09', '10', '11', '12'].map((n) => [
      `mode${n}`,
      assimp('glTF2', 'glTF-Asset-Generator', 'Mesh_PrimitiveMode', `Mesh_PrimitiveMode_${n}.gltf`),
    ]),
  ),
  knight: shared('glb', 'chr_knight.glb'),
})

const ENGINES = ['draco', 'meshopt'] as const

/** Issue 21's size gaps to gltfpack, each closed at its cause and checked on the corpus file that showed it. */
describe.skipIf(!available)('compress: the size gaps to gltfpack, on the files that showed them', async () => {
  const pool = createEnginePool({ threads: 1 })
  const platform = await loadPlatform()
  afterAll(() => pool.destroy())

  const compressFile = compressFileWith(pool, platform, "the input's")

  const texcoordSets = (doc: Document) =>
    doc
      .getRoot()
      .listMeshes()
      .flatMap((mesh) => mesh.listPrimitives())
      .flatMap((prim) => prim.listSemantics().filter((semantic) => semantic.startsWith('TEXCOORD_')))

  for (const engine of ENGINES) {
    it(`drops texture coordinates no texture reads, and names them with their vertices in the notes (${engine})`, async () => {
      for (const path of [paths.shapes, paths.spot, paths.beast]) {
        const { input, output, details } = await compressFile(path, { engine })
        const inputSets = input
          .getRoot()
          .listMeshes()
          .flatMap((mesh) => mesh.listPrimitives())
          .filter((prim) => prim.getAttribute('TEXCOORD_0'))
        expect(inputSets.length, path).toBeGreaterThan(0)
        const vertices = inputSets.reduce((sum, prim) => sum + prim.getAttribute('TEXCOORD_0')!.getCount(), 0)
        const primitives = inputSets.length
        expect(texcoordSets(output), path).toEqual([])
        expect(details.notes, path).toEqual([
          `TEXCOORD_0 dropped: no texture reads it (${vertices} vertices in ${primitives} ${primitives === 1 ? 'primitive' : 'primitives'})`,
        ])
        // Meshopt drops the slivers its grid collapses (8 of beast's 64 618 triangles); Draco keeps them.
        expect(countSceneTriangles(output), path).toBeLessThanOrEqual(countSceneTriangles(input))
        expect(countSceneTriangles(output), path).toBeGreaterThanOrEqual(countSceneTriangles(input) * 0.999)
        await expectBoundsKept(input, output, 0.001)
      }
    })
  }

  for (const engine of ENGINES) {
    it(`joins the primitives of one mesh that share a material into one, the scene graph kept (pirate.obj, ${engine})`, async () => {
      const { input, output } = await compressFile(paths.pirate, { engine })
      const prims = (doc: Document) =>
        doc
          .getRoot()
          .listMeshes()
          .flatMap((mesh) => mesh.listPrimitives())
      // The reader writes one primitive per OBJ group, all under copies of the one material.
      expect(prims(input).length).toBeGreaterThan(1)
      expect(prims(output)).toHaveLength(1)
      expect(output.getRoot().listNodes()).toHaveLength(input.getRoot().listNodes().length)
      expect(output.getRoot().listMeshes()).toHaveLength(input.getRoot().listMeshes().length)
      expect(countSceneTriangles(output)).toBeLessThanOrEqual(countSceneTriangles(input))
      expect(countSceneTriangles(output)).toBeGreaterThanOrEqual(countSceneTriangles(input) * 0.999)
      await expectBoundsKept(input, output, 0.001)
    })
  }

  it('simplify_ratio=0.5 halves pirate.obj within 5%: its groups are joined before the simplifier sees them', async () => {
    const { input, output, details } = await compressFile(paths.pirate, { engine: 'meshopt', simplify_ratio: 0.5 })
    const simplify = details.simplify as { triangles_before: number; triangles_after: number }
    expect(simplify.triangles_before).toBe(countSceneTriangles(input))
    expect(simplify.triangles_after).toBe(countSceneTriangles(output))
    expect(Math.abs(simplify.triangles_after / (simplify.triangles_before / 2) - 1)).toBeLessThanOrEqual(0.05)
    await expectBoundsKept(input, output, 0.02)
  })

  it('writes points and lines, which Draco leaves plain, smaller than glTF-Transform’s draco() does (Mesh_PrimitiveMode_08–12)', async () => {
    for (const n of ['08', '09', '10', '11', '12']) {
      const path = (paths as Record<string, string>)[`mode${n}`]!
      const { input, output, bytes } = await compressFile(path, { engine: 'draco' })
      const prim = (doc: Document) => doc.getRoot().listMeshes()[0]!.listPrimitives()[0]!
      expect(prim(input).getMode(), path).not.toBe(4) // nothing here for Draco to encode
      expect(Array.from(prim(output).getIndices()!.getArray()!), path).toEqual(Array.from(prim(input).getIndices()!.getArray()!))
      expect(Array.from(prim(output).getAttribute('POSITION')!.getArray()!), path).toEqual(
        Array.from(prim(input).getAttribute('POSITION')!.getArray()!),
      )
      // The library's own draco() on the same one-buffer file, as `gltf-transform draco` runs it.
      const library = await platform.io.readBinary(
        await platform.io.writeBinary(await (await platform.io.read(path)).transform(unpartition())),
      )
      await library.transform(draco())
      expect(bytes.byteLength, path).toBeLessThan((await platform.io.writeBinary(library)).byteLength)
    }
  })

  it('says why meshopt of a Draco input is larger than it (DenseSphere), and that Draco keeps it smaller', async () => {
    const inputBytes = (await readFile(paths.sphere)).byteLength
    const meshopt = await compressFile(paths.sphere, { engine: 'meshopt' })
    expect(meshopt.bytes.byteLength).toBeGreaterThan(inputBytes)
    expect(meshopt.details.notes).toEqual([expect.stringMatching(/^the input was Draco-compressed, .* \(engine=draco keeps it smaller\)$/)])
    expect(meshopt.details.size_rule).toMatchObject({ input_bytes: inputBytes, result_bytes: meshopt.bytes.byteLength, kept_input: false })
    expect(countSceneTriangles(meshopt.output)).toBe(countSceneTriangles(meshopt.input))
    await expectBoundsKept(meshopt.input, meshopt.output, 0.001)
    const dracoResult = await compressFile(paths.sphere, { engine: 'draco' })
    expect(dracoResult.bytes.byteLength).toBeLessThan(inputBytes)
    expect(dracoResult.details.notes).toBeUndefined()
    expect(dracoResult.details.size_rule).toBeUndefined()
  })

  it('merge=true draws texcoord_crash’s five static root nodes as one node and one mesh, smaller than without merge', async () => {
    const plain = await compressFile(paths.texcoordCrash, { engine: 'meshopt' })
    const merged = await compressFile(paths.texcoordCrash, { engine: 'meshopt', merge: true })
    expect(plain.output.getRoot().listNodes().length).toBeGreaterThan(1)
    expect(merged.output.getRoot().listNodes()).toHaveLength(1)
    expect(merged.output.getRoot().listMeshes()).toHaveLength(1)
    const drawCalls = (doc: Document) =>
      doc
        .getRoot()
        .listMeshes()
        .flatMap((mesh) => mesh.listPrimitives()).length
    expect(drawCalls(merged.output)).toBe(drawCalls(plain.output)) // one per material, as before
    expect(countSceneTriangles(merged.output)).toBe(countSceneTriangles(merged.input))
    expect(merged.bytes.byteLength).toBeLessThan(plain.bytes.byteLength)
    await expectBoundsKept(merged.input, merged.output, 0.001)
  })

  it('merge=true leaves meshes whose streams other meshes share unjoined: ClearCoatTest no larger than without merge', async () => {
    const plain = await compressFile(paths.clearcoat, { engine: 'meshopt' })
    const merged = await compressFile(paths.clearcoat, { engine: 'meshopt', merge: true })
    expect(merged.bytes.byteLength).toBeLessThanOrEqual(plain.bytes.byteLength)
    expect(countSceneTriangles(merged.output)).toBe(countSceneTriangles(merged.input))
  })

  it('keeps the texture coordinates a texture reads, with no note (chr_knight)', async () => {
    const { output, details } = await compressFile(paths.knight, { engine: 'meshopt' })
    expect(texcoordSets(output)).toEqual(['TEXCOORD_0'])
    expect(details.notes).toBeUndefined()
  })
})
