import { BASIS_MAX_SOURCE_PIXELS } from '../basis-encoder.ts'

/** The size a texture is encoded to KTX2 at, and why it differs from its own (empty when it does not). */
export interface Ktx2Size {
  width: number
  height: number
  reasons: string[]
}

/**
 * Basis textures are transcoded on the client to 4×4-block GPU formats (BC7, ETC, ASTC 4×4), and
 * WebGL and WebGPU take those only with sides that are multiples of 4: three.js warns and, where a
 * mip chain is present, some GPUs draw them black. So each side is rounded up to the next multiple
 * of 4, as gltfpack does: up, so no detail is lost, and at most 3 pixels of stretch on a side.
 */
const BLOCK = 4

const roundUpToBlock = (side: number) => Math.max(BLOCK, Math.ceil(side / BLOCK) * BLOCK)

/**
 * The size a `width`×`height` image is encoded at: halved until the encoder's source-pixel cap
 * holds it (a 4096² texture becomes 2048²), then each side rounded up to a multiple of 4.
 *
 * ```ts
 * ktx2Size(250, 130) // { width: 252, height: 132, reasons: ['sides must be multiples of 4 …'] }
 * ```
 */
export function ktx2Size(width: number, height: number): Ktx2Size {
  const reasons: string[] = []
  let w = width
  let h = height
  while (roundUpToBlock(w) * roundUpToBlock(h) > BASIS_MAX_SOURCE_PIXELS) {
    w = Math.max(1, Math.round(w / 2))
    h = Math.max(1, Math.round(h / 2))
  }
  if (w !== width || h !== height) reasons.push(`over the Basis encoder's limit of ${BASIS_MAX_SOURCE_PIXELS / (1024 * 1024)} Mi pixels`)
  if (w % BLOCK !== 0 || h % BLOCK !== 0) {
    reasons.push(
      'the GPU formats KTX2 transcodes to (BC7, ETC, ASTC) store 4×4 blocks, and WebGL and WebGPU need sides that are multiples of 4',
    )
  }
  return { width: roundUpToBlock(w), height: roundUpToBlock(h), reasons }
}

/** The task note for a texture encoded at another size than its own. */
export function ktx2ResizeNote(label: string, from: [number, number], size: Ktx2Size): string {
  return `${label} encoded to KTX2 at ${size.width}×${size.height}, not its ${from[0]}×${from[1]}: ${size.reasons.join('; and ')}`
}
