import type { Material, TextureInfo } from '@gltf-transform/core'
import type { Entry } from './gltf1-json.ts'

/** The parts of a glTF 1.0 JSON a material's textures are read from. */
export interface Gltf1Textures {
  textures?: Record<string, Entry>
  samplers?: Record<string, Entry>
}

/** The WebGL enums 1.0 and 2.0 samplers share. */
const WRAPS = new Set([33071, 33648, 10497])
const MAG_FILTERS = new Set([9728, 9729])
const MIN_FILTERS = new Set([9728, 9729, 9984, 9985, 9986, 9987])

/** The material parameter assimp's importer makes the base colour texture of; no other texture is imported. */
const BASE_COLOR = 'diffuse'

/**
 * What assimp's glTF 1.0 importer leaves out of a material's textures: the sampler of its diffuse
 * texture (assimp writes REPEAT and no filter whatever the file says, so a clamped or
 * nearest-filtered texture came out repeated and smoothed) is put back on the base colour
 * texture, and a texture on any other parameter (emission, specular, ambient, a technique's
 * own), which assimp drops, is returned as a note. `values` are the material's values over its
 * technique's defaults.
 */
export function restoreGltf1Textures(json: Gltf1Textures, id: string, material: Material, values: Entry): string[] {
  const notes: string[] = []
  for (const [parameter, value] of Object.entries(values)) {
    const texture = typeof value === 'string' ? json.textures?.[value] : undefined
    if (!texture) continue
    const info = material.getBaseColorTextureInfo()
    if (parameter === BASE_COLOR && info) setSampler(info, json.samplers?.[String(texture.sampler)])
    else if (parameter !== BASE_COLOR)
      notes.push(`material "${id}": its ${parameter} texture not carried (assimp's glTF 1.0 importer reads the diffuse texture only)`)
  }
  return notes
}

function setSampler(info: TextureInfo, sampler: Entry | undefined): void {
  // 1.0's defaults: REPEAT both ways, LINEAR magnification, NEAREST_MIPMAP_LINEAR minification.
  const wrapS = Number(sampler?.wrapS ?? 10497)
  const wrapT = Number(sampler?.wrapT ?? 10497)
  const mag = Number(sampler?.magFilter ?? 9729)
  const min = Number(sampler?.minFilter ?? 9986)
  if (WRAPS.has(wrapS)) info.setWrapS(wrapS as 10497)
  if (WRAPS.has(wrapT)) info.setWrapT(wrapT as 10497)
  if (MAG_FILTERS.has(mag)) info.setMagFilter(mag as 9729)
  if (MIN_FILTERS.has(min)) info.setMinFilter(min as 9729)
}
