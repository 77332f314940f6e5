import type { Document, Material, Mesh, Node } from '@gltf-transform/core'
import { type Entry, entries } from './gltf1-json.ts'
import { buildGltf1Mesh, type Gltf1Meshes, replaceNodeMesh } from './gltf1-primitive.ts'

/** The parts of a glTF 1.0 JSON vertex colours are read from. */
export interface Gltf1Colors extends Gltf1Meshes {
  nodes?: Record<string, Entry>
}

/**
 * Vertex colours (COLOR, COLOR_n), which assimp's glTF 1.0 importer drops: each unskinned node
 * whose meshes have them gets its mesh made again from the file's accessors (gltf1-primitive.ts),
 * one mesh per list of 1.0 meshes, so instances stay shared. Skinned nodes are made by
 * gltf1-skins.ts, colours and all. Returns a note for each mesh that could not be made, and why.
 */
export function restoreGltf1Colors(
  doc: Document,
  json: Gltf1Colors,
  nodes: Map<string, Node>,
  materials: Map<string, Material>,
  buffers: Map<string, Uint8Array>,
): string[] {
  const notes: string[] = []
  const made = new Map<string, Mesh | string>()
  const dropped = new Set<string>()
  for (const [id, source] of entries(json.nodes)) {
    const node = nodes.get(id)
    if (!node || typeof source.skin === 'string' || !hasColors(json, source.meshes)) continue
    const key = JSON.stringify(source.meshes)
    if (!made.has(key)) {
      const mesh = buildGltf1Mesh(doc, json, source.meshes, materials, buffers, dropped)
      made.set(key, mesh)
      if (typeof mesh === 'string') notes.push(`the vertex colours of node "${id}" not carried: ${mesh}`)
    }
    const mesh = made.get(key)!
    if (typeof mesh === 'string') continue
    replaceNodeMesh(node, mesh)
  }
  if (dropped.size > 0) notes.push(`attribute(s) ${[...dropped].join(', ')} not carried: glTF 2.0 has no such vertex attribute`)
  return notes
}

function hasColors(json: Gltf1Colors, meshIds: unknown): boolean {
  if (!Array.isArray(meshIds)) return false
  return meshIds.some((id) => {
    const primitives = typeof id === 'string' ? json.meshes?.[id]?.primitives : undefined
    return (
      Array.isArray(primitives) &&
      primitives.some((primitive: Entry) =>
        Object.keys((primitive?.attributes ?? {}) as object).some((name) => /^COLOR(_\d+)?$/.test(name)),
      )
    )
  })
}
