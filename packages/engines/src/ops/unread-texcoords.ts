import type { Document, Material, Primitive } from '@gltf-transform/core'
import { listTextureInfoByMaterial } from '@gltf-transform/functions'
import { texCoordOf } from '../io/texture-slots.ts'

/**
 * Removes the texture coordinate sets that no texture of a primitive's material reads (a primitive
 * without a material reads none: the default material has no texture), from the primitive and its
 * morph targets, as gltfpack and `gltf-transform optimize` do. glTF-Transform's `prune()` does it
 * silently and only for primitives that have a material; here every primitive is covered and each
 * dropped set is returned as a note naming it and its vertices, so nothing is lost without a word
 * (ShapeCollection.glb's six meshes, spot.obj and beast.obj carry UVs and no texture).
 *
 * ```ts
 * const notes = dropUnreadTexcoords(doc) // ["TEXCOORD_0 dropped: no texture reads it (3 225 vertices in 1 primitive)"]
 * ```
 */
export function dropUnreadTexcoords(doc: Document): string[] {
  const dropped = new Map<string, { vertices: number; primitives: number }>()
  const readByMaterial = new Map<Material | null, Set<string>>()
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      const material = prim.getMaterial()
      let read = readByMaterial.get(material)
      if (!read) readByMaterial.set(material, (read = texcoordsRead(material)))
      for (const semantic of prim.listSemantics()) {
        if (!semantic.startsWith('TEXCOORD_') || read.has(semantic)) continue
        const count = dropped.get(semantic) ?? { vertices: 0, primitives: 0 }
        count.vertices += prim.getAttribute(semantic)!.getCount()
        count.primitives++
        dropped.set(semantic, count)
        removeAttribute(prim, semantic)
      }
    }
  }
  return [...dropped].map(
    ([semantic, { vertices, primitives }]) =>
      `${semantic} dropped: no texture reads it (${vertices} vertices in ${primitives} ${primitives === 1 ? 'primitive' : 'primitives'})`,
  )
}

/** The TEXCOORD_n sets a material's textures read (KHR_texture_transform's texCoord overrides the texture info's). */
function texcoordsRead(material: Material | null): Set<string> {
  const read = new Set<string>()
  if (!material) return read
  for (const info of listTextureInfoByMaterial(material)) read.add(`TEXCOORD_${texCoordOf(info)}`)
  return read
}

function removeAttribute(prim: Primitive, semantic: string): void {
  prim.setAttribute(semantic, null)
  for (const target of prim.listTargets()) target.setAttribute(semantic, null)
}
