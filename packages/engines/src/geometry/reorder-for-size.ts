import { Primitive, PropertyType, type Accessor, type Document, type Transform } from '@gltf-transform/core'
import { prune } from '@gltf-transform/functions'
import { compactedArray, firstSources, vertexAccessors } from './vertex-rows.ts'
import { shallowClone } from './weld-bitwise.ts'

/** The part of meshoptimizer's `MeshoptEncoder` this transform uses. */
export interface ReorderEncoder {
  ready: Promise<void>
  reorderMesh(indices: Uint32Array, triangles: boolean, optsize: boolean): [Uint32Array, number]
}

export interface ReorderForSizeOptions {
  encoder: ReorderEncoder
}

/**
 * glTF-Transform's `reorder({ encoder, target: 'size' })` with the same result: meshoptimizer orders
 * each index buffer's triangles for compression and its vertices by first use. The vertices move as
 * whole rows (vertex-rows.ts) rather than through the library's component-by-component copy, which
 * was half of this step on a 1M-triangle mesh.
 *
 * ```ts
 * await doc.transform(reorderForSize({ encoder: MeshoptEncoder }))
 * ```
 */
export function reorderForSize(options: ReorderForSizeOptions): Transform {
  const { encoder } = options
  return async function reorderForSizeTransform(doc: Document): Promise<void> {
    await encoder.ready
    const groups = indexGroups(doc)
    for (const [srcIndices, group] of groups) {
      const source = srcIndices.getArray()!
      const indices = source instanceof Uint32Array ? source.slice() : new Uint32Array(source)
      const [remap, unique] = encoder.reorderMesh(indices, group.mode === Primitive.Mode.TRIANGLES, true)
      const dstIndices = shallowClone(doc, srcIndices).setArray(unique <= 65534 ? new Uint16Array(indices) : indices)
      const sources = firstSources(source, remap.length, remap, unique)
      for (const srcAttribute of group.attributes) {
        const dstAttribute = shallowClone(doc, srcAttribute)
        dstAttribute.setArray(compactedArray(srcAttribute.getArray()!, srcAttribute.getElementSize(), sources))
        for (const prim of group.primitives) {
          if (prim.getIndices() === srcIndices) prim.swap(srcIndices, dstIndices)
          prim.swap(srcAttribute, dstAttribute)
          for (const target of prim.listTargets()) target.swap(srcAttribute, dstAttribute)
        }
      }
    }
    await doc.transform(prune({ propertyTypes: [PropertyType.ACCESSOR], keepAttributes: true, keepIndices: true }))
    if (groups.size === 0) doc.getLogger().warn('reorder: No qualifying primitives found; may need to weld first.')
  }
}

interface IndexGroup {
  mode: number
  primitives: Set<Primitive>
  attributes: Set<Accessor>
}

/**
 * Primitives grouped by the index buffer they draw with, and every vertex attribute each group uses
 * (glTF-Transform's layout plan): one reordering per index buffer.
 */
function indexGroups(doc: Document): Map<Accessor, IndexGroup> {
  const groups = new Map<Accessor, IndexGroup>()
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      const indices = prim.getIndices()
      if (!indices) continue
      let group = groups.get(indices)
      if (!group) groups.set(indices, (group = { mode: prim.getMode(), primitives: new Set(), attributes: new Set() }))
      group.mode = prim.getMode()
      group.primitives.add(prim)
      for (const attribute of vertexAccessors(prim)) group.attributes.add(attribute)
    }
  }
  return groups
}
