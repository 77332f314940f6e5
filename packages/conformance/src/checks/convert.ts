import { MODEL_FORMATS, OUTPUT_FORMATS, type ModelFormat } from '@mos/sdk/contract'
import { expect } from '../assert.ts'
import type { Check } from '../check.ts'
import { countObjResultTriangles, countPlyResultTriangles, countStlTriangles, inspectGlb, inspectGltfZip } from '../inspect/model.ts'
import { finished, wrap } from './finished-task.ts'

/** Opens a converted file by its format and returns its triangle count. */
async function trianglesOf(format: ModelFormat, bytes: Uint8Array): Promise<number | undefined> {
  const text = () => new TextDecoder().decode(bytes)
  switch (format) {
    case 'glb':
      return (await wrap('the result is not a readable GLB', inspectGlb(bytes))).triangles
    case 'gltf':
      return (await wrap('the result is not a readable .zip glTF bundle', inspectGltfZip(bytes))).triangles
    case 'obj':
      return wrap('the result is not OBJ (nor a .zip of an .obj with its .mtl)', () => countObjResultTriangles(bytes))
    case 'stl':
      return wrap('the result is not STL', () => countStlTriangles(bytes))
    case 'ply':
      return wrap('the result is not PLY (nor a .zip of a .ply with its images)', () => countPlyResultTriangles(bytes))
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

/** Section 4.4: every target format's result is opened and its triangles counted. */
export const convertChecks: Check[] = MODEL_FORMATS.map(
  (format): Check => ({
    id: `convert.output.${format}`,
    group: 'convert',
    title: `target_format=${format}: the task completes and the result parses as ${format === 'gltf' ? 'a .zip bundle with .gltf and .bin' : format}, with the input's triangles`,
    profile: 'core',
    variants: OUTPUT_FORMATS.B.includes(format) ? ['A', 'B'] : ['A'],
    needs: { feature: 'convert' },
    async run(ctx) {
      const run = await finished(ctx, `convert small ${format}`, 'convert', '/convert', { target_format: format }, 'small')
      if (format === 'gltf')
        expect(
          run.filename.toLowerCase().endsWith('.zip'),
          `output.filename is ${JSON.stringify(run.filename)}; a gltf result is a .zip bundle`,
        )
      const triangles = await trianglesOf(format, run.output)
      const expected = (await ctx.fixtures()).small.triangles
      if (triangles !== undefined) expect(triangles === expected, `the ${format} result has ${triangles} triangles, the input ${expected}`)
    },
  }),
)

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
