import { TEXTURE_FORMATS } from '@mos/sdk/contract'
import { expect } from '../assert.ts'
import type { Check } from '../check.ts'
import type { RunContext } from '../context.ts'
import { glbImages } from '../inspect/glb-json.ts'
import { imageSize, inspectKtx2, sniffImage } from '../inspect/image.ts'
import { inspectGlb } from '../inspect/model.ts'
import { checkSizeFigures } from '../tasks.ts'
import { finished, wrap } from './finished-task.ts'

const imageChecks: Check[] = TEXTURE_FORMATS.map(
  (format): Check => ({
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
      expect(
        size?.width === png.width && size.height === png.height,
        `the ${format} is ${size ? `${size.width}×${size.height}` : 'of unreadable size'}, the input ${png.width}×${png.height}`,
      )
      checkSizeFigures(run.final)
    },
  }),
)

const ktx2Checks: Check[] = (['etc1s', 'uastc'] as const).map(
  (mode): Check => ({
    id: `textures.ktx2.${mode}`,
    group: 'textures',
    title: `textures/ktx2 ${mode === 'uastc' ? 'uastc=true' : 'default (ETC1S)'}: the result is a KTX2 file of the image's size in ${mode.toUpperCase()}`,
    profile: 'core',
    variants: ['A'],
    needs: { feature: 'texture_ktx2' },
    async run(ctx) {
      const { png } = await ctx.fixtures()
      const run = await finished(
        ctx,
        `texture ktx2 ${mode}`,
        'texture_ktx2',
        '/textures/ktx2',
        mode === 'uastc' ? { uastc: 'true' } : {},
        'png',
      )
      const facts = await wrap('the result is not KTX2', () => inspectKtx2(run.output))
      expect(
        facts.width === png.width && facts.height === png.height,
        `the KTX2 is ${facts.width}×${facts.height}, the image ${png.width}×${png.height}`,
      )
      expect(facts.mode === mode, `the KTX2 data format is ${facts.mode}, expected ${mode}`)
      checkSizeFigures(run.final)
    },
  }),
)

/** Checks every embedded image of a GLB result is in `format` and the model still has its triangles. */
async function expectModelTextures(ctx: RunContext, bytes: Uint8Array, format: 'jpeg' | 'webp' | 'png' | 'ktx2'): Promise<void> {
  const { textured } = await ctx.fixtures()
  const images = await wrap('the result is not a GLB', () => glbImages(bytes))
  expect(images.length === textured.images, `the result embeds ${images.length} images, the input ${textured.images}`)
  for (const image of images)
    expect(sniffImage(image) === format, `an embedded image is ${sniffImage(image) ?? 'unrecognised'}, asked for ${format}`)
  const facts = await wrap('the result does not open as glTF', inspectGlb(bytes))
  expect(facts.triangles === textured.triangles, `the result has ${facts.triangles} triangles, the input ${textured.triangles}`)
}

imageChecks.push({
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

/** Sections 4.7 and 4.8: standalone images and textured models, re-encoded and KTX2. */
export const textureChecks: Check[] = [...imageChecks, ...ktx2Checks]
