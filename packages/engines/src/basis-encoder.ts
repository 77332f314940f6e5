import { installedVersion } from './platform.ts'

/**
 * The Basis Universal encoder (WASM, bundled by the `ktx2-encoder` package). We drive the module
 * ourselves instead of through the package's helpers: they give no say over mip filtering in linear
 * space or over the module's console output, and their glTF-Transform transform marks every slot sRGB.
 */
export interface BasisModule {
  BasisEncoder: new () => BasisEncoderHandle
  initializeBasis(): void
}

interface BasisEncoderHandle {
  setSliceSourceImage(slice: number, image: Uint8Array, width: number, height: number, type: number): boolean | undefined
  setCreateKTX2File(value: boolean): void
  setUASTC(value: boolean): void
  setPackUASTCFlags(level: number): void
  setKTX2UASTCSupercompression(value: boolean): void
  setQualityLevel(level: number): void
  setETC1SCompressionLevel(level: number): void
  setPerceptual(value: boolean): void
  setKTX2AndBasisSRGBTransferFunc(value: boolean): void
  setMipSRGB(value: boolean): void
  setMipGen(value: boolean): void
  setMipRenormalize(value: boolean): void
  setNormalMapPreset(): void
  setCheckForAlpha(value: boolean): void
  setDebug(value: boolean): void
  setStatusOutput?(value: boolean): void
  encode(output: Uint8Array): number
  delete(): void
}

/**
 * Largest image (width × height) the bundled encoder accepts: Basis Universal 2.x caps 32-bit WASM
 * builds at 12 Mi source pixels and fails (returns 0 bytes) above it.
 */
export const BASIS_MAX_SOURCE_PIXELS = 12 * 1024 * 1024

/**
 * Instantiates the encoder's WASM module. Its console output (per-slice status lines, printed to
 * stdout during every encode) is dropped: a service's logs are no place for it.
 */
export async function loadBasisEncoder(): Promise<BasisModule> {
  // The package's exports map hides the module factory; it sits beside the Node entry point.
  const url = new URL('../basis/basis_encoder.js', import.meta.resolve('ktx2-encoder'))
  const { default: factory } = (await import(url.href)) as { default: (module?: object) => Promise<BasisModule> }
  const ignore = () => {}
  const module = await factory({ print: ignore, printErr: ignore })
  module.initializeBasis()
  return module
}

/** Version of the package that bundles the encoder, for capabilities. */
export function basisEncoderVersion(): string {
  return installedVersion('ktx2-encoder')
}

export interface BasisEncodeOptions {
  /** UASTC (high quality, larger) or ETC1S (BasisLZ, smallest). */
  uastc: boolean
  /** ETC1S: quality level 1–255. UASTC: pack level 0–4. */
  quality: number
  /** Colour data (base colour, emissive) is sRGB; everything else is linear. */
  srgb: boolean
  /** Normal maps: codec tuned for vectors, mips renormalized. */
  normalMap?: boolean
  mipmaps?: boolean
}

/** ETC1S's effort knob (0–6): 2 is basisu's default speed/size balance. */
const ETC1S_COMPRESSION_LEVEL = 2

/**
 * Encodes one RGBA8 image (top row first, as glTF and sharp both have it) to KTX2 bytes.
 * Synchronous and single-threaded: the WASM build has no threads.
 */
export function encodeBasisKtx2(
  module: BasisModule,
  rgba: Uint8Array,
  width: number,
  height: number,
  options: BasisEncodeOptions,
): Uint8Array {
  const encoder = new module.BasisEncoder()
  try {
    encoder.setDebug(false)
    encoder.setStatusOutput?.(false)
    encoder.setCreateKTX2File(true)
    // The normal-map preset retunes the codec and turns perceptual metrics off; the explicit
    // settings after it still apply.
    if (options.normalMap) encoder.setNormalMapPreset()
    encoder.setUASTC(options.uastc)
    if (options.uastc) {
      encoder.setPackUASTCFlags(options.quality)
      encoder.setKTX2UASTCSupercompression(true)
    } else {
      encoder.setQualityLevel(options.quality)
      encoder.setETC1SCompressionLevel(ETC1S_COMPRESSION_LEVEL)
    }
    encoder.setPerceptual(options.srgb)
    encoder.setKTX2AndBasisSRGBTransferFunc(options.srgb)
    // Mips of linear data must be filtered in linear space, or they darken.
    encoder.setMipSRGB(options.srgb)
    encoder.setMipGen(options.mipmaps ?? true)
    if (options.normalMap) encoder.setMipRenormalize(true)
    encoder.setCheckForAlpha(true)
    if (encoder.setSliceSourceImage(0, rgba, width, height, 0) === false) {
      throw new Error(`basis encoder refused the ${width}×${height} image`)
    }
    // Room for every level uncompressed plus the header; doubled once if that was not enough.
    let capacity = Math.ceil(width * height * 4 * (4 / 3)) + 65536
    for (let attempt = 0; attempt < 2; attempt++, capacity *= 2) {
      const output = new Uint8Array(capacity)
      const length = encoder.encode(output)
      if (length > 0) return output.slice(0, length)
    }
    throw new Error(`basis encoder failed on the ${width}×${height} image`)
  } finally {
    // The encoder lives on the WASM heap; without delete() every call leaks it.
    encoder.delete()
  }
}
