// Inputs made in the test: deterministic images, a decompression bomb and small textured models.
import { crc32, deflateSync } from 'node:zlib'
import { Document, type Texture } from '@gltf-transform/core'
import { validateBytes } from 'gltf-validator'
import sharp from 'sharp'
import type { Platform } from '../src/index.ts'

/**
 * A deterministic image with gradients, a checkerboard and an alpha ramp: content an encoder has
 * to work on (a flat colour would compress to nothing and prove little).
 */
export async function testImage(size: number, format: 'png' | 'jpeg' | 'webp', options: { alpha?: boolean } = {}): Promise<Uint8Array> {
  const channels = options.alpha ? 4 : 3
  const raw = Buffer.alloc(size * size * channels)
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const i = (y * size + x) * channels
      const check = ((x >> 5) + (y >> 5)) & 1
      raw[i] = Math.floor((x * 255) / size)
      raw[i + 1] = Math.floor((y * 255) / size)
      raw[i + 2] = check ? 200 : ((x * y) >> 6) & 255
      if (channels === 4) raw[i + 3] = Math.floor(((x + y) * 255) / (2 * size))
    }
  }
  const image = sharp(raw, { raw: { width: size, height: size, channels } })
  const encoded = format === 'png' ? image.png() : format === 'jpeg' ? image.jpeg({ quality: 95 }) : image.webp({ quality: 95 })
  return new Uint8Array(await encoded.toBuffer())
}

/** A tangent-space normal map: bumps on a flat (128, 128, 255) surface. */
export async function testNormalMap(size: number): Promise<Uint8Array> {
  const raw = Buffer.alloc(size * size * 3)
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const nx = Math.sin((x / size) * Math.PI * 8) * 0.4
      const ny = Math.cos((y / size) * Math.PI * 8) * 0.4
      const nz = Math.sqrt(1 - nx * nx - ny * ny)
      const i = (y * size + x) * 3
      raw[i] = Math.round((nx * 0.5 + 0.5) * 255)
      raw[i + 1] = Math.round((ny * 0.5 + 0.5) * 255)
      raw[i + 2] = Math.round((nz * 0.5 + 0.5) * 255)
    }
  }
  return new Uint8Array(
    await sharp(raw, { raw: { width: size, height: size, channels: 3 } })
      .png()
      .toBuffer(),
  )
}

/** One PNG chunk: length, type, data and its CRC. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
  const out = Buffer.alloc(body.length + 8)
  out.writeUInt32BE(data.length, 0)
  body.copy(out, 4)
  out.writeUInt32BE(crc32(body), body.length + 4)
  return out
}

/** The PNG with one more chunk right after its IHDR (where colour-space chunks go). */
export function withPngChunk(png: Uint8Array, type: string, data: Buffer): Uint8Array {
  const afterIhdr = 8 + 12 + 13
  return new Uint8Array(Buffer.concat([png.subarray(0, afterIhdr), pngChunk(type, data), png.subarray(afterIhdr)]))
}

/**
 * A 64-byte PNG whose header declares width × height pixels: a decompression bomb's shape (the
 * start of a deflate stream of zero rows follows, cut where a real bomb's megabytes would go on).
 */
export function bombPng(width = 100_000, height = 100_000): Uint8Array {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 8 // bit depth
  ihdr[9] = 2 // RGB
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  const idat = deflateSync(Buffer.alloc(1 << 20), { level: 9 }).subarray(0, 19)
  return new Uint8Array(Buffer.concat([signature, pngChunk('IHDR', ihdr), pngChunk('IDAT', idat)]))
}

export interface MaterialTextures {
  baseColor?: Uint8Array
  normal?: Uint8Array
  metallicRoughness?: Uint8Array
  occlusion?: Uint8Array
  emissive?: Uint8Array
}

/**
 * A GLB with one triangle and one material per entry of `materials`; the same bytes given twice
 * become one shared texture, as an exporter that deduplicates would write it.
 */
export async function texturedGlb(platform: Platform, materials: MaterialTextures[]): Promise<Uint8Array> {
  const doc = new Document()
  const buffer = doc.createBuffer()
  const position = doc
    .createAccessor()
    .setType('VEC3')
    .setArray(new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0]))
    .setBuffer(buffer)
  const uv = doc
    .createAccessor()
    .setType('VEC2')
    .setArray(new Float32Array([0, 0, 1, 0, 0, 1]))
    .setBuffer(buffer)
  const normal = doc
    .createAccessor()
    .setType('VEC3')
    .setArray(new Float32Array([0, 0, 1, 0, 0, 1, 0, 0, 1]))
    .setBuffer(buffer)
  const textures = new Map<Uint8Array, Texture>()
  const texture = (bytes: Uint8Array, name: string) => {
    let t = textures.get(bytes)
    if (!t) {
      const mime = bytes[0] === 0xff ? 'image/jpeg' : bytes[0] === 0x52 ? 'image/webp' : 'image/png'
      t = doc.createTexture(name).setImage(bytes).setMimeType(mime)
      textures.set(bytes, t)
    }
    return t
  }
  const mesh = doc.createMesh()
  for (const [i, m] of materials.entries()) {
    const material = doc.createMaterial(`material${i}`)
    if (m.baseColor) material.setBaseColorTexture(texture(m.baseColor, `base${i}`))
    if (m.normal) material.setNormalTexture(texture(m.normal, `normal${i}`))
    if (m.metallicRoughness) material.setMetallicRoughnessTexture(texture(m.metallicRoughness, `mr${i}`))
    if (m.occlusion) material.setOcclusionTexture(texture(m.occlusion, `occlusion${i}`))
    if (m.emissive) material.setEmissiveTexture(texture(m.emissive, `emissive${i}`)).setEmissiveFactor([1, 1, 1])
    const prim = doc
      .createPrimitive()
      .setAttribute('POSITION', position)
      .setAttribute('NORMAL', normal)
      .setAttribute('TEXCOORD_0', uv)
      .setMaterial(material)
    mesh.addPrimitive(prim)
  }
  doc.createScene().addChild(doc.createNode().setMesh(mesh))
  return platform.io.writeBinary(doc)
}

/**
 * Mean absolute difference per channel value between an image's decoded pixels and `reference` (raw
 * pixels of the same size and channels): how far a lossy encoding strayed from what it encoded.
 */
export async function meanAbsoluteError(image: Uint8Array, reference: Buffer): Promise<number> {
  const pixels = await sharp(image).raw().toBuffer()
  if (pixels.byteLength !== reference.byteLength) throw new Error(`${pixels.byteLength} bytes of pixels against ${reference.byteLength}`)
  let sum = 0
  for (let i = 0; i < pixels.byteLength; i++) sum += Math.abs(pixels[i]! - reference[i]!)
  return sum / pixels.byteLength
}

/** glTF-Validator's report on a GLB: errors and the codes of warnings. */
export async function validateGlb(bytes: Uint8Array): Promise<{ errors: string[]; warnings: string[] }> {
  const report = await validateBytes(bytes, { maxIssues: 100 })
  const messages = report.issues.messages
  return {
    errors: messages.filter((m) => m.severity === 0).map((m) => `${m.code} ${m.pointer ?? ''}: ${m.message}`),
    warnings: messages.filter((m) => m.severity === 1).map((m) => m.code),
  }
}

export { storedZip } from '../../../test/support/stored-zip.ts'
