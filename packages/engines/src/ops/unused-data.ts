import { type Document, type Node, type Property, PropertyType } from '@gltf-transform/core'

/**
 * Counts what repair's prune pass would remove, without removing it: empty nodes (nodes in a
 * scene that draw nothing, whose subtree has no mesh, camera, skin, extension or extras, and that
 * no skin or animation uses; plus nodes outside every scene that nothing refers to) and unused
 * data (meshes, materials, textures, accessors, skins, cameras, animations that nothing reachable
 * from a scene or an animated node refers to).
 */
export function countUnusedData(doc: Document): { emptyNodes: number; unusedData: number } {
  const inScene = nodesInScenes(doc)
  return { emptyNodes: countEmptyNodes(doc, inScene), unusedData: countUnreachableData(doc, inScene) }
}

/** Every node below a scene, each once. */
function nodesInScenes(doc: Document): Set<Node> {
  const inScene = new Set<Node>()
  const walk = (node: Node) => {
    if (inScene.has(node)) return // a node loop must not hang the diagnosis
    inScene.add(node)
    for (const child of node.listChildren()) walk(child)
  }
  for (const scene of doc.getRoot().listScenes()) for (const node of scene.listChildren()) walk(node)
  return inScene
}

/** Nodes of the scenes that prune would remove, and nodes outside every scene that nothing refers to. */
function countEmptyNodes(doc: Document, inScene: Set<Node>): number {
  const graph = doc.getGraph()
  let emptyNodes = 0
  const prunable = new Map<Node, boolean>()
  const isPrunable = (node: Node): boolean => {
    const known = prunable.get(node)
    if (known !== undefined) return known
    prunable.set(node, false) // provisional, for loops
    const children = node.listChildren()
    const childrenPrunable = children.map(isPrunable).every(Boolean)
    const ownContent = graph.listChildren(node).filter((child) => !(children as Property[]).includes(child)).length > 0
    const used = graph.listParentEdges(node).some((edge) => {
      const type = edge.getParent().propertyType
      return type !== PropertyType.ROOT && type !== PropertyType.SCENE && type !== PropertyType.NODE
    })
    const hasExtras = Object.keys(node.getExtras()).length > 0
    const result = childrenPrunable && !ownContent && !used && !hasExtras
    prunable.set(node, result)
    return result
  }
  for (const node of inScene) if (isPrunable(node)) emptyNodes++
  for (const node of doc.getRoot().listNodes()) {
    if (inScene.has(node)) continue
    const parents = node
      .listParents()
      .filter((p) => p.propertyType !== PropertyType.ROOT && p.propertyType !== PropertyType.ANIMATION_CHANNEL)
    if (parents.length === 0) emptyNodes++
  }
  return emptyNodes
}

/** Meshes, materials, textures, accessors, skins, cameras and animations nothing reachable refers to. */
function countUnreachableData(doc: Document, inScene: Set<Node>): number {
  const root = doc.getRoot()
  const graph = doc.getGraph()
  // Everything reachable from the scenes' nodes and from animations that still target a node.
  const reachable = new Set<Property>()
  const stack: Property[] = [...inScene]
  for (const animation of root.listAnimations()) {
    if (animation.listChannels().some((channel) => channel.getTargetNode())) stack.push(animation)
  }
  while (stack.length > 0) {
    const prop = stack.pop()!
    if (reachable.has(prop)) continue
    reachable.add(prop)
    for (const child of graph.listChildren(prop)) if (!reachable.has(child)) stack.push(child)
  }
  let unusedData = 0
  const lists: Property[][] = [
    root.listMeshes(),
    root.listMaterials(),
    root.listTextures(),
    root.listAccessors(),
    root.listSkins(),
    root.listCameras(),
    root.listAnimations(),
  ]
  for (const list of lists) for (const prop of list) if (!reachable.has(prop)) unusedData++
  return unusedData
}
