import type { Document, Material, Texture, TextureInfo } from '@gltf-transform/core'
import { foreignImage, holdsForeignImage, noteForeignTexture } from './foreign-images.ts'
import { toGltfImage } from './image-files.ts'
import type { ResolveFile } from './upload-files.ts'
import { decodeDataUri, type Entry } from './gltf1-json.ts'

/** The parts of a glTF 1.0 JSON a material's textures are read from. */
export interface Gltf1Textures {
  textures?: Record<string, Entry>
  samplers?: Record<string, Entry>
  images?: Record<string, Entry>
  techniques?: Record<string, Entry>
}

/** Where a material's textures are read from: the 1.0 JSON, and the image files it names by URI. */
export interface Gltf1TextureSource {
  json: Gltf1Textures
  resolve: ResolveFile
}

/** The WebGL enums 1.0 and 2.0 samplers share. */
const WRAPS = new Set([33071, 33648, 10497])
const MAG_FILTERS = new Set([9728, 9729])
const MIN_FILTERS = new Set([9728, 9729, 9984, 9985, 9986, 9987])

/** The material parameter assimp's importer makes the base colour texture of; no other texture is imported. */
const BASE_COLOR = 'diffuse'

/**
 * Why a texture on a parameter glTF 2.0 cannot hold is not carried. Blinn-Phong's specular colour
 * scales a highlight added on top of the diffuse; KHR_materials_specular's specularColorTexture
 * scales the F0 reflectance of a microfacet BRDF (0.04 × the texture for a dielectric), with Fresnel
 * and energy taken from the diffuse: a white specular map would draw the default PBR highlight, a
 * 1.0 viewer a full-strength one, so no mapping draws what the file drew.
 */
const NOT_HELD: Record<string, string> = {
  specular: "a Blinn-Phong highlight colour, which KHR_materials_specular's reflectance at normal incidence does not reproduce",
  ambient: 'glTF 2.0 has no ambient term; an occlusion map is another thing',
}

/**
 * What assimp's glTF 1.0 importer leaves out of a material's textures: the sampler of its diffuse
 * texture (assimp writes REPEAT and no filter whatever the file says, so a clamped or
 * nearest-filtered texture came out repeated and smoothed) and its texture coordinate set are put
 * back on the base colour texture; its emission texture, which assimp drops, becomes the emissive texture, with the 1.0
 * sampler and texture coordinate set, under an emissive factor of 1 (so it shows as given); a
 * texture on any other parameter (specular, ambient, a technique's own), which glTF 2.0 cannot
 * hold, is returned as a note. `values` are the material's values over its technique's defaults;
 * `technique` is its 1.0 technique, absent for KHR_materials_common.
 */
export function restoreGltf1Textures(
  doc: Document,
  source: Gltf1TextureSource,
  id: string,
  material: Material,
  values: Entry,
  technique: Entry | undefined,
): string[] {
  const notes: string[] = []
  const { json } = source
  for (const [parameter, value] of Object.entries(values)) {
    const texture = typeof value === 'string' ? json.textures?.[value] : undefined
    if (!texture) continue
    const sampler = json.samplers?.[String(texture.sampler)]
    const info = material.getBaseColorTextureInfo()
    if (parameter === BASE_COLOR) {
      if (info) setSampler(info, sampler).setTexCoord(texCoordSet(technique))
    } else if (parameter === 'emission') {
      const made = textureOf(doc, source, texture, (note) => notes.push(`material "${id}": its emission texture ${note}`))
      if (typeof made === 'string') notes.push(`material "${id}": its emission texture not carried (${made})`)
      else {
        const before = material.getEmissiveFactor()
        material.setEmissiveTexture(made).setEmissiveFactor([1, 1, 1])
        const emissive = material.getEmissiveTextureInfo()!
        setSampler(emissive, sampler).setTexCoord(texCoordSet(technique))
        // A GIF, TIFF or AVIF is decoded after the read (decode-foreign-textures.ts); one sharp cannot is not carried, as any other.
        const image = String(texture.source)
        if (holdsForeignImage(made))
          noteForeignTexture(made, {
            partly: (note) => `[gltf 1.0] material "${id}": its emission texture (image "${image}") ${note}`,
            dropped: `[gltf 1.0] material "${id}": its emission texture not carried (${notConverted(image)})`,
            undo: () => material.setEmissiveFactor(before),
          })
      }
    } else {
      const why = NOT_HELD[parameter] ?? 'glTF 2.0 materials have no such input'
      notes.push(`material "${id}": its ${parameter} texture not carried (${why})`)
    }
  }
  return notes
}

/**
 * The texture coordinate set a technique's textures read: 1.0 ties a texture to a set in the
 * technique's shader only, so where its attributes name one TEXCOORD_n, that one; otherwise (and
 * for KHR_materials_common, whose textures read TEXCOORD_0) set 0, the one assimp gives every texture.
 */
function texCoordSet(technique: Entry | undefined): number {
  const parameters = (technique?.parameters ?? {}) as Record<string, Entry>
  const attributes = Object.values((technique?.attributes ?? {}) as Record<string, unknown>)
  const sets = attributes.flatMap((name) => {
    const match = /^TEXCOORD_(\d+)$/.exec(String(parameters[String(name)]?.semantic))
    return match ? [Number(match[1])] : []
  })
  return sets.length === 1 ? sets[0]! : 0
}

/**
 * The 2.0 texture of a 1.0 texture's image: one the document already holds with the same bytes
 * (the diffuse texture assimp made of it), or a new one; a string saying why where there is none.
 */
function textureOf(doc: Document, { json, resolve }: Gltf1TextureSource, texture: Entry, tell: (note: string) => void): Texture | string {
  const entry = json.images?.[String(texture.source)]
  const uri = entry?.uri
  const bytes = typeof uri !== 'string' ? undefined : uri.startsWith('data:') ? decodeDataUri(uri) : resolve(uri)
  if (!bytes) return `its image "${String(texture.source)}" is not in the file`
  // The same conversion as the diffuse texture's (assimp-read.ts): TGA, BMP, DDS and PSD become PNG, GIF,
  // TIFF and AVIF are kept to be decoded after the read; only PNG and JPEG, which 2.0 holds without an extension, are kept.
  const gltfImage = toGltfImage(bytes)
  const image = gltfImage && (gltfImage.mimeType === 'image/png' || gltfImage.mimeType === 'image/jpeg') ? gltfImage : foreignImage(bytes)
  if (!image) return notConverted(String(texture.source))
  if (gltfImage?.note) tell(`(image "${String(texture.source)}") ${gltfImage.note}`)
  const same = doc
    .getRoot()
    .listTextures()
    .find((existing) => Buffer.from(existing.getImage() ?? []).equals(Buffer.from(image.bytes)))
  if (same) return same
  const name = typeof entry?.name === 'string' ? entry.name : String(texture.source)
  return doc.createTexture(name).setImage(image.bytes).setMimeType(image.mimeType)
}

function notConverted(image: string): string {
  return `its image "${image}" is not an image glTF 2.0 holds or Mos converts (PNG, JPEG, TGA, BMP, DDS, PSD, GIF, TIFF, AVIF)`
}

function setSampler(info: TextureInfo, sampler: Entry | undefined): TextureInfo {
  // 1.0's defaults: REPEAT both ways, LINEAR magnification, NEAREST_MIPMAP_LINEAR minification.
  const wrapS = Number(sampler?.wrapS ?? 10497)
  const wrapT = Number(sampler?.wrapT ?? 10497)
  const mag = Number(sampler?.magFilter ?? 9729)
  const min = Number(sampler?.minFilter ?? 9986)
  if (WRAPS.has(wrapS)) info.setWrapS(wrapS as 10497)
  if (WRAPS.has(wrapT)) info.setWrapT(wrapT as 10497)
  if (MAG_FILTERS.has(mag)) info.setMagFilter(mag as 9729)
  if (MIN_FILTERS.has(min)) info.setMinFilter(min as 9729)
  return info
}
