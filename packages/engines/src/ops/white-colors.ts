import type { Document } from '@gltf-transform/core'

/**
 * Removes COLOR_0 where every vertex is opaque white: the colour multiplies the material's base
 * colour, so white changes nothing on screen, but it is still a stream to store (chr_knight carries
 * one). Morphed colours are kept. Returns how many were removed.
 */
export function dropWhiteVertexColors(doc: Document): number {
  let dropped = 0
  const el: number[] = []
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      const color = prim.getAttribute('COLOR_0')
      if (!color || prim.listTargets().some((t) => t.getAttribute('COLOR_0'))) continue
      let white = true
      for (let i = 0; white && i < color.getCount(); i++) {
        color.getElement(i, el)
        white = el.every((v) => v === 1)
      }
      if (!white) continue
      prim.setAttribute('COLOR_0', null)
      dropped++
    }
  }
  return dropped
}
