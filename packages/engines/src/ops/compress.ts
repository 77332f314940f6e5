import type { Document, Texture, Transform } from '@gltf-transform/core'
import type { BasisModule } from '../basis-encoder.ts'
import { EXTMeshoptCompression, KHRDracoMeshCompression } from '@gltf-transform/extensions'
import { ModelInputError } from '../errors.ts'
import { assertEncodableGeometry } from './encodable-geometry.ts'
import { assignDefaults, dedup, dequantize, prune } from '@gltf-transform/functions'
import { weldWhereNeeded } from '../geometry/weld-where-needed.ts'
import { clearNegativeZeros } from '../geometry/negative-zeros.ts'
import { weldBitwise } from '../geometry/weld-bitwise.ts'
import { reorderForSize, type ReorderEncoder } from '../geometry/reorder-for-size.ts'
import { dropDegenerateTriangles } from '../geometry/degenerate-triangles.ts'
import { dropWhiteVertexColors } from './white-colors.ts'
import { dropUnreadTexcoords } from './unread-texcoords.ts'
import { joinMeshPrimitives } from './join-mesh-primitives.ts'
import { narrowIndices } from './narrow-indices.ts'
import { quantizeOnGrid } from '../geometry/meshopt-grid.ts'
import { OCTAHEDRAL_BITS, octahedralPays, type OctahedralEncoder } from '../geometry/octahedral-normals.ts'
import { MeshoptFileLayout } from './meshopt-file-layout.ts'
import { KHRMeshoptCompression } from './khr-meshopt-compression.ts'
import { GEOMETRY_COMPRESSION } from './compression-extensions.ts'
import { addMissingTangents } from '../geometry/missing-tangents.ts'
import { type DecodedPixels, maySomeTextureBeSolid } from './solid-texture-screen.ts'
import type { SharpEncoder } from './texture-optimize.ts'
import type { TextureReport } from './texture-report.ts'
import type { ResizedPixels } from './resized-pixels.ts'
import { type LosslessTexturesOptions, recodeTexturesAhead, recodeTexturesLosslessly } from './lossless-textures.ts'
import { reencodeTextures, type CompressTextureFormat } from './compress-textures.ts'
import { quantizeMorphWeights, quantizeRotationKeyframes } from '../geometry/keyframe-outputs.ts'
import { reduceKeyframes } from '../geometry/keyframes.ts'

/** Compress options, in the contract's names (the engine takes what the route validated, unrenamed). */
export interface CompressOptions {
  engine: 'draco' | 'meshopt'
  /** 0 (variant B: no compression, re-packed) to 10; higher compresses harder. */
  level?: number
  position_quantization_bits?: number
  normal_quantization_bits?: number
  texcoord_quantization_bits?: number
  color_quantization_bits?: number
  generic_quantization_bits?: number
  meshopt_compression_level?: 'high' | 'medium' | 'low'
  /**
   * Mos extension: the glTF extension meshopt's data is declared with. `ext` (EXT_meshopt_compression,
   * what every meshopt reader knows) or `khr` (KHR_meshopt_compression: smaller, with the v1 vertex codec).
   */
  meshopt_extension?: 'ext' | 'khr'
  /**
   * Mos extension: JPEG textures also tried as progressive JPEGs (the same coefficients), kept where
   * smaller; off by default, since it costs the task 50–70 ms a megapixel (a warm thread) where gltfpack copies images.
   */
  texture_progressive_jpeg?: boolean
  /**
   * Mos extension: every texture re-encoded to this format after the prune (compress-textures.ts), in
   * place of the lossless re-coding for the textures it re-encodes; absent, textures keep their format.
   */
  texture_format?: CompressTextureFormat
  /** Mos extension: JPEG and WebP quality (1–100) for `texture_format`; texture_optimize's default when not given. */
  texture_quality?: number
  /** Mos extension: normal maps re-encoded like the other textures by `texture_format` (lossy; ETC1S in KTX2). */
  lossy_normal_maps?: boolean
  /** The Basis Universal module, passed in by the caller where `texture_format` is `ktx2`. */
  basis?: BasisModule
  /** The tier's per-image limits, for the textures `texture_format` re-encodes (as the texture operations). */
  maxTextureBytes?: number
  maxPixels?: number
  /** Filled with the report per texture of `texture_format`'s re-encoding (the texture operations' report). */
  reencoded?: TextureReport[]
  /** The pixels the scene steps' `texture_max_size` resized, for `texture_format` to encode once (resized-pixels.ts). */
  resizedPixels?: ResizedPixels
  /** The meshoptimizer encoder, passed in by the caller (see Platform). */
  meshoptEncoder?: unknown
  /** Where to say what compression dropped from the file (the task's `details.notes`). */
  notes?: string[]
  /**
   * sharp, passed in by the caller: with it, images that certainly vary are not decoded whole to look
   * for one colour, and PNG textures are re-packed as the smallest PNG of their pixels (png-repack.ts).
   */
  sharp?: SharpEncoder
  /** The thread's image threads (1 when not given); see repackPngTextures for how many PNGs it re-packs at once. */
  imageThreads?: number
  /** Filled with a report per texture re-packed smaller: PNGs with sharp, JPEGs always (jpeg-recode.ts). */
  repacked?: TextureReport[]
}

export const COMPRESS_DEFAULTS: Required<
  Omit<
    CompressOptions,
    | 'engine'
    | 'meshoptEncoder'
    | 'notes'
    | 'sharp'
    | 'imageThreads'
    | 'repacked'
    | 'texture_format'
    | 'texture_quality'
    | 'basis'
    | 'maxTextureBytes'
    | 'maxPixels'
    | 'reencoded'
    | 'resizedPixels'
  >
> = {
  level: 7,
  position_quantization_bits: 14,
  normal_quantization_bits: 10,
  texcoord_quantization_bits: 12,
  color_quantization_bits: 8,
  generic_quantization_bits: 12,
  meshopt_compression_level: 'high',
  meshopt_extension: 'ext',
  texture_progressive_jpeg: false,
  lossy_normal_maps: false,
}

/** Meshopt's quantizing levels store texture coordinates on gltfpack's 12-bit grid, whatever texcoord_quantization_bits says (its lossless level: floats). */
const MESHOPT_TEXCOORD_BITS = 12

/** The bits the encoder will store texture coordinates on; undefined where they stay floats. */
export function storedTexcoordBits(o: {
  engine: string
  level?: number
  texcoord_quantization_bits?: number
  meshopt_compression_level?: string
}) {
  if (o.level === 0) return undefined
  if (o.engine === 'draco') return o.texcoord_quantization_bits ?? COMPRESS_DEFAULTS.texcoord_quantization_bits
  return o.meshopt_compression_level === 'low' ? undefined : MESHOPT_TEXCOORD_BITS
}

/**
 * Draco's encoder speed is its effort knob (0 slowest … 10 fastest), but not a monotonic one:
 * measured on the corpus and a generated grid, speed 4 is within 3% of the smallest file on every
 * input, while speeds 0–3 switch to a normal predictor that loses up to 80% on smooth surfaces.
 * So levels 1–6 map to speeds 10–5, levels 7–9 to speed 4, and level 10 to speed 0 (the most
 * effort, best on hard-edged CAD models).
 */
export function dracoSpeedForLevel(level: number): number {
  if (level >= 10) return 0
  if (level >= 7) return 4
  return Math.max(5, Math.min(10, 11 - level))
}

/**
 * Meshopt has no effort knob; the level picks the position grid instead: 7 → 14 bits (gltfpack's
 * default), each level above drops a bit, levels ≤ 5 keep 16 bits.
 */
export function meshoptPositionBitsForLevel(level: number): number {
  return Math.max(11, Math.min(16, 21 - level))
}

/**
 * The reader decoded the input's Draco or meshopt data, but the extension it registered stays in the
 * document and would be written again beside ours: an already-meshopt input encoded with Draco kept
 * every accessor twice (pirate-meshopt.glb: 24 696 → 45 100 B), and with meshopt the input's plain
 * extension stood in for MeshoptFileLayout (createExtension returns the one registered under the
 * name). What we write is decided here, from the decoded data (as `gltf-transform` does).
 */
function dropInputCompression(doc: Document): void {
  for (const extension of doc.getRoot().listExtensionsUsed()) if (GEOMETRY_COMPRESSION.has(extension.extensionName)) extension.dispose()
}

/** Compress options with every default filled in. */
type ResolvedCompressOptions = typeof COMPRESS_DEFAULTS & CompressOptions

/**
 * Compresses a model's geometry with Draco or meshopt. The pipeline first removes what the file
 * does not use and merges identical vertices, so both encoders see the smallest indexed meshes.
 *
 * ```ts
 * await doc.transform(compress({ engine: 'draco', level: 7 }))
 * ```
 */
export function compress(options: CompressOptions): Transform {
  const o = assignDefaults(COMPRESS_DEFAULTS, options)
  return async function compressTransform(doc: Document): Promise<void> {
    assertEncodableGeometry(doc)
    if (o.level === 0) return // variant B's "raw": the caller only re-packs the file
    // Keyframes go where the encoding quantizes anyway: not in meshopt's lossless level.
    const reduceKeys = !(o.engine === 'meshopt' && o.meshopt_compression_level === 'low')
    // Lossless, worked out while this thread cleans and prepares the geometry, and applied to the
    // textures the prune kept (ClearCoatTest, 40 warm jobs: see docs/performance.md). Not with KTX2,
    // which re-encodes every texture it can decode: the lossless re-coding then takes only what it left.
    const ktx2 = o.texture_format === 'ktx2'
    const ahead = ktx2 ? undefined : recodeTexturesAhead(doc, losslessOptions(o))
    await cleanForEncoding(doc, options.notes, options.sharp, reduceKeys, ahead?.pixelsOf)
    const untouched = ktx2 ? await reencodeAskedTextures(doc, o) : undefined
    const recode = ahead ? ahead.apply : () => recodeTexturesLosslessly(doc, { ...losslessOptions(o), only: untouched })
    const [recoded, geometry] = await Promise.allSettled([recode(), prepareGeometry(doc, o)])
    // A texture's failure first, as when the textures were re-coded before the geometry.
    if (recoded.status === 'rejected') throw recoded.reason
    if (geometry.status === 'rejected') throw geometry.reason
    options.repacked?.push(...recoded.value)
    // JPEG, WebP and PNG after the lossless re-coding: their re-encoding keeps a texture only where it
    // is smaller than what it is compared with, and compared with the PNG as the input stored it, WebP
    // grew what the re-packing shrinks (ClearCoatTest's labels: WebP 8 774 B where the re-packed PNG is
    // 3 769 B, its roughness stripes 1 878 B for 218 B).
    if (o.texture_format && !ktx2) await reencodeAskedTextures(doc, o)
  }
}

/** Welds where the encoder needs it, then declares Draco or meshopt compression (the writer encodes). */
async function prepareGeometry(doc: Document, o: ResolvedCompressOptions): Promise<void> {
  // Draco and lossless meshopt weld here, once. Meshopt's quantizing levels weld on the grid, which
  // merges all that welding first would (the grid's weld is a third of the work on a 1M-triangle mesh).
  if (o.engine === 'draco' || o.meshopt_compression_level === 'low') await weldIdenticalVertices(doc)
  if (o.engine === 'draco') encodeWithDraco(doc, o)
  else await encodeWithMeshopt(doc, o)
}

/** The lossless re-coding's options: sharp, the image threads, progressive JPEGs where asked. */
function losslessOptions(o: ResolvedCompressOptions): LosslessTexturesOptions {
  return { sharp: o.sharp, imageThreads: o.imageThreads, progressive: o.texture_progressive_jpeg }
}

/** Re-encodes the textures to `texture_format` (compress-textures.ts), filling `reencoded`; answers the textures it left untouched. */
async function reencodeAskedTextures(doc: Document, o: ResolvedCompressOptions): Promise<Set<Texture>> {
  if (!o.texture_format || !o.sharp) throw new Error('texture_format needs a format and sharp')
  const { reports, untouched } = await reencodeTextures(doc, {
    format: o.texture_format,
    quality: o.texture_quality,
    lossyNormalMaps: o.lossy_normal_maps,
    sharp: o.sharp,
    basis: o.basis,
    imageThreads: o.imageThreads,
    maxTextureBytes: o.maxTextureBytes,
    maxPixels: o.maxPixels,
    notes: o.notes,
    pixels: o.resizedPixels,
  })
  o.reencoded?.push(...reports)
  return untouched
}

/**
 * Removes what the file does not use or what no reader needs (the input's own compression, white
 * vertex colours, unread texture coordinates, duplicates, accessor names), so both encoders see the
 * smallest meshes; throws when no mesh is left to compress.
 */
async function cleanForEncoding(
  doc: Document,
  given: string[] | undefined,
  sharp: SharpEncoder | undefined,
  reduceKeys: boolean,
  decoded: DecodedPixels | undefined,
): Promise<void> {
  // Every step runs whether or not the caller keeps the notes (`notes?.push(...step())` would skip the step).
  const notes = given ?? []
  dropInputCompression(doc)
  dropWhiteVertexColors(doc)
  // Decision (docs/api.md): texture coordinates no texture reads are dropped, as gltfpack and
  // `gltf-transform optimize` drop them, and named in the notes with their vertices.
  notes.push(...dropUnreadTexcoords(doc))
  // prune() turns one-colour textures into material factors, decoding every image to find them.
  const keepSolidTextures = sharp !== undefined && !(await maySomeTextureBeSolid(doc, sharp, decoded))
  await doc.transform(dedup(), prune({ keepAttributes: false, keepSolidTextures }))
  joinMeshPrimitives(doc) // after dedup, which makes the OBJ reader's copies of one material one
  // After dedup, so keyframe times alike count as shared (a sampler keeps them unless its own pay).
  if (reduceKeys) notes.push(...dropRedundantKeyframes(doc))
  // Before the encoders quantize, so the tangents are quantized with the normals (the write would add them as floats).
  notes.push(...(await addMissingTangents(doc)))
  // Without a mesh the encoders would write a file declaring compression of nothing (meshopt: an
  // empty fallback buffer, which glTF-Validator rejects): say so instead.
  if (doc.getRoot().listMeshes().length === 0) throw new ModelInputError('nothing to compress: no scene of the file draws a mesh')
  // Decision (docs/api.md): accessor names are not kept. They name the input's buffer layout, which
  // compression rewrites, not anything a viewer shows (gltfpack and glTF-Transform's weld drop them).
  for (const accessor of doc.getRoot().listAccessors()) accessor.setName('')
}

/**
 * Drops the keyframes the interpolation between their neighbours reproduces (geometry/keyframes.ts).
 * huesitos.fbx: 804 → 326 keyframes, its Draco file 22 080 → 16 100 B (Draco leaves animations as
 * floats), meshopt 14 280 → 13 632.
 */
function dropRedundantKeyframes(doc: Document): string[] {
  const { before, after } = reduceKeyframes(doc)
  if (after === before) return []
  return [
    `animation: ${before - after} of ${before} keyframes dropped, each within 1/16384 (of the model's largest side, for a translation) of what the keys kept interpolate to`,
  ]
}

/** Merges vertices whose attributes are identical byte for byte. */
async function weldIdenticalVertices(doc: Document): Promise<void> {
  // The weld compares bytes: a −0 is read as 0 first, or both stay (chr_knight's normals: 3 239 vertices for 2 315).
  await doc.transform((d) => void clearNegativeZeros(d), weldWhereNeeded())
}

/** Declares Draco compression of every primitive Draco can encode; the writer encodes. */
function encodeWithDraco(doc: Document, o: ResolvedCompressOptions): void {
  narrowIndices(doc) // what Draco leaves plain (points, lines)
  // Draco codes no animation: its keyframes go as meshopt's quantizing levels store them.
  quantizeRotationKeyframes(doc)
  quantizeMorphWeights(doc)
  // The extension itself rather than glTF-Transform's draco(), which welds every primitive again.
  const speed = dracoSpeedForLevel(o.level)
  doc
    .createExtension(KHRDracoMeshCompression)
    .setRequired(true)
    .setEncoderOptions({
      method: KHRDracoMeshCompression.EncoderMethod.EDGEBREAKER,
      encodeSpeed: speed,
      decodeSpeed: speed,
      quantizationBits: {
        POSITION: o.position_quantization_bits,
        NORMAL: o.normal_quantization_bits,
        TEX_COORD: o.texcoord_quantization_bits,
        COLOR: o.color_quantization_bits,
        GENERIC: o.generic_quantization_bits,
      },
      quantizationVolume: 'mesh',
    })
}

/** Prepares the attributes for meshopt (lossless, or quantized on a grid) and declares its file layout. */
async function encodeWithMeshopt(doc: Document, o: ResolvedCompressOptions): Promise<void> {
  if (!o.meshoptEncoder) throw new Error('meshopt compression needs the meshopt encoder')
  const encoder = o.meshoptEncoder as OctahedralEncoder & ReorderEncoder
  // Re-quantizing integer attributes in place corrupts them (already-quantized inputs such as
  // gltfpack output collapse to a line): go back to floats first, then quantize once.
  await doc.transform(dequantize())
  const layout = o.meshopt_extension === 'khr' ? KHRMeshoptCompression : MeshoptFileLayout
  if (o.meshopt_compression_level === 'low') {
    // Lossless: reorder for better compression, keep float attributes, encode the buffers only.
    await doc.transform(reorderForSize({ encoder }))
    doc.createExtension(layout).setRequired(true).setEncoderOptions({ method: EXTMeshoptCompression.EncoderMethod.QUANTIZE })
    return
  }
  const filters = await quantizeForMeshopt(doc, o, encoder)
  doc
    .createExtension(layout)
    .setRequired(true)
    .setEncoderOptions({ method: filters ? EXTMeshoptCompression.EncoderMethod.FILTER : EXTMeshoptCompression.EncoderMethod.QUANTIZE })
}

/**
 * Quantizes the attributes on meshopt's grid, welds and cleans what the grid made identical or
 * empty, and reorders for size; returns whether meshopt's filters are to encode the attributes.
 */
async function quantizeForMeshopt(
  doc: Document,
  o: ResolvedCompressOptions,
  encoder: OctahedralEncoder & ReorderEncoder,
): Promise<boolean> {
  // Filters pay on most files; for normals, only where the octahedral codes compress better
  // than xyz (measured), and always where animations are (their quaternion/exponential filters).
  const filters =
    o.meshopt_compression_level === 'high' && (doc.getRoot().listAnimations().length > 0 || octahedralPays(doc, OCTAHEDRAL_BITS, encoder))
  // Welding after quantizing merges the vertices that became identical on the grid (gltfpack's
  // order; glTF-Transform's meshopt() welds before): chr_knight 22.4 → 16.8 KB.
  await doc.transform(
    quantizeOnGrid({
      positionBits: meshoptPositionBitsForLevel(o.level),
      normalBits: filters ? 0 : 8,
      texcoordBits: MESHOPT_TEXCOORD_BITS,
      colorBits: 8,
      encoder,
    }),
    weldBitwise(),
  )
  dropDegenerateTriangles(doc)
  quantizeMorphWeights(doc) // keyframes of morph weights on 8 bits, as gltfpack stores them
  if (!filters) quantizeRotationKeyframes(doc) // the quaternion filter codes them otherwise
  // Solid-colour textures went with the first prune; looking again decoded every image a second
  // time (5 JPEGs of 2048²: 530–700 ms a job before, 210–480 after, the same bytes out).
  await doc.transform(prune({ keepAttributes: true, keepLeaves: true, keepSolidTextures: true }), reorderForSize({ encoder }))
  return filters
}
