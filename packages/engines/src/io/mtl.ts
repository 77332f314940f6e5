import type { Document, Material, Texture } from '@gltf-transform/core'
import { holdsForeignImage, noteForeignTexture } from './foreign-images.ts'
import { createImageFiles, createTextureLoader, type ImageFile } from './image-files.ts'
import { finiteOrZero, formatFloat } from './text.ts'
import type { ResolveFile } from './upload-files.ts'

const MAP_OPTION_ARGS: Record<string, number> = { '-o': 3, '-s': 3, '-t': 3, '-mm': 2 }

/** The file name of a `map_*` statement, after its options (-s 1 1 1, -bm 0.5, ...). */
function mapFileName(rest: string): string {
  const tokens = rest.split(/\s+/)
  let i = 0
  while (i < tokens.length && tokens[i]!.startsWith('-')) {
    const args = MAP_OPTION_ARGS[tokens[i]!] ?? 1
    i++
    // -o/-s/-t take 1 to 3 numbers
    for (let k = 0; k < args && i < tokens.length - 1 && (args === 1 || !Number.isNaN(Number(tokens[i]))); k++) i++
  }
  return tokens.slice(i).join(' ')
}

/**
 * Reads an .mtl into glTF materials: Kd/d/Tr, Ke, map_Kd (base colour), map_Bump/norm (normal map),
 * map_Ke (emissive). Texture files come through `resolve` (TGA and BMP become PNG); one that is missing
 * or in a format Mos cannot decode is dropped with a warning naming it.
 */
export function readMtl(doc: Document, text: string, resolve: ResolveFile, out: Map<string, Material>, warn: (text: string) => void): void {
  let current: Material | undefined
  const texture = createTextureLoader(doc, resolve, warn, 'obj')
  for (const raw of text.split(/\r?\n|\r/)) {
    const line = raw.replace(/#.*/, '').trim()
    if (line === '') continue
    const space = line.search(/\s/)
    const keyword = (space < 0 ? line : line.slice(0, space)).toLowerCase()
    const rest = space < 0 ? '' : line.slice(space + 1).trim()
    if (keyword === 'newmtl') {
      current = doc.createMaterial(rest)
      out.set(rest, current)
      continue
    }
    if (!current) continue
    const values = rest.split(/\s+/).map(Number)
    switch (keyword) {
      case 'kd': {
        const [r, g, b] = [finiteOrZero(values[0]), finiteOrZero(values[1] ?? values[0]), finiteOrZero(values[2] ?? values[0])]
        current.setBaseColorFactor([r, g, b, current.getBaseColorFactor()[3]!])
        break
      }
      case 'd':
      case 'tr': {
        const value = finiteOrZero(values[0] ?? 1)
        const alpha = Math.max(0, Math.min(1, keyword === 'd' ? value : 1 - value))
        const f = current.getBaseColorFactor()
        current.setBaseColorFactor([f[0]!, f[1]!, f[2]!, alpha])
        if (alpha < 1) current.setAlphaMode('BLEND')
        break
      }
      case 'ke':
        current.setEmissiveFactor([finiteOrZero(values[0]), finiteOrZero(values[1] ?? values[0]), finiteOrZero(values[2] ?? values[0])])
        break
      case 'map_kd': {
        const t = texture(mapFileName(rest))
        if (t) current.setBaseColorTexture(t)
        break
      }
      case 'map_ke': {
        const t = texture(mapFileName(rest))
        if (t) setEmissiveMap(current, t)
        break
      }
      case 'map_bump':
      case 'bump':
      case 'norm': {
        const t = texture(mapFileName(rest))
        if (t) current.setNormalTexture(t)
        break
      }
      default:
      // Ka, Ks, Ns, illum: no glTF metallic-roughness equivalent worth guessing
    }
  }
}

/** A `map_Ke`: the map scales Ke; a map without Ke is meant to glow as painted. */
function setEmissiveMap(material: Material, texture: Texture): void {
  material.setEmissiveTexture(texture)
  if (material.getEmissiveFactor().some((c) => c !== 0)) return
  material.setEmissiveFactor([1, 1, 1])
  // A GIF sharp cannot decode after the read is dropped: as if the map were never found, no glow
  // (unless a later `Ke` set the factor).
  if (!holdsForeignImage(texture)) return
  noteForeignTexture(texture, {
    undo: () => {
      if (material.getEmissiveFactor().every((c) => c === 1)) material.setEmissiveFactor([0, 0, 0])
    },
  })
}

/** The .mtl written beside an OBJ, with the images it references. */
export interface MaterialLibrary {
  /** The `usemtl` name of a material (null: glTF's default material), unique and without spaces. */
  nameOf(material: Material | null): string
  /**
   * True when a material named so far holds more than its name (a colour, an emissive, a texture):
   * only then is an .mtl worth writing; names alone travel in the OBJ's `usemtl` lines.
   */
  holdsMoreThanNames(): boolean
  /** The .mtl text of every material named so far, its image files, and what MTL could not hold. */
  write(): { mtl: Uint8Array; images: ImageFile[]; notes: string[] }
}

/**
 * Collects the materials an OBJ uses into one .mtl: base colour (`Kd`, `d`, `map_Kd`), emissive
 * (`Ke`, `map_Ke`) and normal map (`map_Bump`, what Blender and our reader take as one). MTL has no
 * metallic-roughness or occlusion maps: those are counted in the notes.
 */
export function createMaterialLibrary(): MaterialLibrary {
  const names = new Map<Material | null, string>()
  const used = new Set<string>()
  const imageFile = createImageFiles()
  return {
    nameOf(material) {
      let name = names.get(material)
      if (name === undefined) {
        const base = (material?.getName() ?? 'default').trim().replace(/\s+/g, '_') || `material_${names.size}`
        name = base
        for (let n = 1; used.has(name); n++) name = `${base}_${n}`
        used.add(name)
        names.set(material, name)
      }
      return name
    },
    holdsMoreThanNames() {
      return [...names.keys()].some((material) => material !== null && !isPlain(material))
    },
    write() {
      const lines = ['# written by Mos']
      const images = new Map<string, ImageFile>()
      const dropped = { 'metallic-roughness': 0, occlusion: 0 }
      const map = (keyword: string, texture: Texture | null) => {
        if (!texture) return
        const file = imageFile(texture)
        images.set(file.fileName, file)
        lines.push(`${keyword} ${file.fileName}`)
      }
      for (const [material, name] of names) {
        const [r, g, b, a] = material?.getBaseColorFactor() ?? [1, 1, 1, 1]
        lines.push('', `newmtl ${name}`, `Kd ${formatFloat(r)} ${formatFloat(g)} ${formatFloat(b)}`)
        if (a < 1) lines.push(`d ${formatFloat(a)}`)
        const emissive = material?.getEmissiveFactor() ?? [0, 0, 0]
        if (emissive.some((c) => c > 0)) lines.push(`Ke ${emissive.map(formatFloat).join(' ')}`)
        if (!material) continue
        map('map_Kd', material.getBaseColorTexture())
        map('map_Ke', material.getEmissiveTexture())
        map('map_Bump', material.getNormalTexture())
        if (material.getMetallicRoughnessTexture()) dropped['metallic-roughness']++
        if (material.getOcclusionTexture()) dropped.occlusion++
      }
      const notes = Object.entries(dropped)
        .filter(([, count]) => count > 0)
        .map(([kind, count]) => `${count} ${kind} map(s) dropped: an .mtl holds base colour, emissive and normal maps only`)
      return { mtl: new TextEncoder().encode(`${lines.join('\n')}\n`), images: [...images.values()], notes }
    },
  }
}

/** glTF's default material (white, opaque, not emissive) with no texture: nothing an .mtl would add. */
function isPlain(material: Material): boolean {
  const textures = [
    material.getBaseColorTexture(),
    material.getEmissiveTexture(),
    material.getNormalTexture(),
    material.getMetallicRoughnessTexture(),
    material.getOcclusionTexture(),
  ]
  return (
    material.getBaseColorFactor().every((c) => c === 1) && material.getEmissiveFactor().every((c) => c === 0) && textures.every((t) => !t)
  )
}
