import { writeFile } from 'node:fs/promises'
import { Document, NodeIO } from '@gltf-transform/core'

/**
 * A GLB of one dense grid mesh (`side`² vertices, 2·(side−1)² triangles), written to `path`: an input
 * that keeps an engine thread busy for seconds, for tests that must catch a task mid-run.
 */
export async function writeBigMesh(path: string, side = 600, options: { normals?: boolean } = {}): Promise<number> {
  const withNormals = options.normals ?? true
  const doc = new Document()
  const buffer = doc.createBuffer()
  const positions = new Float32Array(side * side * 3)
  const normals = new Float32Array(side * side * 3)
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      const i = (y * side + x) * 3
      positions[i] = x / side
      positions[i + 1] = Math.sin(x * 0.05) * Math.cos(y * 0.05) * 0.1
      positions[i + 2] = y / side
      normals[i + 1] = 1
    }
  }
  const indices = new Uint32Array((side - 1) * (side - 1) * 6)
  let k = 0
  for (let y = 0; y < side - 1; y++) {
    for (let x = 0; x < side - 1; x++) {
      const a = y * side + x
      indices.set([a, a + side, a + 1, a + 1, a + side, a + side + 1], k)
      k += 6
    }
  }
  const prim = doc
    .createPrimitive()
    .setAttribute('POSITION', doc.createAccessor().setType('VEC3').setArray(positions).setBuffer(buffer))
    .setIndices(doc.createAccessor().setType('SCALAR').setArray(indices).setBuffer(buffer))
  if (withNormals) prim.setAttribute('NORMAL', doc.createAccessor().setType('VEC3').setArray(normals).setBuffer(buffer))
  doc.createScene().addChild(doc.createNode('grid').setMesh(doc.createMesh('grid').addPrimitive(prim)))
  const bytes = await new NodeIO().writeBinary(doc)
  await writeFile(path, bytes)
  return bytes.byteLength
}
