import { Document } from '@gltf-transform/core'

/**
 * A deterministic model with a known number of each defect, built in code. Mesh "defective" is a
 * flat 4×4 grid of quads (z = 0) plus a fin standing on one interior edge; mesh "no_normals" is a
 * quad without normals. Its valid geometry spans (0,0,0)–(4,4,1).
 */
export const DEFECTS = {
  defective: {
    duplicate_vertices: 3,
    degenerate_faces: 3,
    invalid_normals: 3,
    non_finite_values: 2,
    out_of_range_indices: 1,
    unused_vertices: 2,
    non_manifold_edges: 1,
  },
  no_normals: { missing_normals: 4 },
  file: { empty_nodes: 2, unused_data: 2 },
  /** Triangles that are valid: the 32 of the grid (some through duplicate vertices) and the fin. */
  validTriangles: 33,
  bounds: { min: [0, 0, 0], max: [4, 4, 1] },
} as const

/** Builds the defective model's document. */
export function buildDefectiveModel(): Document {
  const doc = new Document()
  const buffer = doc.createBuffer()
  const G = 4
  const positions: number[] = []
  const normals: number[] = []
  const uvs: number[] = []
  const vertex = (x: number, y: number, z: number, n: number[], u: number, v: number) => {
    positions.push(x, y, z)
    normals.push(...n)
    uvs.push(u, v)
    return positions.length / 3 - 1
  }
  for (let y = 0; y <= G; y++) for (let x = 0; x <= G; x++) vertex(x, y, 0, [0, 0, 1], x / G, y / G)
  const id = (x: number, y: number) => y * (G + 1) + x
  // Broken normals on three grid vertices: two zero-length, one NaN.
  normals.splice(id(1, 1) * 3, 3, 0, 0, 0)
  normals.splice(id(2, 1) * 3, 3, 0, 0, 0)
  normals.splice(id(3, 1) * 3, 3, Number.NaN, 0, 1)
  // Three exact copies (every attribute) of grid vertices; the top row of quads uses them, the row
  // below still uses the originals.
  const copyOf = (v: number) =>
    vertex(positions[v * 3]!, positions[v * 3 + 1]!, positions[v * 3 + 2]!, normals.slice(v * 3, v * 3 + 3), uvs[v * 2]!, uvs[v * 2 + 1]!)
  const copies = new Map([id(1, 3), id(2, 3), id(4, 3)].map((v) => [v, copyOf(v)]))
  const indices: number[] = []
  for (let y = 0; y < G; y++) {
    for (let x = 0; x < G; x++) {
      const quad = [id(x, y), id(x + 1, y), id(x + 1, y + 1), id(x, y + 1)]
      const [a, b, c, d] = y === G - 1 ? quad.map((v) => copies.get(v) ?? v) : quad
      indices.push(a!, b!, c!, a!, c!, d!)
    }
  }
  // A fin on the interior edge (1,1)-(2,1): a third face on that edge (non-manifold).
  const top = vertex(1.5, 1, 1, [0, 1, 0], 0.5, 0.5)
  indices.push(id(1, 1), id(2, 1), top)
  // Degenerate: two faces with a repeated index, one with three distinct corners on a line.
  indices.push(id(0, 0), id(0, 0), id(1, 0), id(3, 3), id(4, 3), id(3, 3), id(0, 2), id(1, 2), id(2, 2))
  // Non-finite: a vertex with a NaN position (its face must go) and a texture coordinate set to +Infinity.
  const lost = vertex(Number.NaN, 1, 0, [0, 0, 1], 0, 0)
  indices.push(id(0, 1), lost, id(0, 2))
  uvs[id(4, 0) * 2] = Number.POSITIVE_INFINITY
  // Two vertices nothing uses, inside the bounds.
  vertex(1.5, 1.5, 0, [0, 0, 1], 0.1, 0.1)
  vertex(2.5, 2.5, 0, [0, 0, 1], 0.2, 0.2)
  // One index past the last vertex.
  indices.push(id(2, 2), positions.length / 3 + 5, id(3, 2))

  const material = doc.createMaterial('grid')
  const accessor = (type: 'VEC2' | 'VEC3' | 'SCALAR', array: Float32Array | Uint16Array) =>
    doc.createAccessor().setType(type).setArray(array).setBuffer(buffer)
  const defective = doc.createMesh('defective').addPrimitive(
    doc
      .createPrimitive()
      .setAttribute('POSITION', accessor('VEC3', new Float32Array(positions)))
      .setAttribute('NORMAL', accessor('VEC3', new Float32Array(normals)))
      .setAttribute('TEXCOORD_0', accessor('VEC2', new Float32Array(uvs)))
      .setIndices(accessor('SCALAR', new Uint16Array(indices)))
      .setMaterial(material),
  )
  const noNormals = doc.createMesh('no_normals').addPrimitive(
    doc
      .createPrimitive()
      .setAttribute('POSITION', accessor('VEC3', new Float32Array([0, 0, 0.5, 1, 0, 0.5, 1, 1, 0.5, 0, 1, 0.5])))
      .setIndices(accessor('SCALAR', new Uint16Array([0, 1, 2, 0, 2, 3])))
      .setMaterial(material),
  )
  const scene = doc.createScene('scene')
  scene.addChild(doc.createNode('grid').setMesh(defective))
  scene.addChild(doc.createNode('quad').setMesh(noNormals))
  // Empty nodes: a leaf, and its empty parent.
  scene.addChild(doc.createNode('empty_parent').addChild(doc.createNode('empty_child')))
  // Unused data: a material and an accessor nothing refers to.
  doc.createMaterial('unused')
  accessor('VEC3', new Float32Array([9, 9, 9]))
  return doc
}
