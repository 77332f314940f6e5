import type { Document } from '@gltf-transform/core'
import { cloneDocument } from '@gltf-transform/functions'
import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { loadPlatform } from '../src/index.ts'
import { recodeJpegTextures } from '../src/ops/jpeg-recode.ts'
import { recodeTexturesAhead } from '../src/ops/lossless-textures.ts'
import { repackPngTextures } from '../src/ops/png-repack.ts'

const corpus = corpusFiles({ clearCoat: assimp('glTF2', 'ClearCoat-glTF', 'ClearCoatTest.gltf') })

/** Each texture's image, in the document's order. */
function imagesOf(doc: Document) {
  return doc
    .getRoot()
    .listTextures()
    .map((t) => t.getImage())
}

/** What the per-format steps report and write, run one after the other on the document as it is. */
async function recodedOneByOne(doc: Document) {
  const reports = [...(await repackPngTextures(doc, { sharp, concurrency: 1 })), ...recodeJpegTextures(doc)]
  return { reports, images: imagesOf(doc) }
}

describe.skipIf(!corpus.available)('recodeTexturesAhead: textures re-coded while the document is still changing', () => {
  it('applied after a texture is dropped and another changed, reports and writes what the per-format steps do on the document then', async () => {
    const platform = await loadPlatform()
    const input = await platform.io.read(corpus.paths.clearCoat)
    const mimeTypes = input
      .getRoot()
      .listTextures()
      .map((t) => t.getMimeType())
    // Five PNGs and a JPEG, which is not last: the reports' order (PNGs, then JPEGs) is not the document's.
    expect(mimeTypes.filter((type) => type === 'image/png')).toHaveLength(5)
    expect(mimeTypes.slice(-1)).toEqual(['image/png'])
    const dropped = input.getRoot().listTextures()[0]!.getURI()
    const change = (doc: Document) => {
      const [first, second, , fourth] = doc.getRoot().listTextures()
      // Dropped as compress's prune drops a texture: the textures after it are numbered one less.
      first!.dispose()
      // Given another image after the start: its outcome is worked out again, from that image.
      second!.setImage(fourth!.getImage()!.slice())
    }

    const ahead = cloneDocument(input)
    const recoding = recodeTexturesAhead(ahead, { sharp })
    change(ahead)
    const reports = await recoding.apply()

    const expected = cloneDocument(input)
    change(expected)
    const oneByOne = await recodedOneByOne(expected)
    expect(reports).toEqual(oneByOne.reports)
    expect(reports.some((r) => r.name.includes(dropped))).toBe(false)
    expect(reports).toHaveLength(5)
    expect(imagesOf(ahead).map((image) => Buffer.from(image!).toString('base64'))).toEqual(
      oneByOne.images.map((image) => Buffer.from(image!).toString('base64')),
    )
  })

  it('leaves a document’s textures as they are until applied, and PNGs alone without sharp', async () => {
    const platform = await loadPlatform()
    const doc = await platform.io.read(corpus.paths.clearCoat)
    const before = imagesOf(doc)
    const recoding = recodeTexturesAhead(doc, { sharp })
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(imagesOf(doc)).toEqual(before)
    expect((await recoding.apply()).map((r) => r.from)).toEqual([...new Array(5).fill('image/png'), 'image/jpeg'])

    // The PNGs' decodes, there for another look (the solid-texture screen): the pixels sharp decodes.
    const [png] = before
    const pixels = await recoding.pixelsOf(png!)
    expect(Buffer.from(pixels!.data).equals(await sharp(png!).toColourspace('srgb').ensureAlpha().raw().toBuffer())).toBe(true)
    expect(recoding.pixelsOf(before.find((_, i) => doc.getRoot().listTextures()[i]!.getMimeType() === 'image/jpeg')!)).toBeUndefined()

    const withoutSharp = await platform.io.read(corpus.paths.clearCoat)
    const reports = await recodeTexturesAhead(withoutSharp, {}).apply()
    expect(reports.map((r) => r.from)).toEqual(['image/jpeg'])
  })
})
