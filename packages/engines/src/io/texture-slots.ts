import { type Document, type Material, Primitive, type Property, Texture, TextureInfo } from '@gltf-transform/core'
import type { Transform as UvTransform } from '@gltf-transform/extensions'
import { listTextureInfoByMaterial } from '@gltf-transform/functions'

/** A texture slot of a material: on the material itself or on one of its extensions. */
interface TextureSlot {
  /** The material or extension property holding the slot. */
  owner: Property
  /** The slot's name as glTF-Transform's graph calls it (`baseColorTexture`, `clearcoatNormalTexture`, …). */
  name: string
  texture: Texture
  info: TextureInfo
  /** `KHR_materials_clearcoat.clearcoatNormalTexture`, `baseColorTexture`: for notes. */
  label: string
}

/** The UV set a texture lookup reads: KHR_texture_transform's texCoord overrides the texture info's. */
export function texCoordOf(info: TextureInfo): number {
  const transform = info.getExtension<UvTransform>('KHR_texture_transform')
  return transform?.getTexCoord() ?? info.getTexCoord()
}

/** The maps a writer of one UV set per part places (OBJ: all three; PLY: base colour), in the order that set is chosen by. */
const ONE_SET_MAPS = ['baseColor', 'emissive', 'normal'] as const
export type OneSetMap = (typeof ONE_SET_MAPS)[number]

/** The UV set each of those maps of a material reads, for the maps it has. */
export function mapUvSets(material: Material): [OneSetMap, number][] {
  const infos = {
    baseColor: material.getBaseColorTexture() && material.getBaseColorTextureInfo(),
    emissive: material.getEmissiveTexture() && material.getEmissiveTextureInfo(),
    normal: material.getNormalTexture() && material.getNormalTextureInfo(),
  }
  return ONE_SET_MAPS.flatMap((slot) => {
    const info = infos[slot]
    return info ? [[slot, texCoordOf(info)] as [OneSetMap, number]] : []
  })
}

/**
 * The UV set a writer of one set per part (OBJ, PLY) writes for a material: the one its base colour
 * map reads, else its emissive's, else its normal map's, else TEXCOORD_0. A map on TEXCOORD_1 written
 * with TEXCOORD_0's coordinates would be mis-mapped.
 */
export function uvSetWritten(material: Material | null): number {
  return (material && mapUvSets(material)[0]?.[1]) ?? 0
}

/** Points a texture lookup at UV set `set`, where `texCoordOf` reads it: the transform's override if it has one. */
export function setTexCoordOf(info: TextureInfo, set: number): void {
  const transform = info.getExtension<UvTransform>('KHR_texture_transform')
  if (transform?.getTexCoord() != null) transform.setTexCoord(set)
  else info.setTexCoord(set)
}

/** The slots of a material that hold a texture, its extensions' included. */
function textureSlots(doc: Document, material: Material): TextureSlot[] {
  const graph = doc.getGraph()
  const slots: TextureSlot[] = []
  const visit = (owner: Property, prefix: string) => {
    const edges = graph.listChildEdges(owner)
    for (const edge of edges) {
      const child = edge.getChild()
      if (child instanceof Texture) {
        const info = edges.find((e) => e.getName() === `${edge.getName()}Info`)?.getChild()
        if (info instanceof TextureInfo) slots.push({ owner, name: edge.getName(), texture: child, info, label: prefix + edge.getName() })
      } else if (edge.getName() === 'extensions' && owner === material) {
        visit(child, `${(child as Property & { extensionName: string }).extensionName}.`)
      }
    }
  }
  visit(material, '')
  return slots
}

/**
 * Empties a slot through its own setter (`setBaseColorTexture(null)`); false where there is none.
 * A texture no other slot reads then goes too: the writer would store its image for nothing.
 */
function emptySlot(doc: Document, slot: TextureSlot): boolean {
  const setter = `set${slot.name[0]!.toUpperCase()}${slot.name.slice(1)}`
  const owner = slot.owner as unknown as Record<string, unknown>
  if (typeof owner[setter] !== 'function') return false
  ;(owner[setter] as (texture: null) => void).call(owner, null)
  if (slot.texture.listParents().every((parent) => parent === doc.getRoot())) slot.texture.dispose()
  return true
}

/**
 * A copy of a material that shares nothing it could change with the original: its extensions are
 * copies, and so are its texture reads' own extensions (KHR_texture_transform, whose texCoord a
 * renumbering sets), so emptying or renumbering a slot of it leaves the original alone. The
 * textures themselves are shared.
 */
export function ownCopy(material: Material): Material {
  const copy = material.clone()
  for (const extension of material.listExtensions()) copy.setExtension(extension.extensionName, extension.clone())
  for (const info of listTextureInfoByMaterial(copy))
    for (const extension of info.listExtensions()) info.setExtension(extension.extensionName, extension.clone())
  return copy
}

/**
 * glTF requires a primitive to carry every UV set its material's textures read
 * (glTF-Validator: MESH_PRIMITIVE_TOO_FEW_TEXCOORDS), and renderers disagree on what such a texture
 * shows (three.js samples it at (0, 0), Babylon.js leaves it out). Where a primitive lacks the set,
 * the texture is removed from the material it draws with, or from a copy of that material when
 * other primitives draw with it and do read the texture. Returns a note per material.
 *
 * ```ts
 * const notes = dropTexturesWithoutTexcoords(doc)
 * // ['material "TopRightMat": baseColorTexture removed where it could not be read (TEXCOORD_0 missing on 1 primitive)']
 * ```
 */
export function dropTexturesWithoutTexcoords(doc: Document): string[] {
  const notes: string[] = []
  for (const material of doc.getRoot().listMaterials()) {
    const slots = textureSlots(doc, material)
    if (slots.length === 0) continue
    const users = material.listParents().filter((parent): parent is Primitive => parent instanceof Primitive)
    // The primitives that cannot read some of the slots, grouped by which.
    const groups = new Map<string, Primitive[]>()
    for (const prim of users) {
      const unread = slots.filter((slot) => !prim.getAttribute(`TEXCOORD_${texCoordOf(slot.info)}`)).map((slot) => slot.label)
      if (unread.length > 0) groups.set(unread.join(', '), [...(groups.get(unread.join(', ')) ?? []), prim])
    }
    for (const [key, prims] of groups) {
      const target = prims.length === users.length ? material : ownCopy(material)
      const unread = key.split(', ')
      const missing = new Set<string>()
      const removed: string[] = []
      for (const slot of textureSlots(doc, target).filter((s) => unread.includes(s.label))) {
        missing.add(`TEXCOORD_${texCoordOf(slot.info)}`)
        if (emptySlot(doc, slot)) removed.push(slot.label)
      }
      for (const prim of prims) prim.setMaterial(target)
      const name = material.getName() || `#${doc.getRoot().listMaterials().indexOf(material)}`
      const count = prims.length === 1 ? '1 primitive' : `${prims.length} primitives`
      notes.push(
        `material "${name}": ${removed.join(', ')} removed where it could not be read (${[...missing].join(', ')} missing on ${count})`,
      )
    }
  }
  return notes
}
