// Texture encoder benchmark: Basis Universal (ETC1S, UASTC) time per megapixel against sharp's WebP
// encode of the same image (CPU time). Not run by the tests (a 4096² UASTC encode alone takes half a minute).
//
//   node --import tsx packages/engines/bench/textures.ts [sizes...]     (default: 1024 4096)
import sharp from 'sharp'
import { BASIS_MAX_SOURCE_PIXELS, encodeBasisKtx2, loadBasisEncoder } from '../src/basis-encoder.ts'
import { testImage } from '../test/texture-fixtures.ts'

const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0)
const basis = await loadBasisEncoder()
// One libvips thread: the WASM encoder has one, and a pool thread gets one core by default.
sharp.concurrency(1)

const rows: string[][] = [
  ['image', 'encoded at', 'WebP q82', 'ETC1S q128', 'UASTC 2', 'ETC1S ÷ WebP', 'UASTC ÷ WebP', 'sizes (PNG / WebP / ETC1S / UASTC)'],
]
for (const size of sizes.length > 0 ? sizes : [1024, 4096]) {
  const png = await testImage(size, 'png')
  const webp = await timed(() => sharp(png).webp({ quality: 82 }).toBuffer())
  // The same halving as the texture_ktx2 job: the WASM build refuses more than 12 Mi pixels.
  let side = size
  while (side * side > BASIS_MAX_SOURCE_PIXELS) side = Math.round(side / 2)
  const { data } = await sharp(png).resize(side, side).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  const rgba = new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  const etc1s = await timed(async () => encodeBasisKtx2(basis, rgba, side, side, { uastc: false, quality: 128, srgb: true }))
  const uastc = await timed(async () => encodeBasisKtx2(basis, rgba, side, side, { uastc: true, quality: 2, srgb: true }))
  // WebP is timed on the full image, Basis on what it encodes: compare per megapixel.
  const perMpix = (ms: number, pixels: number) => ms / (pixels / 1e6)
  const webpRate = perMpix(webp.ms, size * size)
  const etc1sRate = perMpix(etc1s.ms, side * side)
  const uastcRate = perMpix(uastc.ms, side * side)
  rows.push([
    `${size}²`,
    `${side}²`,
    `${webpRate.toFixed(0)} ms/Mpix`,
    `${etc1sRate.toFixed(0)} ms/Mpix`,
    `${uastcRate.toFixed(0)} ms/Mpix`,
    `${(etc1sRate / webpRate).toFixed(1)}×`,
    `${(uastcRate / webpRate).toFixed(1)}×`,
    [png.byteLength, webp.value.byteLength, etc1s.value.byteLength, uastc.value.byteLength].map(kb).join(' / '),
  ])
  console.error(`done ${size}²`)
}
const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join('  '))

/**
 * CPU time of the process (every thread, libvips's included) rather than wall time: both encoders
 * are CPU-bound, and CPU time stays meaningful on a machine busy with other work. Wall time goes
 * to stderr for comparison.
 */
async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const wall = performance.now()
  const start = process.cpuUsage()
  const value = await fn()
  const used = process.cpuUsage(start)
  const ms = (used.user + used.system) / 1000
  console.error(`  cpu ${ms.toFixed(0)} ms, wall ${(performance.now() - wall).toFixed(0)} ms`)
  return { value, ms }
}

function kb(bytes: number): string {
  return `${Math.round(bytes / 1024)} KB`
}
