import { type Accessor, Mesh, Node, Primitive, PrimitiveTarget, type Document, type Transform } from '@gltf-transform/core'
import { OCTAHEDRAL_BITS, snapNormalsToOctahedralGrid, type OctahedralEncoder } from './octahedral-normals.ts'
import { quantizeOtherTexcoords, quantizeTexcoordsPerMaterial } from './texcoord-grid.ts'
import { quantizeStatic } from './quantize-static.ts'

/**
 * Quantization laid out for meshopt's codec, the way gltfpack lays it out: the codec codes each byte
 * of a vertex as a delta from the previous vertex, so it wants consecutive integers, not values
 * spread over a 16-bit range. glTF-Transform's quantize() stores a 14-bit position or a 12-bit UV
 * normalized on 16 bits (each step 4 or 16 apart, low bits filled from the high ones), which costs
 * meshopt one to four bits per component.
 *
 * - Positions: one grid across the scene (gltfpack's), stored as plain integers; the node that draws
 *   the mesh scales them back. Positions on a coarser lattice (a voxel model, a box, a file quantized
 *   before) take the lattice as their grid: kept exactly, in consecutive integers (lattice.ts).
 * - Texture coordinates of a textured material: one grid per material, plain integers, mapped back
 *   by `KHR_texture_transform` (texcoord-grid.ts).
 * - Normals and tangents: with meshopt's filters, snapped to the octahedral grid the filter stores
 *   (octahedral-normals.ts); without, 8-bit xyz through quantize(); morph targets' deltas 8-bit xyz
 *   either way. Colours 8 bits.
 *
 * Where a plain-integer layout cannot be expressed (a skinned or instanced mesh, a node that also
 * carries a camera, a texture coordinate shared across materials or morphed, a rotated texture
 * transform), that part keeps glTF-Transform's normalized layout: correct, a little larger.
 */
export interface GridOptions {
  positionBits: number
  texcoordBits: number
  /** 0: normals and tangents go to meshopt's octahedral filter, snapped to its grid by `encoder`. */
  normalBits: number
  colorBits: number
  encoder: OctahedralEncoder
}

/**
 * Quantizes a document for meshopt in gltfpack's layout (see above).
 *
 * ```ts
 * await doc.transform(quantizeOnGrid({ positionBits: 14, texcoordBits: 12, normalBits: 0, colorBits: 8, encoder }), weldBitwise())
 * ```
 */
export function quantizeOnGrid(options: GridOptions): Transform {
  return async function quantizeOnGridTransform(doc: Document): Promise<void> {
    // A grid spans the meshes' bounds; with none there is nothing to lay out.
    if (doc.getRoot().listMeshes().length === 0) return
    quantizeTexcoordsPerMaterial(doc, options.texcoordBits)
    quantizeOtherTexcoords(doc, options.texcoordBits)
    await doc.transform(
      quantizeStatic({
        pattern: options.normalBits ? /^(?!TEXCOORD_)/ : /^(?!TEXCOORD_|NORMAL$|TANGENT$)/,
        // Morph targets' normal and tangent deltas are no unit vectors for the octahedral filter:
        // 8-bit xyz either way, as gltfpack stores them (AnimatedMorphCube's: 93 → 49 B coded).
        patternTargets: /^(?!TEXCOORD_)/,
        quantizePosition: options.positionBits,
        quantizeNormal: options.normalBits || 8,
        quantizeColor: options.colorBits,
        // On a lattice only where every position becomes a plain integer below (see quantizeStatic).
        lattice: doc.getRoot().listMeshes().every(plainlyDrawn),
      }),
    )
    if (!options.normalBits) snapNormalsToOctahedralGrid(doc, OCTAHEDRAL_BITS, options.encoder)
    positionsToIntegers(doc, options.positionBits)
  }
}

// ---------------------------------------------------------------------------------------------
// Positions

/**
 * quantize() stores a position component q (|q| ≤ 2^(bits−1)−1) as the normalized integer
 * q·2^lo | q>>hi (low bits replicated from the high ones); here it becomes q − min (unsigned), min
 * being the scene's smallest q per axis, and each node drawing the mesh scales by 1/(2^(bits−1)−1) and
 * moves by min instead. Values from 0 up (gltfpack's): meshopt takes deltas byte by byte, and a
 * coordinate crossing zero flips its high byte between 0x00 and 0xFF.
 */
function positionsToIntegers(doc: Document, bits: number): void {
  const meshes = integerMeshes(doc)
  const bases = new Set(meshes.flatMap((mesh) => mesh.listPrimitives().map((p) => p.getAttribute('POSITION')!)))
  const deltas = new Set(meshes.flatMap(positionAccessors).filter((a) => !bases.has(a)))
  for (const a of [...bases, ...deltas]) toIntegers(a, a.getComponentSize() * 8 - bits)
  const min = [Infinity, Infinity, Infinity]
  for (const a of bases) a.getMin([]).forEach((v, k) => (min[k] = Math.min(min[k]!, v))) // one scan per accessor
  // Shifted, a 16-bit grid spans up to 2^16 − 2: unsigned storage (KHR_mesh_quantization allows it).
  for (const a of bases) {
    const values = a.getArray()!
    const shifted = values.BYTES_PER_ELEMENT === 1 ? new Uint8Array(values.length) : new Uint16Array(values.length)
    for (let i = 0; i < values.length; i++) shifted[i] = values[i]! - min[i % 3]!
    a.setArray(shifted)
  }
  const factor = 1 / (2 ** (bits - 1) - 1)
  for (const mesh of meshes) {
    for (const node of mesh.listParents()) {
      if (!(node instanceof Node)) continue
      const m = node.getMatrix()
      for (let i = 0; i < 12; i++) m[i]! *= factor // M · S(factor) · T(min)
      for (let r = 0; r < 3; r++) m[12 + r]! += m[r]! * min[0]! + m[4 + r]! * min[1]! + m[8 + r]! * min[2]!
      node.setMatrix(m)
    }
  }
}

/** Meshes whose positions can all become integers, as a set closed over shared accessors. */
function integerMeshes(doc: Document): Mesh[] {
  const eligible = new Set(doc.getRoot().listMeshes().filter(plainlyDrawn))
  // A position accessor shared by two meshes (dedup merges equal ones) converts only if both can.
  for (let changed = true; changed; ) {
    changed = false
    for (const mesh of eligible) {
      if (positionAccessors(mesh).some((a) => !a.getNormalized() || meshesUsing(a).some((m) => !eligible.has(m)))) {
        eligible.delete(mesh)
        changed = true
      }
    }
  }
  return [...eligible]
}

/** Drawn by nodes whose matrix may take the grid's scale: no skin, camera, light or instancing. */
function plainlyDrawn(mesh: Mesh): boolean {
  const nodes = mesh.listParents().filter((p): p is Node => p instanceof Node)
  if (nodes.length === 0) return false
  if (nodes.some((n) => n.getSkin() || n.getCamera() || n.listExtensions().length > 0 || n.listChildren().length > 0)) return false
  // KHR_materials_volume gives thickness in the mesh's units, which the node's scale would change.
  return mesh.listPrimitives().every((p) => !p.getMaterial()?.getExtension('KHR_materials_volume'))
}

function positionAccessors(mesh: Mesh): Accessor[] {
  const out: Accessor[] = []
  for (const prim of mesh.listPrimitives()) {
    for (const holder of [prim, ...prim.listTargets()]) {
      const position = holder.getAttribute('POSITION')
      if (position) out.push(position)
    }
  }
  return out
}

function meshesUsing(accessor: Accessor): Mesh[] {
  const prims = accessor.listParents().flatMap((p) => (p instanceof PrimitiveTarget ? p.listParents() : [p]))
  return prims.filter((p) => p instanceof Primitive).flatMap((p) => p.listParents().filter((m): m is Mesh => m instanceof Mesh))
}

/** Drops quantize()'s replicated low bits: the stored value shifted right by `lo`, sign kept. */
function toIntegers(a: Accessor, lo: number): void {
  const values = a.getArray() as Int16Array | Int8Array
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!
    values[i] = v < 0 ? -(-v >> lo) : v >> lo
  }
  a.setNormalized(false)
}
