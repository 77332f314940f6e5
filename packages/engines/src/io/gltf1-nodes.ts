import type { Document, Node } from '@gltf-transform/core'
import { type Entry, entries } from './gltf1-json.ts'

/** The parts of a glTF 1.0 JSON its node tree is read from. */
export interface Gltf1Nodes {
  nodes?: Record<string, Entry>
  scenes?: Record<string, Entry>
  scene?: unknown
}

/** Why a 1.0 node has no counterpart in the document, for the notes of what was on it. */
export const OUTSIDE_SCENE = "the node is not in the file's default scene, the one scene assimp's glTF 1.0 importer reads"

/**
 * The document's node for each 1.0 node id, found by walking the file's default scene and the tree
 * assimp built from it side by side. assimp imports the default scene only, keeps each node's
 * children in order and names each node after its id, but it also adds a node of its own (`ROOT`)
 * above a scene of several roots, and then names a 1.0 node whose id is `ROOT` `ROOT_node`: looked
 * up by name in the whole document, such a node was not found, and what it carried (a light) was
 * lost without a word. Children are matched by their place, or by name where assimp kept fewer.
 * Nodes outside the default scene are not in the map: assimp did not import them.
 */
export function matchGltf1Nodes(doc: Document, json: Gltf1Nodes): Map<string, Node> {
  const found = new Map<string, Node>()
  const roots = defaultScene(json)
  let candidates = doc.getRoot().listScenes()[0]?.listChildren() ?? []
  // assimp's own ROOT above several roots: step into it, unless it is itself a root of the file.
  const [only] = candidates
  if (candidates.length === 1 && roots.length > 1 && only) candidates = only.listChildren()
  const visit = (ids: unknown, nodes: Node[]) => {
    if (!Array.isArray(ids)) return
    // assimp keeps the children in order: where it kept them all, the nth is the nth.
    const inOrder = ids.length === nodes.length
    ids.forEach((id, index) => {
      if (typeof id !== 'string' || found.has(id)) return
      const named = nodes.filter((node) => node.getName() === id)
      const node = inOrder ? nodes[index] : named.length === 1 ? named[0] : undefined
      if (!node) return
      found.set(id, node)
      visit(json.nodes?.[id]?.children, node.listChildren())
    })
  }
  visit(roots, candidates)
  return found
}

/** The id of the file's default scene: `scene`, else the first scene, as assimp picks it. */
export function defaultSceneId(json: Gltf1Nodes): string | undefined {
  if (typeof json.scene === 'string' && entries(json.scenes).some(([id]) => id === json.scene)) return json.scene
  return entries(json.scenes)[0]?.[0]
}

/** The root node ids of the file's default scene. */
function defaultScene(json: Gltf1Nodes): string[] {
  const id = defaultSceneId(json)
  const nodes = id === undefined ? undefined : json.scenes?.[id]?.nodes
  return Array.isArray(nodes) ? nodes.filter((node): node is string => typeof node === 'string') : []
}
