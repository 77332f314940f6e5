import { readFile } from 'node:fs/promises'
import type { Document } from '@gltf-transform/core'
import { afterAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { countMeshTriangles, createEnginePool, loadPlatform } from '../src/index.ts'
import { glbChunkLengths } from '../src/io/gltf.ts'
import { glbJson } from '../src/io/gltf-limits.ts'
import type { DiagnosisResult } from '../src/ops/diagnosis-types.ts'
import { compressFileWith, expectBoundsKept, glbOf } from './support/compress-file.ts'
import { gltfpack } from '../../../test/support/gltfpack.ts'
import { success } from './support/job-result.ts'
import { validateGlb } from './texture-fixtures.ts'
import { glbOf as glbFromChunks } from './support/bombs.ts'

const { available, paths } = corpusFiles({
  cow: shared('obj', 'cow.obj'),
  knight: shared('glb', 'chr_knight.glb'),
  morphCube: assimp('glTF2', 'glTF-Sample-Models', 'AnimatedMorphCube-glTF', 'AnimatedMorphCube.gltf'),
  skin: assimp('glTF2', 'simple_skin', 'simple_skin.gltf'),
})

const KHR = 'KHR_meshopt_compression'
const EXT = 'EXT_meshopt_compression'

interface MeshoptView {
  buffer: number
  byteOffset?: number
  byteLength: number
  mode: string
}

interface GlbParts {
  json: {
    extensionsUsed?: string[]
    extensionsRequired?: string[]
    accessors: { bufferView?: number }[]
    bufferViews: { extensions?: Record<string, MeshoptView> }[]
    buffers: { uri?: string; extensions?: Record<string, { fallback?: boolean }> }[]
  }
  bin: Uint8Array
}

/** A GLB's JSON, parsed, and its binary chunk. */
function glbParts(bytes: Uint8Array): GlbParts {
  const { json } = glbChunkLengths(bytes)!
  return { json: glbJson(bytes) as GlbParts['json'], bin: bytes.subarray(20 + json + 8) }
}

/** Every accessor's values, in the document's order: what a reader gets from the file. */
const accessorValues = (doc: Document) =>
  doc
    .getRoot()
    .listAccessors()
    .map((accessor) => Array.from(accessor.getArray() ?? []))

describe.skipIf(!available)('KHR_meshopt_compression: read, and written when compress asks for it', async () => {
  const pool = createEnginePool({ threads: 1 })
  const platform = await loadPlatform()
  afterAll(() => pool.destroy())
  const compressFile = compressFileWith(pool, platform)

  it('meshopt_extension=khr declares KHR_meshopt_compression alone, codes vertex streams with the v1 codec, and decodes to what ext decodes to, smaller', async () => {
    for (const path of [paths.cow, paths.knight, paths.morphCube, paths.skin]) {
      const ext = await compressFile(path, { engine: 'meshopt' })
      const khr = await compressFile(path, { engine: 'meshopt', meshopt_extension: 'khr' })
      const { json, bin } = glbParts(khr.bytes)
      expect(json.extensionsUsed, path).toContain(KHR)
      expect(json.extensionsRequired, path).toContain(KHR)
      expect(JSON.stringify(json), path).not.toContain(EXT)
      // The views EXT compresses (all but 8-bit morph weights' keyframes) under the other name; vertex
      // streams open with version 1's header (0xa1), index streams with the index codec's (0xe1).
      const compressed = (parts: GlbParts, name: string) => parts.json.bufferViews.flatMap((view) => view.extensions?.[name] ?? [])
      expect(compressed(glbParts(khr.bytes), KHR).map((view) => view.mode)).toEqual(
        compressed(glbParts(ext.bytes), EXT).map((view) => view.mode),
      )
      for (const view of compressed(glbParts(khr.bytes), KHR)) {
        expect(bin[view.byteOffset ?? 0], `${path} (${view.mode})`).toBe(view.mode === 'ATTRIBUTES' ? 0xa1 : 0xe1)
      }
      expect(json.buffers.filter((buffer) => buffer.extensions?.[KHR]?.fallback === true)).toHaveLength(1)
      // Only the codec differs: the same accessors come out, in fewer bytes.
      expect(accessorValues(khr.output), path).toEqual(accessorValues(ext.output))
      expect(khr.bytes.byteLength, path).toBeLessThan(ext.bytes.byteLength)
    }
  })

  it('reads the KHR_meshopt_compression files gltfpack writes (-cz) as their EXT twins (-cc), in compress (either engine), diagnose, repair and convert', async () => {
    for (const [path, extension] of [
      [paths.cow, 'obj'],
      [paths.knight, 'glb'],
    ] as const) {
      const input = new Uint8Array(await readFile(path))
      const [cz, cc] = [await gltfpack(input, extension, ['-cz']), await gltfpack(input, extension, ['-cc'])]
      expect(glbParts(cz).json.extensionsRequired).toContain(KHR)
      const [khrDoc, extDoc] = [await platform.io.readBinary(cz), await platform.io.readBinary(cc)]
      expect(accessorValues(khrDoc), path).toEqual(accessorValues(extDoc))
      for (const engine of ['meshopt', 'draco']) {
        // A job takes its bytes (they move to the engine thread): each gets a copy.
        const result = success(await pool.run({ name: 'compress', input: { bytes: cz.slice() }, format: 'glb', options: { engine } }))
        expect((await validateGlb(result.bytes!)).errors, `${path} ${engine}`).toEqual([])
        const output = await platform.io.readBinary(result.bytes!)
        expect(countMeshTriangles(output), `${path} ${engine}`).toBe(countMeshTriangles(khrDoc))
        await expectBoundsKept(khrDoc, output, 0.001)
        expect(glbParts(result.bytes!).json.extensionsUsed, `${path} ${engine}`).not.toContain(KHR)
      }
      // Diagnose sees the geometry compressed, as it sees the EXT file's.
      const diagnose = async (bytes: Uint8Array) => {
        const result = success(await pool.run({ name: 'diagnose', input: { bytes: bytes.slice() }, format: 'glb', options: {} }))
        return (result.details as { result: DiagnosisResult }).result.issues.map((issue) => issue.type)
      }
      expect(await diagnose(cz)).not.toContain('uncompressed_geometry')
      expect(await diagnose(cz)).toEqual(await diagnose(cc))
      // Repair writes the model with the compression it came with: KHR_ still, valid, and what it makes of the EXT twin.
      const repair = async (bytes: Uint8Array) => {
        const result = success(await pool.run({ name: 'repair', input: { bytes: bytes.slice() }, format: 'glb', options: {} }))
        expect((await validateGlb(result.bytes!)).errors, `${path} repair`).toEqual([])
        return result.bytes!
      }
      const [repairedKhr, repairedExt] = [await repair(cz), await repair(cc)]
      expect(glbParts(repairedKhr).json.extensionsRequired, `${path} repair`).toContain(KHR)
      expect(glbParts(repairedExt).json.extensionsRequired, `${path} repair`).toContain(EXT)
      expect(accessorValues(await platform.io.readBinary(repairedKhr)), `${path} repair`).toEqual(
        accessorValues(await platform.io.readBinary(repairedExt)),
      )
      // Convert writes the geometry plain, as from any compressed input.
      const converted = success(
        await pool.run({ name: 'convert', input: { bytes: cz.slice() }, format: 'glb', options: { target_format: 'glb' } }),
      )
      expect(glbParts(converted.bytes!).json.extensionsUsed ?? []).not.toContain(KHR)
      expect(countMeshTriangles(await platform.io.readBinary(converted.bytes!))).toBe(countMeshTriangles(khrDoc))
    }
  })

  it('a file declaring its index views with EXT_ and its vertex views with KHR_ reads whole, and is written back with KHR_ alone', async () => {
    // Index streams are coded the same under both names (the index codec's version 1), so this file is valid as it stands.
    const cz = await gltfpack(await glbOf(platform, paths.skin), 'glb', ['-cz'])
    const { json } = glbParts(cz)
    let moved = 0
    for (const view of json.bufferViews) {
      const meshopt = view.extensions?.[KHR]
      if (!meshopt || meshopt.mode === 'ATTRIBUTES') continue
      view.extensions = { [EXT]: meshopt }
      moved++
    }
    expect(moved).toBeGreaterThan(0)
    json.extensionsUsed = [...json.extensionsUsed!, EXT]
    json.extensionsRequired = [...json.extensionsRequired!, EXT]
    const mixed = glbFromChunks(json, glbParts(cz).bin)
    const doc = await platform.io.readBinary(mixed)
    expect(accessorValues(doc)).toEqual(accessorValues(await platform.io.readBinary(cz)))
    expect(
      doc
        .getRoot()
        .listExtensionsUsed()
        .map((extension) => extension.extensionName),
    ).not.toContain(EXT)
    const written = glbParts(await platform.io.writeBinary(doc)).json
    expect(written.extensionsUsed).toContain(KHR)
    expect(JSON.stringify(written)).not.toContain(EXT)
  })
})
