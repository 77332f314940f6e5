import type { Document, Texture } from '@gltf-transform/core'
import { listTextureSlots } from '@gltf-transform/functions'

/** How a texture is used by the materials that point at it. */
export interface TextureRole {
  /** Material slots using it (baseColorTexture, normalTexture, ...). */
  slots: string[]
  /** Colour data (base colour, emissive, sheen/specular colour): stored sRGB-encoded. */
  srgb: boolean
  /** A tangent-space normal map (normal or clearcoat normal slot). */
  normalMap: boolean
}

/** The role of a texture from its material slots; a texture in no slot counts as colour data. */
export function textureRole(texture: Texture): TextureRole {
  const slots = listTextureSlots(texture)
  const normalMap = slots.some((slot) => /normalTexture$/i.test(slot))
  // A texture shared by a colour slot and a data slot is rare and has no right answer: data wins,
  // since linear data stored as sRGB bends its values, while sRGB colour stored linear only bands.
  const srgb = slots.length === 0 || slots.every(isColourSlot)
  return { slots, srgb, normalMap }
}

// Slots whose RGB the glTF specification (and its extensions) defines as sRGB-encoded colour.
const COLOUR_SLOTS = /^(baseColorTexture|emissiveTexture|sheenColorTexture|specularColorTexture|diffuseTexture|specularGlossinessTexture)$/

function isColourSlot(slot: string): boolean {
  return COLOUR_SLOTS.test(slot)
}

/** A readable name for messages: the texture's name or URI, else its index. */
export function textureLabel(doc: Document, texture: Texture): string {
  const index = doc.getRoot().listTextures().indexOf(texture)
  const name = texture.getName() || texture.getURI()
  return name ? `texture ${index} "${name}"` : `texture ${index}`
}

/** What both texture operations start from: the texture's name, role, bytes and its report's first fields. */
export function describeTexture(doc: Document, texture: Texture) {
  const label = textureLabel(doc, texture)
  const role = textureRole(texture)
  const image = texture.getImage()
  const from = texture.getMimeType()
  return { label, role, image, from, base: { name: label, slots: role.slots, from, before: image?.byteLength ?? 0 } }
}
