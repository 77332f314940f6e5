import type { Material, Texture, TextureInfo } from '@gltf-transform/core'
import type { Transform as UvTransform } from '@gltf-transform/extensions'
import type { ExportScene } from './export-scene.ts'
import { texCoordOf } from './texture-slots.ts'

/** Texture maps for the FBX and COLLADA writers: the slots, their UV transforms, and the notes for what a writer drops. */

/** The texture maps a writer may place, by glTF slot. */
export const MAP_SLOTS = ['baseColor', 'emissive', 'normal', 'occlusion', 'metallicRoughness'] as const
export type MapSlot = (typeof MAP_SLOTS)[number]

/** The material's textures by slot, with their texture infos. */
export function materialTextures(material: Material): [MapSlot, Texture, TextureInfo][] {
  const slots: [MapSlot, Texture | null, TextureInfo | null][] = [
    ['baseColor', material.getBaseColorTexture(), material.getBaseColorTextureInfo()],
    ['emissive', material.getEmissiveTexture(), material.getEmissiveTextureInfo()],
    ['normal', material.getNormalTexture(), material.getNormalTextureInfo()],
    ['occlusion', material.getOcclusionTexture(), material.getOcclusionTextureInfo()],
    ['metallicRoughness', material.getMetallicRoughnessTexture(), material.getMetallicRoughnessTextureInfo()],
  ]
  return slots.filter((slot): slot is [MapSlot, Texture, TextureInfo] => slot[1] !== null && slot[2] !== null)
}

function uvTransform(info: TextureInfo): UvTransform | null {
  return info.getExtension<UvTransform>('KHR_texture_transform')
}

/**
 * Per UV set of a material, the one `KHR_texture_transform` to bake into it: the first map's in
 * slot order (base colour first); `dropped` counts maps on the same set whose transform differs.
 */
export function transformsBySet(material: Material | null): { bySet: Map<number, UvTransform>; dropped: number } {
  const bySet = new Map<number, UvTransform>()
  const seen = new Map<number, string>()
  let dropped = 0
  if (!material) return { bySet, dropped }
  for (const [, , info] of materialTextures(material)) {
    const transform = uvTransform(info)
    const set = texCoordOf(info)
    const key = transform ? JSON.stringify([transform.getOffset(), transform.getRotation(), transform.getScale()]) : ''
    if (!seen.has(set)) {
      seen.set(set, key)
      if (transform) bySet.set(set, transform)
    } else if (seen.get(set) !== key) dropped++
  }
  return { bySet, dropped }
}

/** Applies a texture transform to UVs in place: offset + rotation · scale · uv, as KHR_texture_transform defines. */
export function bakeTransform(uvs: Float32Array, from: number, to: number, transform: UvTransform): void {
  const [ox, oy] = transform.getOffset()
  const [sx, sy] = transform.getScale()
  const cos = Math.cos(transform.getRotation())
  const sin = Math.sin(transform.getRotation())
  for (let v = from; v < to; v++) {
    const u = uvs[v * 2]! * sx
    const w = uvs[v * 2 + 1]! * sy
    uvs[v * 2] = cos * u + sin * w + ox
    uvs[v * 2 + 1] = -sin * u + cos * w + oy
  }
}

/**
 * Notes for maps a writer places nowhere because they read a UV set past the first `uvSets` it
 * writes (maps of slots it has no place for, and the extra sets, are noted by target-holds.ts).
 */
export function mapNotes(scene: ExportScene, format: string, held: readonly MapSlot[], uvSets: number): string[] {
  const notes: string[] = []
  const offSet = scene.materials.flatMap((m) => held.filter((slot) => (m.maps[slot]?.texCoord ?? 0) >= uvSets)).length
  if (offSet > 0) notes.push(`${offSet} map(s) reading UV set ${uvSets} or above dropped: ${format} output keeps ${uvSets} UV set(s)`)
  return notes
}
