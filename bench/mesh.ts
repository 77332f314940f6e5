import { Document, NodeIO } from '@gltf-transform/core'
import sharp, { type Sharp } from 'sharp'
import { createRandom as seeded } from '../test/support/random.ts'

/**
 * A rippled height-field of `2·n²` triangles with positions, normals and UVs (n = 708 → ~1M triangles)
 * and a textured material (a terrain: without a texture its UVs would be data nothing draws, which
 * gltfpack drops and a careful optimizer keeps), written as GLB. Noise comes from a seed, so the
 * file is identical from run to run.
 */
export async function generateGrid(n: number, seed = 1): Promise<Uint8Array> {
  const random = seeded(seed)
  const verts = (n + 1) * (n + 1)
  const position = new Float32Array(verts * 3)
  const normal = new Float32Array(verts * 3)
  const uv = new Float32Array(verts * 2)
  for (let y = 0, v = 0; y <= n; y++) {
    for (let x = 0; x <= n; x++, v++) {
      const u = x / n
      const w = y / n
      const h = 0.05 * Math.sin(u * 20) * Math.cos(w * 17) + 0.002 * random()
      position.set([u * 2 - 1, h, w * 2 - 1], v * 3)
      const nx = -Math.cos(u * 20) * Math.cos(w * 17)
      const nz = Math.sin(u * 20) * Math.sin(w * 17)
      const len = Math.hypot(nx * 0.05, 1, nz * 0.05)
      normal.set([(nx * 0.05) / len, 1 / len, (nz * 0.05) / len], v * 3)
      uv.set([u, w], v * 2)
    }
  }
  const indices = new Uint32Array(n * n * 6)
  for (let y = 0, i = 0; y < n; y++) {
    for (let x = 0; x < n; x++) {
      const a = y * (n + 1) + x
      const b = a + 1
      const c = a + n + 1
      const d = c + 1
      indices.set([a, c, b, b, c, d], i)
      i += 6
    }
  }
  const doc = new Document()
  const prim = texturedPrimitive(doc, { position, normal, uv, indices })
  const texture = doc
    .createTexture('checker')
    .setMimeType('image/png')
    .setImage(await checkerPng(256))
  prim.setMaterial(doc.createMaterial('terrain').setBaseColorTexture(texture))
  const mesh = doc.createMesh('grid').addPrimitive(prim)
  doc.createScene().addChild(doc.createNode('grid').setMesh(mesh))
  return new NodeIO().writeBinary(doc)
}

/** A primitive of positions, normals, UVs and indices, in one buffer of `doc`. */
function texturedPrimitive(
  doc: Document,
  arrays: { position: Float32Array; normal: Float32Array; uv: Float32Array; indices: Uint16Array | Uint32Array },
) {
  const buffer = doc.createBuffer()
  const accessor = (type: 'VEC3' | 'VEC2' | 'SCALAR', array: Float32Array | Uint16Array | Uint32Array) =>
    doc.createAccessor().setType(type).setArray(array).setBuffer(buffer)
  return doc
    .createPrimitive()
    .setAttribute('POSITION', accessor('VEC3', arrays.position))
    .setAttribute('NORMAL', accessor('VEC3', arrays.normal))
    .setAttribute('TEXCOORD_0', accessor('VEC2', arrays.uv))
    .setIndices(accessor('SCALAR', arrays.indices))
}

/** A `size`² grey checkerboard PNG. */
async function checkerPng(size: number): Promise<Uint8Array> {
  const pixels = Buffer.alloc(size * size * 3)
  for (let y = 0; y < size; y++)
    for (let x = 0; x < size; x++) pixels.fill(((x >> 5) + (y >> 5)) % 2 ? 200 : 90, (y * size + x) * 3, (y * size + x + 1) * 3)
  return encodeRgb(pixels, size, (image) => image.png())
}

/** `size`² RGB pixels encoded by `format` (sharp's png() or jpeg()). */
async function encodeRgb(pixels: Buffer, size: number, format: (image: Sharp) => Sharp): Promise<Uint8Array> {
  return new Uint8Array(await format(sharp(pixels, { raw: { width: size, height: size, channels: 3 } })).toBuffer())
}

/**
 * A texture-heavy model in DamagedHelmet's shape, which no corpus file here has: five `size`² JPEG
 * maps (base colour, normal, metal-roughness, occlusion, emissive) on a cube, so the images are
 * nearly all of the file (7.7 MB at 2048²) and a compress job's time is what it does with them.
 * Seeded noise over a gradient, so the file is the same from run to run and no map is one colour.
 */
export async function generateTexturedCube(size = 2048, seed = 1): Promise<Uint8Array> {
  const doc = new Document()
  const prim = texturedPrimitive(doc, cubeArrays())
  const map = async (name: string, offset: number) =>
    doc
      .createTexture(name)
      .setMimeType('image/jpeg')
      .setImage(await noiseJpeg(size, seed + offset))
  const material = doc
    .createMaterial('helmet-like')
    .setBaseColorTexture(await map('base-color', 0))
    .setNormalTexture(await map('normal', 1))
    .setMetallicRoughnessTexture(await map('metal-roughness', 2))
    .setOcclusionTexture(await map('occlusion', 3))
    .setEmissiveTexture(await map('emissive', 4))
    .setEmissiveFactor([1, 1, 1])
  prim.setMaterial(material)
  doc.createScene().addChild(doc.createNode('cube').setMesh(doc.createMesh('cube').addPrimitive(prim)))
  return new NodeIO().writeBinary(doc)
}

/** A unit cube's four corners per face, each face with its own normal and the whole texture. */
function cubeArrays() {
  const position: number[] = []
  const normal: number[] = []
  const uv: number[] = []
  const indices: number[] = []
  for (const axis of [0, 1, 2])
    for (const sign of [-1, 1]) {
      const [u, v] = [(axis + 1) % 3, (axis + 2) % 3]
      const base = position.length / 3
      for (const [a, b] of [
        [-1, -1],
        [1, -1],
        [1, 1],
        [-1, 1],
      ] as const) {
        const p = [0, 0, 0]
        p[axis] = sign
        p[u] = a * sign
        p[v] = b
        const n = [0, 0, 0]
        n[axis] = sign
        position.push(...p)
        normal.push(...n)
        uv.push((a + 1) / 2, (b + 1) / 2)
      }
      indices.push(base, base + 1, base + 2, base, base + 2, base + 3)
    }
  return {
    position: new Float32Array(position),
    normal: new Float32Array(normal),
    uv: new Float32Array(uv),
    indices: new Uint16Array(indices),
  }
}

/** A `size`² JPEG: a horizontal gradient with seeded noise on every channel. */
async function noiseJpeg(size: number, seed: number): Promise<Uint8Array> {
  const random = seeded(seed)
  const pixels = Buffer.alloc(size * size * 3)
  for (let i = 0; i < pixels.length; i++) pixels[i] = ((i / 3) % size) / 8 + random() * 32
  return encodeRgb(pixels, size, (image) => image.jpeg({ quality: 90 }))
}
