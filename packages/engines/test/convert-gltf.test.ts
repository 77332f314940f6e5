import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { zipSync } from 'fflate'
import { afterAll, describe, expect, it } from 'vitest'
import { assimpInfo, hasAssimpCli } from '../../../test/support/assimp-info.ts'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { countSceneTriangles, createEnginePool, loadPlatform, readModel } from '../src/index.ts'

const glTF2 = (...parts: string[]) => assimp('glTF2', ...parts)
const { available, paths } = corpusFiles({
  dracoGltf: glTF2('draco', '2CylinderEngine.gltf'),
  dracoBin: glTF2('draco', '2CylinderEngine.bin'),
  pirate: shared('glb', 'pirate-meshopt.glb'),
  skin: glTF2('simple_skin', 'simple_skin.gltf'),
  texcoord: glTF2('issue_3269', 'texcoord_crash.gltf'),
  incorrectArrays: glTF2('IncorrectVertexArrays', 'Cube.gltf'),
  indexOutOfRange: glTF2('IndexOutOfRange', 'IndexOutOfRange.gltf'),
  allOutOfRange: glTF2('IndexOutOfRange', 'AllIndicesOutOfRange.gltf'),
  missingBin: glTF2('MissingBin', 'BoxTextured.gltf'),
  recursive: glTF2('RecursiveNodes', 'RecursiveNodes.gltf'),
  noScene: glTF2('TestNoRootNode', 'NoScene.gltf'),
  badArray: glTF2('wrongTypes', 'badArray.gltf'),
  badNumber: glTF2('wrongTypes', 'badNumber.gltf'),
  badNormals: glTF2('BoxBadNormals-glTF-Binary', 'BoxBadNormals.glb'),
  infinites: glTF2('BoxWithInfinites-glTF-Binary', 'BoxWithInfinites.glb'),
})

const cli = hasAssimpCli()

/** A .gltf as a user uploads it: alone, or zipped with the files of its folder when it names any. */
async function upload(path: string): Promise<{ bytes: Uint8Array; format: string }> {
  const bytes = new Uint8Array(await readFile(path))
  if (path.endsWith('.glb')) return { bytes, format: 'glb' }
  if (!/"uri"\s*:\s*"(?!data:)/.test(new TextDecoder().decode(bytes))) return { bytes, format: 'gltf' }
  const files: Record<string, Uint8Array> = {}
  for (const entry of await readdir(dirname(path))) {
    if (!/\.(gltf|glb)$/.test(entry)) files[entry] = new Uint8Array(await readFile(join(dirname(path), entry)))
  }
  files[basename(path)] = bytes
  return { bytes: zipSync(files), format: 'zip' }
}

async function assimpTriangles(bytes: Uint8Array): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'mos-convert-gltf-'))
  try {
    await writeFile(join(dir, 'model.glb'), bytes)
    return (await assimpInfo(join(dir, 'model.glb'), { raw: true })).triangles
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

describe.skipIf(!available)('convert on glTF inputs', async () => {
  const pool = createEnginePool({ threads: 2 })
  const platform = await loadPlatform()
  afterAll(() => pool.destroy())
  const toGlb = async (bytes: Uint8Array, format: string) =>
    pool.run({ name: 'convert', input: { bytes }, format, options: { target_format: 'glb' } })

  it('decodes Draco and meshopt input and writes plain geometry, every triangle kept, assimp opens it', async () => {
    const zip = zipSync({ '2CylinderEngine.gltf': await readFile(paths.dracoGltf), '2CylinderEngine.bin': await readFile(paths.dracoBin) })
    for (const [bytes, format] of [
      [zip, 'zip'],
      [new Uint8Array(await readFile(paths.pirate)), 'glb'],
    ] as const) {
      const expected = countSceneTriangles(await readModel(platform, bytes, format))
      const result = await toGlb(bytes.slice(), format)
      if (!result.ok) throw new Error(result.message)
      const out = await platform.io.readBinary(result.bytes!)
      expect(
        out
          .getRoot()
          .listExtensionsUsed()
          .map((e) => e.extensionName),
      ).not.toContain('KHR_draco_mesh_compression')
      expect(
        out
          .getRoot()
          .listExtensionsUsed()
          .map((e) => e.extensionName),
      ).not.toContain('EXT_meshopt_compression')
      expect(countSceneTriangles(out)).toBe(expected)
      if (cli) expect(await assimpTriangles(result.bytes!)).toBe(expected)
    }
  })

  it('merges buffers for GLB and renumbers a lone TEXCOORD_1, so assimp opens the output', async () => {
    for (const path of [paths.skin, paths.texcoord]) {
      const bytes = new Uint8Array(await readFile(path))
      const expected = countSceneTriangles(await readModel(platform, bytes, 'gltf'))
      const result = await toGlb(bytes, 'gltf')
      if (!result.ok) throw new Error(result.message)
      if (cli) expect(await assimpTriangles(result.bytes!)).toBe(expected)
    }
  })

  it('writes unit normals (glTF requires them) for a file whose normals are not', async () => {
    const result = await pool.run({ name: 'convert', input: { path: paths.badNormals }, format: 'glb', options: { target_format: 'glb' } })
    if (!result.ok) throw new Error(result.message)
    const input = await readModel(platform, new Uint8Array(await readFile(paths.badNormals)), 'glb')
    const lengths = (doc: typeof input) => {
      const normal = doc.getRoot().listMeshes()[0]!.listPrimitives()[0]!.getAttribute('NORMAL')!
      const out: number[] = []
      const n: number[] = []
      for (let i = 0; i < normal.getCount(); i++) out.push(Math.hypot(...normal.getElement(i, n)))
      return out
    }
    expect(lengths(input).some((l) => Math.abs(l - 1) > 0.01)).toBe(true)
    expect(lengths(await platform.io.readBinary(result.bytes!)).every((l) => Math.abs(l - 1) < 1e-5)).toBe(true)
  })

  it('fails the broken glTF2 corpus files with a reason', async () => {
    const cases: [keyof typeof paths, RegExp][] = [
      ['incorrectArrays', /^invalid glTF: /],
      ['indexOutOfRange', /^invalid input: mesh "Mesh" primitive 0 references vertex 255 of 24/],
      ['allOutOfRange', /^invalid input: .* references vertex 65535 of 24/],
      ['missingBin', /^external resource not available: "BoxTextured0.bin"/],
      ['recursive', /^the model has no geometry in any scene$/],
      ['noScene', /^the model has no geometry in any scene$/],
      // Uploaded as a zip with their .bin: glTF-Validator, given the zip's files, says what is wrong (the reader said "Cannot read properties of undefined").
      ['badArray', /^invalid glTF: Type mismatch\. Property value .* is not a 'array'\. \(\/meshes\/0\/primitives\)$/],
      ['badNumber', /^invalid glTF: Property 'index' must be defined\. \(\/materials\/0\/normalTexture\)$/],
      ['infinites', /^invalid input: mesh "Mesh" has 24 non-finite position values/],
    ]
    for (const [name, message] of cases) {
      const { bytes, format } = await upload(paths[name])
      const result = await toGlb(bytes, format)
      expect(result.ok, name).toBe(false)
      expect(!result.ok && result.message, name).toMatch(message)
    }
  })
})
