import { Document, NodeIO } from '@gltf-transform/core'
import sharp from 'sharp'
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
  const buffer = doc.createBuffer()
  const prim = doc
    .createPrimitive()
    .setAttribute('POSITION', doc.createAccessor().setType('VEC3').setArray(position).setBuffer(buffer))
    .setAttribute('NORMAL', doc.createAccessor().setType('VEC3').setArray(normal).setBuffer(buffer))
    .setAttribute('TEXCOORD_0', doc.createAccessor().setType('VEC2').setArray(uv).setBuffer(buffer))
    .setIndices(doc.createAccessor().setType('SCALAR').setArray(indices).setBuffer(buffer))
  const texture = doc
    .createTexture('checker')
    .setMimeType('image/png')
    .setImage(await checkerPng(256))
  prim.setMaterial(doc.createMaterial('terrain').setBaseColorTexture(texture))
  const mesh = doc.createMesh('grid').addPrimitive(prim)
  doc.createScene().addChild(doc.createNode('grid').setMesh(mesh))
  return new NodeIO().writeBinary(doc)
}

/** A `size`² grey checkerboard PNG. */
async function checkerPng(size: number): Promise<Uint8Array> {
  const pixels = Buffer.alloc(size * size * 3)
  for (let y = 0; y < size; y++)
    for (let x = 0; x < size; x++) pixels.fill(((x >> 5) + (y >> 5)) % 2 ? 200 : 90, (y * size + x) * 3, (y * size + x + 1) * 3)
  return new Uint8Array(
    await sharp(pixels, { raw: { width: size, height: size, channels: 3 } })
      .png()
      .toBuffer(),
  )
}
