import type { Document, Material } from '@gltf-transform/core'
import type { ResolveFile } from './obj.ts'
import { finiteOrZero, imageMimeType } from './text.ts'

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

/** Reads an .mtl into glTF materials: Kd/d/Tr, Ke, map_Kd (base colour), map_Bump/norm (normal map). */
export function readMtl(doc: Document, text: string, resolve: ResolveFile, out: Map<string, Material>): void {
  let current: Material | undefined
  const textures = new Map<string, ReturnType<Document['createTexture']> | null>()
  const texture = (file: string) => {
    if (textures.has(file)) return textures.get(file) ?? undefined
    const bytes = resolve(file)
    const mimeType = bytes && imageMimeType(bytes)
    const made =
      bytes && mimeType
        ? doc
            .createTexture(file)
            .setImage(bytes)
            .setMimeType(mimeType)
            .setURI(file.replace(/^.*[\\/]/, ''))
        : null
    textures.set(file, made)
    return made ?? undefined
  }
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
