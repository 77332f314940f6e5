// Image files written by a real encoder: Debian's ImageMagick 6 (`apt-get install imagemagick`, in .ci/run),
// which writes DDS (DXT1, DXT5, uncompressed) and PSD (raw and RLE, 8 and 16 bits), for Mos's own
// decoders (io/dds.ts, io/psd.ts) to be checked against the pixels it was given.
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import sharp from 'sharp'
import type { RgbaImage } from '../../src/io/tga.ts'

/**
 * The file ImageMagick's `convert` writes from `image` (given as a PNG) with `args` before the output
 * name, e.g. `['-define', 'dds:compression=dxt5']` and extension `dds`; made in a temporary folder it removes.
 */
export async function imageMagickFile(image: RgbaImage, args: string[], extension: string): Promise<Uint8Array> {
  const dir = await mkdtemp(join(tmpdir(), 'mos-imagemagick-'))
  try {
    const source = join(dir, 'source.png')
    await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 4 } })
      .png()
      .toFile(source)
    const output = join(dir, `out.${extension}`)
    await promisify(execFile)('convert', [source, ...args, output])
    return new Uint8Array(await readFile(output))
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/**
 * A deterministic RGBA test image of a size that is no multiple of 4: its left 32 columns are 4 × 4
 * blocks of one colour each, colours that RGB565 holds exactly (so that a block encoder keeps them),
 * its other columns smooth gradients in every channel, alpha included unless `opaque`.
 */
export function blockTestImage(width = 70, height = 38, options: { opaque?: boolean } = {}): RgbaImage {
  const five = (v: number) => Math.round(((v & 31) * 255) / 31)
  const six = (v: number) => Math.round(((v & 63) * 255) / 63)
  const data = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const [bx, by] = [x >> 2, y >> 2]
      const flat = x < 32
      const pixel = flat
        ? [five(bx * 5 + by * 3), six(bx * 9 + by * 7), five(31 - bx * 2 - by), 255]
        : [(x - 32) * 6, y * 6, 128 + ((x + y) & 127), options.opaque ? 255 : 255 - y * 4]
      data.set(pixel, (y * width + x) * 4)
    }
  }
  return { width, height, data }
}

/** Mean and largest absolute difference of two RGBA images' channels `channels`, over the pixels `where` picks. */
export function pixelError(
  a: RgbaImage,
  b: RgbaImage,
  where: (x: number, y: number) => boolean = () => true,
  channels = [0, 1, 2, 3],
): { mean: number; max: number } {
  let [sum, count, max] = [0, 0, 0]
  for (let y = 0; y < a.height; y++) {
    for (let x = 0; x < a.width; x++) {
      if (!where(x, y)) continue
      for (const c of channels) {
        const d = Math.abs(a.data[(y * a.width + x) * 4 + c]! - b.data[(y * b.width + x) * 4 + c]!)
        sum += d
        count++
        max = Math.max(max, d)
      }
    }
  }
  return { mean: sum / count, max }
}
