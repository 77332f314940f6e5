import { diagnosisResultSchema, MODEL_FORMATS, OUTPUT_FORMATS, TEXTURE_FORMATS, type ModelFormat, type TaskType } from '@mos/sdk/contract'
import { expect, expectSchema } from '../assert.ts'
import { fail, type Check } from '../check.ts'
import type { RunContext } from '../context.ts'
import type { Fixture, Fixtures } from '../fixtures/index.ts'
import { glbImages } from '../inspect/glb-json.ts'
import { imageSize, inspectKtx2, sniffImage } from '../inspect/image.ts'
import { countObjTriangles, countPlyTriangles, countStlTriangles, inspectGlb, inspectGltfZip } from '../inspect/model.ts'
import { checkSizeFigures, checkTaskRecords, completedTask, type Fields } from '../tasks.ts'

const fixture = (name: keyof Fixtures) => async (ctx: RunContext) => (await ctx.fixtures())[name] as Fixture

/** A completed task of an operation: records checked, download length equal to output.size_bytes. */
async function finished(ctx: RunContext, key: string, type: TaskType, path: string, fields: Fields, file: keyof Fixtures) {
  const run = await completedTask(ctx, key, type, path, fields, fixture(file))
  checkTaskRecords(run)
  const size = (run.final.output as { size_bytes: number }).size_bytes
  expect(run.output.byteLength === size, `downloaded ${run.output.byteLength} bytes, output.size_bytes is ${size}`)
  return run
}

const wrap = <T>(what: string, promise: Promise<T> | (() => T)) =>
  (typeof promise === 'function' ? Promise.resolve().then(promise) : promise).catch((error: Error) => fail(`${what}: ${error.message}`))

/** Opens a converted file by its format and returns its triangle count. */
async function trianglesOf(format: ModelFormat, bytes: Uint8Array): Promise<number | undefined> {
  const text = () => new TextDecoder().decode(bytes)
  switch (format) {
    case 'glb':
      return (await wrap('the result is not a readable GLB', inspectGlb(bytes))).triangles
    case 'gltf':
      return (await wrap('the result is not a readable .zip glTF bundle', inspectGltfZip(bytes))).triangles
    case 'obj':
      return wrap('the result is not OBJ', () => countObjTriangles(text()))
    case 'stl':
      return wrap('the result is not STL', () => countStlTriangles(bytes))
    case 'ply':
      return wrap('the result is not PLY', () => countPlyTriangles(bytes))
    case 'fbx': {
      const head = new TextDecoder('latin1').decode(bytes.subarray(0, 64))
      expect(head.startsWith('Kaydara FBX Binary') || /^\s*;\s*FBX/.test(head), 'the result is not FBX (no binary or ASCII FBX header)')
      return undefined
    }
    case 'dae':
      expect(/<COLLADA[\s>]/.test(text().slice(0, 4096)), 'the result is not COLLADA (no <COLLADA> element)')
      return undefined
  }
}

const convertChecks: Check[] = MODEL_FORMATS.map((format): Check => ({
  id: `convert.output.${format}`,
  group: 'convert',
  title: `target_format=${format}: the task completes and the result parses as ${format === 'gltf' ? 'a .zip bundle with .gltf and .bin' : format}, with the input's triangles`,
  profile: 'core',
  variants: OUTPUT_FORMATS.B.includes(format) ? ['A', 'B'] : ['A'],
  needs: { feature: 'convert' },
  async run(ctx) {
    const run = await finished(ctx, `convert small ${format}`, 'convert', '/convert', { target_format: format }, 'small')
    if (format === 'gltf') expect(run.filename.toLowerCase().endsWith('.zip'), `output.filename is ${JSON.stringify(run.filename)}; a gltf result is a .zip bundle`)
    const triangles = await trianglesOf(format, run.output)
    const expected = (await ctx.fixtures()).small.triangles
    if (triangles !== undefined) expect(triangles === expected, `the ${format} result has ${triangles} triangles, the input ${expected}`)
  },
}))

convertChecks.push({
  id: 'convert.input.obj',
  group: 'convert',
  title: 'An OBJ upload converts to a GLB with its triangles',
  profile: 'core',
  variants: ['A', 'B'],
  needs: { feature: 'convert' },
  async run(ctx) {
    const run = await finished(ctx, 'convert obj glb', 'convert', '/convert', { target_format: 'glb' }, 'smallObj')
    const facts = await wrap('the result is not a readable GLB', inspectGlb(run.output))
    expect(facts.triangles === 32, `the GLB has ${facts.triangles} triangles, the OBJ 32`)
  },
})

const repairChecks: Check[] = [
  {
    id: 'repair.output',
    group: 'repair',
    title: 'Repair of a GLB with duplicate vertices and degenerate faces: a GLB without degenerate faces, with fewer vertices',
    profile: 'core',
    variants: ['A', 'B'],
    needs: { feature: 'repair' },
    async run(ctx) {
      const { defects } = await ctx.fixtures()
      const run = await finished(ctx, 'repair defects', 'repair', '/repair', {}, 'defects')
      const facts = await wrap('the result is not a readable GLB', inspectGlb(run.output))
      expect(facts.degenerate === 0, `the repaired mesh still has ${facts.degenerate} degenerate faces`)
      expect(facts.vertices < defects.vertices!, `the repaired mesh has ${facts.vertices} vertices, the input ${defects.vertices} of which many are duplicates`)
      const valid = defects.triangles! - defects.degenerate
      expect(facts.triangles === valid, `the repaired mesh has ${facts.triangles} triangles, expected the ${valid} valid ones`)
    },
  },
]

const diagnoseChecks: Check[] = [
  {
    id: 'diagnose.result',
    group: 'diagnose',
    title: 'Diagnose of a GLB with known defects: the result object (2.3) reports its mesh, duplicate_vertices and degenerate_faces',
    profile: 'core',
    variants: ['A'],
    needs: { feature: 'diagnose' },
    async run(ctx) {
      const { defects } = await ctx.fixtures()
      const run = await finished(ctx, 'diagnose defects', 'diagnose', '/diagnose', {}, 'defects')
      expect(run.final.result !== undefined, 'the completed diagnose record has no result object')
      const result = expectSchema(diagnosisResultSchema, run.final.result, 'the diagnosis result')
      expect(result.file_size_bytes === defects.bytes.byteLength, `file_size_bytes is ${result.file_size_bytes}, the upload ${defects.bytes.byteLength}`)
      expect(result.meshes.length === 1, `${result.meshes.length} meshes reported, the file has 1`)
      const mesh = result.meshes[0]!
      const valid = defects.triangles! - defects.degenerate
      expect(mesh.triangles >= valid && mesh.triangles <= defects.triangles!, `the mesh reports ${mesh.triangles} triangles, the file has ${defects.triangles} (${defects.degenerate} degenerate)`)
      expect(mesh.vertices === defects.vertices, `the mesh reports ${mesh.vertices} vertices, the file has ${defects.vertices}`)
      expect(mesh.has_normals && mesh.has_texcoords && !mesh.skinned, 'has_normals/has_texcoords/skinned do not describe the file (normals and texcoords, no skin)')
      for (const type of ['duplicate_vertices', 'degenerate_faces']) {
        const issue = mesh.issues.find((i) => i.type === type)
        expect(issue && issue.count > 0, `no ${type} issue reported (issues: ${JSON.stringify(mesh.issues)})`)
      }
      expect(result.total_issues >= 2, `total_issues is ${result.total_issues}`)
    },
  },
]

const textureChecks: Check[] = TEXTURE_FORMATS.map((format): Check => ({
  id: `textures.optimize.${format}`,
  group: 'textures',
  title: `textures/optimize format=${format}: a PNG comes back as ${format}, with compression_ratio and savings_percent`,
  profile: 'core',
  variants: ['A', 'B'],
  needs: { feature: 'texture_optimize' },
  async run(ctx) {
    const run = await finished(ctx, `texture optimize ${format}`, 'texture_optimize', '/textures/optimize', { format }, 'png')
    const sniffed = sniffImage(run.output)
    expect(sniffed === format, `the result is ${sniffed ?? 'not an image'}, asked for ${format}`)
    const { png } = await ctx.fixtures()
    const size = imageSize(run.output)
    expect(size?.width === png.width && size.height === png.height, `the ${format} is ${size ? `${size.width}×${size.height}` : 'of unreadable size'}, the input ${png.width}×${png.height}`)
    checkSizeFigures(run.final)
  },
}))

const ktx2Checks: Check[] = (['etc1s', 'uastc'] as const).map((mode): Check => ({
  id: `textures.ktx2.${mode}`,
  group: 'textures',
  title: `textures/ktx2 ${mode === 'uastc' ? 'uastc=true' : 'default (ETC1S)'}: the result is a KTX2 file of the image's size in ${mode.toUpperCase()}`,
  profile: 'core',
  variants: ['A'],
  needs: { feature: 'texture_ktx2' },
  async run(ctx) {
    const { png } = await ctx.fixtures()
    const run = await finished(ctx, `texture ktx2 ${mode}`, 'texture_ktx2', '/textures/ktx2', mode === 'uastc' ? { uastc: 'true' } : {}, 'png')
    const facts = await wrap('the result is not KTX2', () => inspectKtx2(run.output))
    expect(facts.width === png.width && facts.height === png.height, `the KTX2 is ${facts.width}×${facts.height}, the image ${png.width}×${png.height}`)
    expect(facts.mode === mode, `the KTX2 data format is ${facts.mode}, expected ${mode}`)
    checkSizeFigures(run.final)
  },
}))

/** Checks every embedded image of a GLB result is in `format` and the model still has its triangles. */
async function expectModelTextures(ctx: RunContext, bytes: Uint8Array, format: 'jpeg' | 'webp' | 'png' | 'ktx2'): Promise<void> {
  const { textured } = await ctx.fixtures()
  const images = await wrap('the result is not a GLB', () => glbImages(bytes))
  expect(images.length === textured.images, `the result embeds ${images.length} images, the input ${textured.images}`)
  for (const image of images) expect(sniffImage(image) === format, `an embedded image is ${sniffImage(image) ?? 'unrecognised'}, asked for ${format}`)
  const facts = await wrap('the result does not open as glTF', inspectGlb(bytes))
  expect(facts.triangles === textured.triangles, `the result has ${facts.triangles} triangles, the input ${textured.triangles}`)
}

textureChecks.push({
  id: 'textures.optimize.model',
  group: 'textures',
  title: 'textures/optimize on a GLB (format=webp): a GLB whose embedded texture is WebP, geometry unchanged',
  profile: 'core',
  variants: ['A', 'B'],
  needs: { feature: 'texture_optimize' },
  async run(ctx) {
    const run = await finished(ctx, 'texture optimize model webp', 'texture_optimize', '/textures/optimize', { format: 'webp' }, 'textured')
    await expectModelTextures(ctx, run.output, 'webp')
  },
})

ktx2Checks.push({
  id: 'textures.ktx2.model',
  group: 'textures',
  title: 'textures/ktx2 on a GLB: a GLB whose embedded texture is KTX2, geometry unchanged',
  profile: 'core',
  variants: ['A'],
  needs: { feature: 'texture_ktx2' },
  async run(ctx) {
    const run = await finished(ctx, 'texture ktx2 model', 'texture_ktx2', '/textures/ktx2', {}, 'textured')
    await expectModelTextures(ctx, run.output, 'ktx2')
  },
})

/** Sections 4.4 to 4.8: every operation's result is opened and checked, not just fetched. */
export const operationChecks: Check[] = [...convertChecks, ...repairChecks, ...diagnoseChecks, ...textureChecks, ...ktx2Checks]
