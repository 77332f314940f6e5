import { Accessor, type Document, Primitive } from '@gltf-transform/core'

/**
 * Stores 32-bit index accessors whose largest index fits in 16 bits as 16-bit ones: half the bytes,
 * the same indices. Draco re-encodes the triangles it compresses, but points and lines stay plain
 * accessors in the file (Mesh_PrimitiveMode_08: 752 → 736 B), as glTF-Transform's weld rebuilds them.
 * 65 535 stays out: it is the primitive-restart value of 16-bit indices.
 */
export function narrowIndices(doc: Document): void {
  for (const accessor of doc.getRoot().listAccessors()) {
    if (accessor.getComponentType() !== Accessor.ComponentType.UNSIGNED_INT || accessor.getSparse()) continue
    if (!accessor.listParents().some((parent) => parent instanceof Primitive && parent.getIndices() === accessor)) continue
    const values = accessor.getArray() as Uint32Array
    let max = 0
    for (const value of values) if (value > max) max = value
    if (max < 65535) accessor.setArray(Uint16Array.from(values))
  }
}
