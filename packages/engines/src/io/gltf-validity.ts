import type { Accessor, Document, Material, Primitive, Property } from '@gltf-transform/core'
import { type EmissiveStrength, KHRMaterialsEmissiveStrength } from '@gltf-transform/extensions'
import { listTextureInfoByMaterial } from '@gltf-transform/functions'
import { addMissingTangents } from '../geometry/missing-tangents.ts'
import { normalizeSkinWeights } from '../geometry/skin-weights.ts'
import { dropTexturesWithoutTexcoords, ownCopy, setTexCoordOf, texCoordOf } from './texture-slots.ts'

/**
 * Makes a Document valid glTF before it is written as glb or gltf, whatever reader it came from:
 * values read through assimp (FBX, COLLADA) or another tool pass through as they were stored, and
 * glTF-Validator refuses some of them. Skin weights are renormalised to sum 1, texture coordinates
 * and colours get an accessor type glTF allows, and material factors are brought into 0..1 (an
 * emissive factor above 1 moves into `KHR_materials_emissive_strength`, so the brightness is kept),
 * a texture a primitive has no UV set for is removed where it is drawn that way (texture-slots.ts),
 * and a primitive whose material needs a tangent space it cannot derive gets MikkTSpace tangents
 * (missing-tangents.ts).
 * Returns one note per kind of change, for the task record. (Names and UV set numbers are made
 * valid for every format before this, in writeModel.)
 *
 * ```ts
 * const notes = await makeGltfValid(doc) // then io.writeBinary(doc)
 * ```
 */
export async function makeGltfValid(doc: Document): Promise<string[]> {
  const notes: string[] = []
  const weights = normalizeSkinWeights(doc)
  if (weights > 0) notes.push(`skin weights of ${weights} vertices renormalised to sum 1 (glTF requires it)`)
  notes.push(...fixAttributeFormats(doc))
  for (const material of doc.getRoot().listMaterials()) notes.push(...fixMaterialFactors(doc, material))
  notes.push(...dropTexturesWithoutTexcoords(doc))
  notes.push(...(await addMissingTangents(doc)))
  return notes
}

/**
 * Names that are not strings (badString.gltf's scene is named 42) become strings: glTF-Validator
 * refuses them, and the OBJ, PLY and COLLADA writers print them.
 */
export function stringifyNames(doc: Document): void {
  const root = doc.getRoot()
  const properties: Property[] = [
    ...root.listScenes(),
    ...root.listNodes(),
    ...root.listMeshes(),
    ...root.listMaterials(),
    ...root.listTextures(),
    ...root.listAccessors(),
    ...root.listBuffers(),
    ...root.listAnimations(),
    ...root.listSkins(),
    ...root.listCameras(),
  ]
  for (const property of properties) {
    const name = property.getName() as unknown
    if (typeof name !== 'string') property.setName(name === undefined || name === null ? '' : String(name))
  }
}

/** Types glTF allows for texture coordinates and colours (besides float). */
const ATTRIBUTE_FORMATS: { prefix: string; sizes: number[]; label: string }[] = [
  { prefix: 'TEXCOORD_', sizes: [2], label: 'UV set(s) rewritten as float VEC2 (glTF UVs have two components)' },
  { prefix: 'COLOR_', sizes: [3, 4], label: 'vertex colour set(s) rewritten as float (a type glTF allows)' },
]

/**
 * TEXCOORD_n must be VEC2 and COLOR_n VEC3 or VEC4, float or normalized unsigned byte/short.
 * assimp hands COLLADA's 3-component UVW sets over as VEC3: the third component, which no glTF
 * texture lookup reads, is dropped. Other component types become float.
 */
function fixAttributeFormats(doc: Document): string[] {
  const fixed = new Map<string, Set<Accessor>>()
  const quantized = doc
    .getRoot()
    .listExtensionsUsed()
    .some((extension) => extension.extensionName === 'KHR_mesh_quantization')
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      for (const semantic of prim.listSemantics()) {
        const format = ATTRIBUTE_FORMATS.find((f) => semantic.startsWith(f.prefix))
        const accessor = prim.getAttribute(semantic)!
        if (!format || allowedFormat(accessor, format.sizes, quantized && format.prefix === 'TEXCOORD_')) continue
        const size = Math.min(Math.max(accessor.getElementSize(), format.sizes[0]!), format.sizes.at(-1)!)
        toFloat(accessor, size)
        const set = fixed.get(format.label) ?? new Set()
        fixed.set(format.label, set.add(accessor))
      }
    }
  }
  return [...fixed].map(([label, accessors]) => `${accessors.size} ${label}`)
}

/** `quantizedUvs`: KHR_mesh_quantization also allows (un)normalized signed and unsigned 8- and 16-bit UVs (what compress writes). */
function allowedFormat(accessor: Accessor, sizes: number[], quantizedUvs: boolean): boolean {
  if (!sizes.includes(accessor.getElementSize())) return false
  const array = accessor.getArray()
  if (array instanceof Float32Array) return true
  if (
    quantizedUvs &&
    (array instanceof Int8Array || array instanceof Uint8Array || array instanceof Int16Array || array instanceof Uint16Array)
  ) {
    return true
  }
  return accessor.getNormalized() && (array instanceof Uint8Array || array instanceof Uint16Array)
}

/** Rewrites an accessor as float elements of `size` components (extra ones dropped, missing ones 1). */
function toFloat(accessor: Accessor, size: number): void {
  const count = accessor.getCount()
  const out = new Float32Array(count * size)
  const element: number[] = []
  for (let i = 0; i < count; i++) {
    accessor.getElement(i, element)
    for (let c = 0; c < size; c++) out[i * size + c] = element[c] ?? 1
  }
  accessor
    .setType(size === 2 ? 'VEC2' : size === 3 ? 'VEC3' : 'VEC4')
    .setNormalized(false)
    .setArray(out)
}

const clamp01 = (value: number) => (value > 1 ? 1 : value > 0 ? value : 0)

/** Brings a material's factors into the ranges glTF requires; returns what it changed. */
function fixMaterialFactors(doc: Document, material: Material): string[] {
  const notes: string[] = []
  const name = `material "${material.getName()}"`
  const emissive = material.getEmissiveFactor()
  const peak = Math.max(...emissive)
  if (peak > 1) {
    // Scaling the colour down and the strength up keeps the emitted light the same.
    const extension = doc.createExtension(KHRMaterialsEmissiveStrength)
    const strength = material.getExtension<EmissiveStrength>('KHR_materials_emissive_strength') ?? extension.createEmissiveStrength()
    strength.setEmissiveStrength(strength.getEmissiveStrength() * peak)
    material.setExtension('KHR_materials_emissive_strength', strength)
    material.setEmissiveFactor(emissive.map((c) => clamp01(c / peak)) as [number, number, number])
    notes.push(`${name}: emissive factor ${round(peak)} above 1 moved to KHR_materials_emissive_strength`)
  } else if (emissive.some((c) => c < 0)) {
    material.setEmissiveFactor(emissive.map(clamp01) as [number, number, number])
    notes.push(`${name}: negative emissive factor set to 0`)
  }
  const base = material.getBaseColorFactor()
  if (base.some((c) => c !== clamp01(c))) {
    material.setBaseColorFactor(base.map(clamp01) as [number, number, number, number])
    notes.push(`${name}: base colour factor [${base.map(round).join(', ')}] clamped to 0..1`)
  }
  const scalars: [string, () => number, (value: number) => void][] = [
    ['metallic factor', () => material.getMetallicFactor(), (v) => material.setMetallicFactor(v)],
    ['roughness factor', () => material.getRoughnessFactor(), (v) => material.setRoughnessFactor(v)],
    ['occlusion strength', () => material.getOcclusionStrength(), (v) => material.setOcclusionStrength(v)],
  ]
  for (const [label, get, set] of scalars) {
    const value = get()
    if (value === clamp01(value)) continue
    set(clamp01(value))
    notes.push(`${name}: ${label} ${round(value)} clamped to 0..1`)
  }
  if (material.getAlphaCutoff() < 0) {
    notes.push(`${name}: alpha cutoff ${round(material.getAlphaCutoff())} set to 0`)
    material.setAlphaCutoff(0)
  }
  return notes
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000
}

/**
 * Points every texture the material reads, its extensions' slots included (a clearcoat map on
 * TEXCOORD_1), at the new number of its set: `sets[i]` is now set i. KHR_texture_transform's
 * texCoord, where it overrides the texture info's, is the one renumbered.
 */
function renumberTextureReads(material: Material, sets: number[]): void {
  for (const info of listTextureInfoByMaterial(material)) {
    const index = sets.indexOf(texCoordOf(info))
    if (index >= 0) setTexCoordOf(info, index)
  }
}

/**
 * glTF requires TEXCOORD_n and COLOR_n sets numbered from 0 without gaps (readers such as assimp
 * refuse a lone TEXCOORD_1); renumber them, in the primitive and its morph targets, and the texture
 * reads of the primitive's material with them. A material drawn by primitives whose sets move
 * differently (or by some whose sets do not move) gets a copy per way, so each still reads its own UVs.
 */
export function renumberAttributeSets(doc: Document): void {
  // Per material, its primitives grouped by how their UV sets moved ('' where they did not).
  const moves = new Map<Material, Map<string, { sets: number[]; prims: Primitive[] }>>()
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      renumberSets(prim, 'COLOR_')
      const sets = renumberSets(prim, 'TEXCOORD_')
      const material = prim.getMaterial()
      if (!material) continue
      const key = sets?.join(',') ?? ''
      const groups = moves.get(material) ?? moves.set(material, new Map()).get(material)!
      const group = groups.get(key) ?? groups.set(key, { sets: sets ?? [], prims: [] }).get(key)!
      group.prims.push(prim)
    }
  }
  for (const [material, groups] of moves) {
    const moved = [...groups].filter(([key]) => key !== '')
    for (const [i, [, { sets, prims }]] of moved.entries()) {
      // The material itself where all its primitives moved their sets one way; a copy otherwise.
      const reads = i === 0 && !groups.has('') ? material : ownCopy(material)
      renumberTextureReads(reads, sets)
      for (const prim of prims) prim.setMaterial(reads)
    }
  }
}

/** Renumbers a primitive's `prefix` sets from 0, in it and its morph targets; answers the old numbers in their new order, or undefined where none moved. */
function renumberSets(prim: Primitive, prefix: 'TEXCOORD_' | 'COLOR_'): number[] | undefined {
  const sets = prim
    .listSemantics()
    .filter((s) => s.startsWith(prefix))
    .map((s) => Number(s.slice(prefix.length)))
    .sort((a, b) => a - b)
  if (sets.every((set, i) => set === i)) return undefined
  for (const holder of [prim, ...prim.listTargets()]) {
    const accessors = sets.map((set) => holder.getAttribute(`${prefix}${set}`))
    for (const set of sets) holder.setAttribute(`${prefix}${set}`, null)
    accessors.forEach((accessor, i) => {
      if (accessor) holder.setAttribute(`${prefix}${i}`, accessor)
    })
  }
  return sets
}
