import { ColorUtils, type Document, type Material, type Primitive, type Texture, type TextureInfo, type vec4 } from '@gltf-transform/core'
import { listTextureInfoByMaterial } from '@gltf-transform/functions'
import { encodeSmallestPng } from '../io/png-smallest.ts'
import { joinable } from './merge-meshes.ts'
import { dropUnreadTexcoords } from './unread-texcoords.ts'

/**
 * Fewer distinct materials than this and nothing is done: as `gltf-transform optimize`'s palette
 * (`--palette-min 5`), the texture and the coordinates it needs then cost about what they save.
 */
export const PALETTE_MIN_MATERIALS = 5

/** Pixels a side of each colour's square: a sample at its centre reads only it, bilinear or not. */
const BLOCK = 4

/** Colours a palette row holds before a second row is begun (a 256 px wide texture; more rows past 64 colours). */
const ROW_COLUMNS = 64

/** The longest side of a palette texture: 4096 px, which every WebGL 2 device samples (a million entries of 4×4 at most). */
const MAX_SIDE = 4096

/**
 * Palette materials made at most: materials that differ in this many ways besides their colours
 * (alpha mode, sidedness, extensions, extras) gain little from one, and grouping them compares each
 * material with every group so far (a file of 50 000 materials differing in their extras would take
 * minutes).
 */
const MAX_PALETTE_MATERIALS = 64

/** GL's NEAREST filter (TextureInfo.MinFilter.NEAREST, typed there as possibly undefined): a sample reads its block alone. */
const NEAREST = 9728

/** The factors a palette texture can stand for, in glTF's names. */
type PaletteSlot = 'baseColor' | 'emissive' | 'metallicRoughness'

/** What the palette step did, for the task's details. */
export interface PaletteReport {
  /** Materials of the primitives it could take (untextured), and what they became. */
  materials_before: number
  materials_after: number
  /** Distinct colours (and metal/roughness pairs) in the palette: one block of the texture each. */
  entries: number
  /** The texture slots that read from a palette, with its size. */
  textures: { slot: PaletteSlot; width: number; height: number; bytes: number }[]
}

export interface PaletteOptions {
  /** The longest side a texture may have (texture_max_size): the layout wraps to stay within it. */
  maxSize?: number
  /** The bits texture coordinates will be stored on: a palette row holds at most 2^bits − 1 colours. */
  texcoordBits?: number
}

/**
 * Replaces the materials without textures by as few materials as possible reading their factors from
 * small palette textures, as `gltf-transform optimize` does by default (its `palette()`), so that merge
 * can join the primitives they kept apart (five corpus meshes in five colours: 5 draw calls → 2).
 * Each distinct base colour (with alpha), emissive colour and metallic/roughness pair becomes a 4×4
 * block; each primitive gets TEXCOORD_0 at its block's centre, sampled NEAREST. A factor that is the
 * same for every material stays a factor; materials that differ in anything else (alpha mode, double
 * sidedness, extensions, extras) stay apart. Colours are stored on 8 bits, as textures store them.
 *
 * Left as they were: primitives merge would not join (eligiblePrimitives) or that still read a
 * texture coordinate set, files with KHR_materials_variants (whose mappings name materials) or
 * KHR_materials_pbrSpecularGlossiness (whose factors are not these), and files with fewer than
 * PALETTE_MIN_MATERIALS distinct materials.
 *
 * ```ts
 * const report = await paletteMaterials(doc, { texcoordBits: 12 }, notes)
 * ```
 */
export async function paletteMaterials(doc: Document, options: PaletteOptions, notes: string[]): Promise<PaletteReport | undefined> {
  const used = new Set(
    doc
      .getRoot()
      .listExtensionsUsed()
      .map((extension) => extension.extensionName),
  )
  if (used.has('KHR_materials_variants') || used.has('KHR_materials_pbrSpecularGlossiness')) return undefined
  // A set no texture reads would be taken for ours (and keep the primitive out); compress drops them anyway.
  notes.push(...dropUnreadTexcoords(doc))
  const prims = eligiblePrimitives(doc)
  const undo = standInDefaultMaterial(doc, prims)
  const report = await buildPalette(doc, prims, options, notes)
  if (!report) undo()
  return report
}

/**
 * Gives the primitives without a material glTF's default one as a material of their own (white,
 * metallic 1, roughness 1: what renderers draw them with), so they take a palette entry and merge
 * joins them with the rest; returns what undoes it, for when no palette is made.
 */
function standInDefaultMaterial(doc: Document, prims: Primitive[]): () => void {
  const bare = prims.filter((prim) => !prim.getMaterial())
  if (bare.length === 0) return () => {}
  const material = doc.createMaterial()
  for (const prim of bare) prim.setMaterial(material)
  return () => {
    for (const prim of bare) prim.setMaterial(null)
    material.dispose()
  }
}

/** The palette of the eligible primitives' materials, or undefined (with a note where it says why) when none is made. */
async function buildPalette(
  doc: Document,
  prims: Primitive[],
  options: PaletteOptions,
  notes: string[],
): Promise<PaletteReport | undefined> {
  const materials = new Set(prims.map((prim) => prim.getMaterial()!))
  // One entry (a block) per distinct stored value: the first material of each stands for it.
  const blockOfKey = new Map<string, number>()
  const blockOf = new Map<Material, number>()
  const entries: Material[] = []
  for (const material of materials) {
    const key = factorKey(material)
    if (!blockOfKey.has(key)) blockOfKey.set(key, entries.push(material) - 1)
    blockOf.set(material, blockOfKey.get(key)!)
  }
  if (entries.length < PALETTE_MIN_MATERIALS) return undefined
  const layout = paletteLayout(entries.length, options)
  if (!layout) {
    notes.push(
      `palette: ${entries.length} distinct materials do not fit a palette texture within ${options.maxSize ?? '∞'} px whose coordinates ${options.texcoordBits ?? 'float'} bits tell apart; materials left as they were`,
    )
    return undefined
  }
  const slots = (['baseColor', 'emissive', 'metallicRoughness'] as const).filter(
    (slot) => new Set(entries.map((material) => slotValue(material, slot).join())).size > 1,
  )
  const groups = groupMaterials([...materials], skippedProperties(slots))
  if (!groups) {
    notes.push(
      `palette: the materials without textures differ in more than ${MAX_PALETTE_MATERIALS} ways besides their colours; materials left as they were`,
    )
    return undefined
  }
  const values = (slot: PaletteSlot) => entries.map((material) => slotValue(material, slot))
  const { textures, report } = await writePaletteTextures(doc, slots, values, layout)
  const merged = assignPaletteMaterials(doc, prims, groups, (material) => blockOf.get(material)!, layout, textures)
  for (const material of materials) if (material.listParents().every((parent) => parent === doc.getRoot())) material.dispose()
  notes.push(
    `materials: ${materials.size} without textures became ${merged}, reading their ${slots.join(' and ')} factors from ${slots.length === 1 ? 'a palette texture' : 'palette textures'} of ${entries.length} entries, stored on 8 bits a channel (colours in sRGB), as textures store them`,
  )
  return { materials_before: materials.size, materials_after: merged, entries: entries.length, textures: report }
}

/**
 * Primitives merge can join (merge-meshes.ts's `joinable`: a mesh drawn by one node, triangles, its
 * own vertex streams) whose material (or glTF's default) reads no texture and that read no texture coordinates (after the
 * unread ones went). Others would only gain coordinates: joining a mesh drawn by several nodes copies
 * it, so merge leaves it apart whatever its material (2CylinderEngine: 104 → 103 draw calls, +1.5% with
 * every primitive taken).
 */
function eligiblePrimitives(doc: Document): Primitive[] {
  const untextured = new Map<Material, boolean>()
  const prims: Primitive[] = []
  const meshes = new Set(
    doc
      .getRoot()
      .listNodes()
      .filter(joinable)
      .map((node) => node.getMesh()!),
  )
  for (const mesh of meshes) {
    for (const prim of mesh.listPrimitives()) {
      const material = prim.getMaterial()
      if (!prim.getAttribute('POSITION')) continue
      if (prim.listSemantics().some((semantic) => semantic.startsWith('TEXCOORD_'))) continue
      // Without a material it draws with glTF's default, which reads no texture.
      if (!material) {
        prims.push(prim)
        continue
      }
      let plain = untextured.get(material)
      if (plain === undefined) untextured.set(material, (plain = listTextureInfoByMaterial(material).length === 0))
      if (plain) prims.push(prim)
    }
  }
  return prims
}

/** A slot's factor as the texture stores it: 8-bit RGBA, colours converted to sRGB. */
function slotValue(material: Material, slot: PaletteSlot): number[] {
  const byte = (value: number) => Math.round(Math.min(1, Math.max(0, value)) * 255)
  if (slot === 'metallicRoughness') return [0, byte(material.getRoughnessFactor()), byte(material.getMetallicFactor()), 255]
  const linear: vec4 = slot === 'baseColor' ? [...material.getBaseColorFactor()] : [...material.getEmissiveFactor(), 1]
  const srgb = ColorUtils.convertLinearToSRGB(linear.slice(0, 3) as vec4, [0, 0, 0, 0] as vec4)
  return [byte(srgb[0]), byte(srgb[1]), byte(srgb[2]), byte(linear[3])]
}

/** Materials alike in every palette slot as stored are one entry. */
function factorKey(material: Material): string {
  return (['baseColor', 'emissive', 'metallicRoughness'] as const).map((slot) => slotValue(material, slot).join()).join('|')
}

interface PaletteLayout {
  columns: number
  rows: number
  width: number
  height: number
}

/**
 * Entries in rows of ROW_COLUMNS blocks (more where MAX_SIDE would be passed), on power-of-two sides
 * (mipmaps on every renderer), within `maxSize` and MAX_SIDE. Stored coordinates have 2^bits − 1
 * steps across the span they use, so at most that many columns (and rows) are told apart: a centre
 * moves by at most half a step, less than half a block.
 */
function paletteLayout(entries: number, options: PaletteOptions): PaletteLayout | undefined {
  const steps = options.texcoordBits === undefined ? Number.POSITIVE_INFINITY : 2 ** options.texcoordBits - 1
  const maxBlocks = Math.floor(Math.min(options.maxSize ?? MAX_SIDE, MAX_SIDE) / BLOCK)
  const columns = Math.min(entries, Math.max(ROW_COLUMNS, Math.ceil(entries / maxBlocks)), steps, maxBlocks)
  if (columns < 1) return undefined
  const rows = Math.ceil(entries / columns)
  if (rows > steps || rows > maxBlocks) return undefined
  return { columns, rows, width: ceilPowerOfTwo(columns * BLOCK), height: ceilPowerOfTwo(rows * BLOCK) }
}

function ceilPowerOfTwo(value: number): number {
  return 2 ** Math.ceil(Math.log2(value))
}

/** One palette texture per slot, each the smallest PNG of its pixels, with what the report says of them. */
async function writePaletteTextures(
  doc: Document,
  slots: readonly PaletteSlot[],
  values: (slot: PaletteSlot) => number[][],
  layout: PaletteLayout,
): Promise<{ textures: Map<PaletteSlot, Texture>; report: PaletteReport['textures'] }> {
  const textures = new Map<PaletteSlot, Texture>()
  const report: PaletteReport['textures'] = []
  for (const slot of slots) {
    const image = await encodeSmallestPng(paletteImage(values(slot), layout))
    textures.set(slot, doc.createTexture(`palette-${slot}`).setImage(image).setMimeType('image/png').setURI(`palette-${slot}.png`))
    report.push({ slot, width: layout.width, height: layout.height, bytes: image.byteLength })
  }
  return { textures, report }
}

/** The palette's pixels: entry i's block at column i mod columns, row i / columns; the rest transparent black. */
function paletteImage(values: number[][], layout: PaletteLayout): { width: number; height: number; data: Uint8Array } {
  const data = new Uint8Array(layout.width * layout.height * 4)
  values.forEach((value, index) => {
    const x0 = (index % layout.columns) * BLOCK
    const y0 = Math.floor(index / layout.columns) * BLOCK
    for (let y = y0; y < y0 + BLOCK; y++) for (let x = x0; x < x0 + BLOCK; x++) data.set(value, (y * layout.width + x) * 4)
  })
  return { width: layout.width, height: layout.height, data }
}

/** What a palette material does not compare: what its textures stand for, and the name. */
function skippedProperties(slots: readonly PaletteSlot[]): Set<string> {
  const skip = new Set(['name'])
  if (slots.includes('baseColor')) for (const prop of ['baseColorFactor', 'baseColorTexture', 'baseColorTextureInfo']) skip.add(prop)
  if (slots.includes('emissive')) for (const prop of ['emissiveFactor', 'emissiveTexture', 'emissiveTextureInfo']) skip.add(prop)
  if (slots.includes('metallicRoughness'))
    for (const prop of ['metallicFactor', 'roughnessFactor', 'metallicRoughnessTexture', 'metallicRoughnessTextureInfo']) skip.add(prop)
  return skip
}

/**
 * Each material's group: materials alike in everything but `skip` share one (the first of them
 * stands for it). Undefined where more than MAX_PALETTE_MATERIALS groups would be made.
 */
function groupMaterials(materials: Material[], skip: Set<string>): Map<Material, Material> | undefined {
  const representatives: Material[] = []
  const groups = new Map<Material, Material>()
  for (const material of materials) {
    let representative = representatives.find((candidate) => candidate.equals(material, skip))
    if (!representative) {
      if (representatives.length === MAX_PALETTE_MATERIALS) return undefined
      representatives.push((representative = material))
    }
    groups.set(material, representative)
  }
  return groups
}

/**
 * Gives each primitive its group's palette material and TEXCOORD_0 at its block's centre. Returns
 * how many palette materials there are.
 */
function assignPaletteMaterials(
  doc: Document,
  prims: Primitive[],
  groups: Map<Material, Material>,
  blockOf: (material: Material) => number,
  layout: PaletteLayout,
  textures: Map<PaletteSlot, Texture>,
): number {
  const paletteOf = new Map<Material, Material>()
  for (const prim of prims) {
    const source = prim.getMaterial()!
    const representative = groups.get(source)!
    let palette = paletteOf.get(representative)
    if (!palette) paletteOf.set(representative, (palette = paletteMaterial(representative, textures)))
    const block = blockOf(source)
    const u = ((block % layout.columns) * BLOCK + BLOCK / 2) / layout.width
    const v = (Math.floor(block / layout.columns) * BLOCK + BLOCK / 2) / layout.height
    const position = prim.getAttribute('POSITION')!
    const uv = new Float32Array(position.getCount() * 2)
    for (let i = 0; i < uv.length; i += 2) {
      uv[i] = u
      uv[i + 1] = v
    }
    prim.setMaterial(palette).setAttribute('TEXCOORD_0', doc.createAccessor().setType('VEC2').setArray(uv).setBuffer(position.getBuffer()))
  }
  return paletteOf.size
}

/** A copy of the material reading the palette's slots, their factors 1 (the texture holds them). */
function paletteMaterial(source: Material, textures: Map<PaletteSlot, Texture>): Material {
  const material = source.clone().setName('')
  const nearest = (info: TextureInfo | null) => info?.setMinFilter(NEAREST).setMagFilter(NEAREST)
  const baseColor = textures.get('baseColor')
  if (baseColor) nearest(material.setBaseColorFactor([1, 1, 1, 1]).setBaseColorTexture(baseColor).getBaseColorTextureInfo())
  const emissive = textures.get('emissive')
  if (emissive) nearest(material.setEmissiveFactor([1, 1, 1]).setEmissiveTexture(emissive).getEmissiveTextureInfo())
  const metallicRoughness = textures.get('metallicRoughness')
  if (metallicRoughness)
    nearest(
      material.setMetallicFactor(1).setRoughnessFactor(1).setMetallicRoughnessTexture(metallicRoughness).getMetallicRoughnessTextureInfo(),
    )
  return material
}
