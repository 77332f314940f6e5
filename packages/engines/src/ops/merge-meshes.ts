import { type Document, type Node, Primitive, PropertyType } from '@gltf-transform/core'
import { flatten, join } from '@gltf-transform/functions'

/** Nodes and draw calls before and after a merge, for the task's details. */
export interface MergeReport {
  nodes_before: number
  nodes_after: number
  /** Primitives drawn, each mesh counted once per node that draws it (an instanced node once). */
  draw_calls_before: number
  draw_calls_after: number
}

/**
 * Merges the scene as gltfpack does by default: nodes that no animation moves and no skin uses are
 * moved to the scene's root with their world transform (glTF-Transform's `flatten()`), then the
 * primitives of sibling nodes that share a material and vertex layout are joined into one, with the
 * node transforms baked into their vertices (`join()`). Node names are not kept (gltfpack's default;
 * its `-kn` is not offered). Animated, skinned and instanced nodes keep their place; a
 * mesh drawn by several nodes, and points and lines, are not joined (`joinable`).
 *
 * ```ts
 * const report = await mergeMeshes(doc)
 * ```
 */
export async function mergeMeshes(doc: Document): Promise<MergeReport> {
  const before = sceneCounts(doc)
  // One draw call has nothing to merge with: the file is left as it was.
  if (before.drawCalls > 1) await doc.transform(flatten(), join({ keepNamed: false, filter: joinable }))
  const after = sceneCounts(doc)
  return { nodes_before: before.nodes, nodes_after: after.nodes, draw_calls_before: before.drawCalls, draw_calls_after: after.drawCalls }
}

/**
 * A mesh drawn by several nodes stays shared: joining would write its vertices once per node
 * (ShapeCollection's two tori: +21% meshopt size; instancing is what pays there). Points and lines
 * stay as they are: join rebuilds even a primitive it joins with nothing, and gives a point cloud an
 * index buffer it did not need (points.ply: +19% Draco).
 */
function joinable(node: Node): boolean {
  const mesh = node.getMesh()
  if (!mesh || mesh.listParents().filter((parent) => parent.propertyType === PropertyType.NODE).length > 1) return false
  return mesh.listPrimitives().every((prim) => prim.getMode() === Primitive.Mode.TRIANGLES)
}

function sceneCounts(doc: Document): { nodes: number; drawCalls: number } {
  let drawCalls = 0
  for (const scene of doc.getRoot().listScenes()) scene.traverse((node) => (drawCalls += node.getMesh()?.listPrimitives().length ?? 0))
  return { nodes: doc.getRoot().listNodes().length, drawCalls }
}
