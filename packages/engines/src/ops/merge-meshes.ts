import { AnimationChannel, type Document, type Mesh, type Node, Primitive, PropertyType } from '@gltf-transform/core'
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
 * its `-kn` is not offered), nor the name of a mesh that took in other meshes' triangles. Animated,
 * skinned and instanced nodes keep their place; a mesh drawn by several nodes, and points and lines,
 * are not joined (`joinable`). A file of one draw call only loses the nodes above it.
 *
 * ```ts
 * const report = await mergeMeshes(doc)
 * ```
 */
export async function mergeMeshes(doc: Document): Promise<MergeReport> {
  const before = sceneCounts(doc)
  if (before.drawCalls > 1) {
    await doc.transform(flatten())
    const sources = tagSourceMeshes(doc)
    await doc.transform(join({ keepNamed: false, filter: joinable }))
    unnameJoinedMeshes(doc, sources)
    collapseStaticNodes(doc)
  } else {
    // One draw call has nothing to join with, and join() would rebuild its primitive anyway (a point
    // cloud gained an index buffer: points.ply +19% Draco); the nodes above it still go, as gltfpack
    // drops them (BoxBadNormals: 1 932 → 1 896 B, two nodes → one). The emptied ones go in prune.
    await doc.transform(flatten())
  }
  const after = sceneCounts(doc)
  return { nodes_before: before.nodes, nodes_after: after.nodes, draw_calls_before: before.drawCalls, draw_calls_after: after.drawCalls }
}

/**
 * A mesh drawn by several nodes stays shared: joining would write its vertices once per node
 * (ShapeCollection's two tori: +21% meshopt size; instancing is what pays there). Points and lines
 * stay as they are: join rebuilds even a primitive it joins with nothing, and gives a point cloud an
 * index buffer it did not need (points.ply: +19% Draco). Meshes whose vertex streams other meshes
 * share stay too: joining bakes a copy per mesh (ClearCoatTest's 24 spheres on 10 position accessors:
 * +2.5%).
 */
export function joinable(node: Node): boolean {
  const mesh = node.getMesh()
  if (!mesh || mesh.listParents().filter((parent) => parent.propertyType === PropertyType.NODE).length > 1) return false
  return mesh.listPrimitives().every((prim) => prim.getMode() === Primitive.Mode.TRIANGLES && ownStreams(prim, mesh))
}

/**
 * The nodes of a document and the draw calls its scenes make (each mesh's primitives once per node
 * that draws it): what a merge report counts, before and after.
 */
export function sceneCounts(doc: Document): { nodes: number; drawCalls: number } {
  let drawCalls = 0
  for (const scene of doc.getRoot().listScenes()) scene.traverse((node) => (drawCalls += node.getMesh()?.listPrimitives().length ?? 0))
  return { nodes: doc.getRoot().listNodes().length, drawCalls }
}

/**
 * gltfpack's last merge step, where no vertex moves: the scene-root nodes that only draw a mesh in
 * place (identity transform; no children, animation, skin, camera, extension or extras; a mesh no
 * other node draws, without morph weights) become one node drawing one mesh holding their
 * primitives, as they were. A node and a mesh per draw call cost JSON (texcoord_crash: five of each,
 * 13 084 → 12 324 B). Nodes with a transform stay: baking it was measured larger (the codec then sees
 * vertices turned away from the axes, and streams other meshes share get copied).
 */
function collapseStaticNodes(doc: Document): void {
  for (const scene of doc.getRoot().listScenes()) {
    const nodes = scene.listChildren().filter((node) => collapsible(node) && isIdentity(node))
    if (nodes.length < 2) continue
    const merged = doc.createMesh()
    for (const node of nodes) {
      const mesh = node.getMesh()!
      for (const prim of mesh.listPrimitives()) {
        mesh.removePrimitive(prim)
        merged.addPrimitive(prim)
      }
      node.dispose()
      mesh.dispose()
    }
    scene.addChild(doc.createNode().setMesh(merged))
  }
}

function collapsible(node: Node): boolean {
  const mesh = node.getMesh()
  if (!mesh || node.listChildren().length > 0 || node.getSkin() || node.getCamera()) return false
  if (node.listExtensions().length > 0 || Object.keys(node.getExtras()).length > 0) return false
  if (node.listParents().some((parent) => parent instanceof AnimationChannel)) return false
  if (mesh.listParents().filter((parent) => parent.propertyType === PropertyType.NODE).length > 1) return false
  if (mesh.getWeights().length > 0 || mesh.listExtensions().length > 0 || Object.keys(mesh.getExtras()).length > 0) return false
  return mesh.listPrimitives().every((prim) => prim.listTargets().length === 0)
}

/**
 * Whether a primitive's vertex streams belong to this mesh alone (joining would otherwise copy them).
 * Its indices may be shared: join writes new ones in any case, so a shared index list costs no copy
 * (ClearCoatTest's nine labels share two: left apart, they cost 5.5 KB of JSON, 1.02× gltfpack).
 */
function ownStreams(prim: Primitive, mesh: Mesh): boolean {
  return prim.listAttributes().every((accessor) =>
    accessor
      .listParents()
      .filter((parent) => parent instanceof Primitive)
      .every((parent) => parent.listParents().every((owner) => owner === mesh || owner.propertyType === PropertyType.ROOT)),
  )
}

function isIdentity(node: Node): boolean {
  const identity = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
  return node.getMatrix().every((value, i) => value === identity[i])
}

/** The attribute that carries each vertex's source mesh through join() (join concatenates attributes). */
const SOURCE = '_MOS_SOURCE_MESH'

/**
 * Marks every vertex of the meshes join() may touch (those of `joinable` nodes) with its mesh's index,
 * so that what join made of them can be read afterwards (join says nothing of its groups). Every such
 * primitive gets the mark, so join groups them as it would without.
 */
function tagSourceMeshes(doc: Document): Mesh[] {
  const meshes = doc
    .getRoot()
    .listNodes()
    .filter(joinable)
    .map((node) => node.getMesh()!)
  meshes.forEach((mesh, index) => {
    for (const prim of mesh.listPrimitives()) {
      const count = prim.listAttributes()[0]?.getCount() ?? 0
      prim.setAttribute(SOURCE, doc.createAccessor().setType('SCALAR').setArray(new Uint32Array(count).fill(index)))
    }
  })
  return meshes
}

/**
 * A mesh that join() filled with other meshes' triangles no longer is what its name says (the first
 * of them): its name goes, as gltfpack's merge drops it. Then the marks go.
 */
function unnameJoinedMeshes(doc: Document, sources: Mesh[]): void {
  for (const mesh of doc.getRoot().listMeshes()) {
    const from = new Set<number>()
    for (const prim of mesh.listPrimitives()) {
      const mark = prim.getAttribute(SOURCE)
      if (!mark) continue
      for (const index of mark.getArray()!) from.add(index)
      prim.setAttribute(SOURCE, null)
      if (mark.listParents().length === 1) mark.dispose()
    }
    if ([...from].some((index) => sources[index] !== mesh)) mesh.setName('')
  }
}
