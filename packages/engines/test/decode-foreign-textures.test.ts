import { Logger, NodeIO } from '@gltf-transform/core'
import { strToU8, zipSync } from 'fflate'
import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import type { ModelFile } from '../src/io/gltf-zip.ts'
import { readModel } from '../src/io/index.ts'
import { loadPlatform } from '../src/platform.ts'
import { poolReadingBack } from './support/fidelity-readback.ts'
import { texturedTriangle } from './support/textured-triangle.ts'

/**
 * GIF, TIFF and AVIF textures are kept as found by their readers and made PNGs by one pass after the
 * read (decode-foreign-textures.ts): the model is read once, its notes are told once, where the platform logs.
 */

/** A logger that keeps every warning it hears, the same one twice too (a job's logger drops repeats, which would hide a second read). */
class EveryWarning extends Logger {
  readonly heard: string[] = []

  constructor() {
    super(Logger.Verbosity.WARN)
  }

  override warn(text: string): void {
    this.heard.push(text)
  }
}

/** An 8×4 image of one colour per `colours`, as an animated GIF of that many frames (one: a still GIF). */
async function gif(...colours: [number, number, number][]): Promise<Uint8Array> {
  const frames = await Promise.all(
    colours.map(([r, g, b]) =>
      sharp({ create: { width: 8, height: 4, channels: 3, background: { r, g, b } } })
        .png()
        .toBuffer(),
    ),
  )
  const joined = frames.length > 1 ? sharp(frames, { join: { animated: true } }) : sharp(frames[0])
  return new Uint8Array(await joined.gif().toBuffer())
}

const quadObj = 'mtllib quad.mtl\nv 0 0 0\nv 1 0 0\nv 1 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nusemtl quad\nf 1/1 2/2 3/3\n'

/** A triangle with texture coordinates whose `comment TextureFile` names `image`. */
const texturedPly = (image: string) =>
  strToU8(
    `ply\nformat ascii 1.0\ncomment TextureFile ${image}\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n` +
      'property float s\nproperty float t\nelement face 1\nproperty list uchar uint vertex_indices\nend_header\n' +
      '0 0 0 0 0\n1 0 0 1 0\n1 1 0 1 1\n3 0 1 2\n',
  )

/** The RGBA pixels of an image as sharp decodes it (a GIF's first frame). */
const pixels = async (bytes: Uint8Array) => [...(await sharp(bytes, { pages: 1 }).ensureAlpha().raw().toBuffer())]

describe('GIF, TIFF and AVIF textures decoded after the read', async () => {
  const { run, readValid } = await poolReadingBack()
  const platform = await loadPlatform()
  /** Reads with `platform` logging to a fresh EveryWarning, which is returned with the document. */
  const read = async (bytes: Uint8Array, format: string, options: Parameters<typeof readModel>[3] = {}) => {
    const logger = new EveryWarning()
    platform.logger = logger
    platform.io.setLogger(logger)
    return { doc: await readModel(platform, bytes, format, options), logger }
  }

  it('an OBJ in a zip with an animated GIF map is read once, its notes told once each, to the logger the platform gave', async () => {
    const animated = await gif([200, 40, 0], [0, 40, 200])
    const zip = zipSync({
      'quad.obj': strToU8(quadObj),
      // The normal map the zip lacks: the OBJ reader warns once for each time it reads the .mtl.
      'quad.mtl': strToU8('newmtl quad\nmap_Kd quad.gif\nmap_Bump missing.png\n'),
      'quad.gif': animated,
    })
    const reads: ModelFile[] = []
    const loggers: Logger[] = []
    const { doc, logger } = await read(zip, 'zip', {
      sharp,
      // Told as the zip's model is about to be read: once per read, and while the read logs where it will.
      onModelFile: (file) => {
        reads.push(file)
        loggers.push(platform.logger)
      },
    })
    expect(reads.map((file) => file.path)).toEqual(['quad.obj'])
    expect(loggers).toEqual([logger])
    const notes = [
      '[obj] texture "missing.png" is not in the upload; dropped',
      '[obj] texture "quad.gif" is an animated GIF of 2 frames: its first frame is kept, as a PNG',
    ]
    expect(logger.heard).toEqual(notes)
    const texture = doc.getRoot().listMaterials()[0]!.getBaseColorTexture()!
    expect([texture.getMimeType(), texture.getURI()]).toEqual(['image/png', 'quad.png'])
    expect(await pixels(texture.getImage()!)).toEqual(await pixels(animated))
    // A job's warnings are the same, none lost.
    const result = await run('convert', zip, 'zip', { target_format: 'glb' })
    expect(result.details?.warnings).toEqual(notes)
    expect(await pixels((await readValid(result.bytes!, 'glb')).getRoot().listTextures()[0]!.getImage()!)).toEqual(await pixels(animated))
  })

  it('the same GIF under two names is decoded once, each texture its PNG', async () => {
    const still = await gif([10, 200, 30])
    const mtl = 'newmtl quad\nmap_Kd a.gif\nmap_Ke b.gif\n'
    const zip = zipSync({ 'quad.obj': strToU8(quadObj), 'quad.mtl': strToU8(mtl), 'a.gif': still, 'b.gif': still })
    let decodes = 0
    const counted = ((...input: Parameters<typeof sharp>) => {
      decodes++
      return sharp(...input)
    }) as typeof sharp
    const { doc, logger } = await read(zip, 'zip', { sharp: counted })
    expect(decodes).toBe(1)
    expect(logger.heard).toEqual([])
    const textures = doc.getRoot().listTextures()
    expect(textures.map((texture) => [texture.getMimeType(), texture.getURI()])).toEqual([
      ['image/png', 'a.png'],
      ['image/png', 'b.png'],
    ])
    expect(await pixels(textures[1]!.getImage()!)).toEqual(await pixels(still))
  })

  it('a GIF sharp cannot decode (or without sharp) is dropped as if the reader had not found it: no glow for a map_Ke, no material for a PLY', async () => {
    const cut = (await gif([1, 2, 3])).slice(0, 40)
    const objZip = zipSync({ 'quad.obj': strToU8(quadObj), 'quad.mtl': strToU8('newmtl quad\nmap_Ke glow.gif\n'), 'glow.gif': cut })
    const plyZip = zipSync({ 'tri.ply': texturedPly('scan.gif'), 'scan.gif': cut })
    const dropped = (name: string, reader: string) =>
      `[${reader}] texture "${name}" is a GIF image, which Mos could not decode (damaged, or over 8192×8192 pixels); dropped`
    for (const options of [{ sharp }, {}]) {
      const obj = await read(objZip, 'zip', options)
      const material = obj.doc.getRoot().listMaterials()[0]!
      expect([material.getEmissiveTexture(), material.getEmissiveFactor()]).toEqual([null, [0, 0, 0]])
      expect(obj.doc.getRoot().listTextures()).toEqual([])
      expect(obj.logger.heard).toEqual([dropped('glow.gif', 'obj')])
      const ply = await read(plyZip, 'zip', options)
      expect([ply.doc.getRoot().listMaterials(), ply.doc.getRoot().listTextures()]).toEqual([[], []])
      expect(ply.logger.heard).toEqual([dropped('scan.gif', 'ply')])
    }
  })

  it("a glTF 2.0 file's own GIF, in a zip or a GLB: a PNG, its MIME type and URI saying so, valid written", async () => {
    const still = await gif([90, 90, 250])
    const { doc, texture } = texturedTriangle('sky', still, 'image/gif')
    texture.setURI('sky.gif')
    const io = new NodeIO()
    const { json, resources } = await io.writeJSON(doc, { basename: 'model' })
    const zip = zipSync({ 'model.gltf': strToU8(JSON.stringify(json)), ...resources })
    for (const [bytes, format, uri] of [
      [zip, 'zip', 'sky.png'],
      [await io.writeBinary(doc), 'glb', ''],
    ] as const) {
      const read = (await readModel(platform, bytes, format, { sharp })).getRoot().listTextures()[0]!
      expect([read.getMimeType(), read.getURI()], format).toEqual(['image/png', uri])
      expect(await pixels(read.getImage()!)).toEqual(await pixels(still))
      const written = await readValid((await run('convert', bytes, format, { target_format: 'gltf' })).bytes!, 'zip')
      expect(written.getRoot().listTextures()[0]!.getMimeType()).toBe('image/png')
    }
  })
})
