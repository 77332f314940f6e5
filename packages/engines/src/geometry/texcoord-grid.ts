import { Accessor, type Material, Primitive, PrimitiveTarget, TextureInfo, type Document, type Property } from '@gltf-transform/core'
import { KHRTextureTransform, type Transform as UvTransform } from '@gltf-transform/extensions'
import { shortestFloat32 } from './float32.ts'
import { findAxisSteps } from './lattice.ts'

/**
 * Texture coordinates of a textured material go on one grid per material, spanning the coordinates
 * its primitives use (repeating textures outside [0, 1] included), stored as plain integers; a
 * `KHR_texture_transform` on each of the material's textures maps them back, composed with the
 * transform the texture already had. gltfpack's layout: meshopt codes consecutive integers far
 * better than quantize()'s 12 bits spread over 16. An axis whose coordinates lie on a coarser
 * lattice (lattice.ts) takes the lattice's step as its grid's: those coordinates are kept exactly.
 *
 * A material keeps float coordinates (left to quantizeOtherTexcoords) when its grid cannot be
 * expressed: a coordinate accessor shared with another material, morphed coordinates, a rotated
 * transform, or a transform naming its own UV set.
 */
export function quantizeTexcoordsPerMaterial(doc: Document, bits: number): void {
  const steps = 2 ** bits - 1
  for (const [material, prims] of primitivesByMaterial(doc)) {
    const infos = textureInfos(doc, material)
    const accessors = gridAccessors(material, prims, infos)
    const bounds = accessors && uvBounds(accessors)
    if (!bounds) continue
    const { min, range } = bounds
    // Coordinates on a coarser lattice (texel centres of a palette, a box's corners) take it as their grid: kept exactly.
    const lattice = findAxisSteps(
      accessors.map((a) => a.getArray() as Float32Array),
      2,
      steps,
    )
    const unit = [0, 1].map((k) => lattice[k] ?? range[k]! / steps)
    for (const a of accessors) {
      const src = a.getArray() as Float32Array
      const dst = new Uint16Array(src.length)
      for (let i = 0; i < src.length; i++) dst[i] = Math.round((src[i]! - min[i % 2]!) / unit[i % 2]!)
      a.setArray(dst).setNormalized(false).setSparse(false)
    }
    const ext = doc.createExtension(KHRTextureTransform).setRequired(true)
    for (const info of infos) {
      const existing = info.getExtension<UvTransform>('KHR_texture_transform')
      const [sx, sy] = existing?.getScale() ?? [1, 1]
      const [ox, oy] = existing?.getOffset() ?? [0, 0]
      // Float32 precision, as readers apply it: the JSON then carries 8 digits, not 17.
      const transform = ext
        .createTransform()
        .setOffset([ox + sx * min[0]!, oy + sy * min[1]!].map(shortestFloat32) as [number, number])
        .setScale([sx * unit[0]!, sy * unit[1]!].map(shortestFloat32) as [number, number])
      info.setExtension('KHR_texture_transform', transform)
    }
  }
}

function primitivesByMaterial(doc: Document): Map<Material, Primitive[]> {
  const byMaterial = new Map<Material, Primitive[]>()
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      const material = prim.getMaterial()
      if (!material) continue
      const prims = byMaterial.get(material)
      if (prims) prims.push(prim)
      else byMaterial.set(material, [prim])
    }
  }
  return byMaterial
}

/** The float UV accessors the material's textures read, or null if its grid cannot be expressed. */
function gridAccessors(material: Material, prims: Primitive[], infos: TextureInfo[]): Accessor[] | null {
  if (infos.length === 0 || !infos.every(composable)) return null
  if (prims.some((p) => p.listTargets().some((t) => t.listSemantics().some((s) => s.startsWith('TEXCOORD_'))))) return null
  const sets = new Set(infos.map((info) => `TEXCOORD_${info.getTexCoord()}`))
  const accessors = new Set<Accessor>()
  for (const prim of prims) {
    for (const set of sets) {
      const uv = prim.getAttribute(set)
      if (uv) accessors.add(uv)
    }
  }
  const usable = (a: Accessor) => a.getType() === 'VEC2' && a.getComponentType() === Accessor.ComponentType.FLOAT && onlyUsedBy(a, material)
  return accessors.size > 0 && [...accessors].every(usable) ? [...accessors] : null
}

/** Smallest coordinate and span per axis (1 where flat), or null if one is not finite. */
function uvBounds(accessors: Accessor[]): { min: number[]; range: number[] } | null {
  const min = [Infinity, Infinity]
  const max = [-Infinity, -Infinity]
  for (const a of accessors) {
    const values = a.getArray() as Float32Array
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!
      if (!Number.isFinite(v)) return null
      min[i % 2] = Math.min(min[i % 2]!, v)
      max[i % 2] = Math.max(max[i % 2]!, v)
    }
  }
  return { min, range: [0, 1].map((k) => max[k]! - min[k]! || 1) }
}

/**
 * Coordinates no texture grid covers (no material, or a layout the grid cannot express): those in
 * [0, 1] go on a normalized grid as glTF-Transform lays it out (no transform needed); others stay floats.
 */
export function quantizeOtherTexcoords(doc: Document, bits: number): void {
  const steps = 2 ** bits - 1
  const logger = doc.getLogger()
  for (const { accessor, semantic, morphed } of floatTexcoords(doc)) {
    const values = accessor.getArray() as Float32Array
    if (morphed) {
      logger.warn(`meshopt: morph target ${semantic} kept as floats (offsets, not coordinates on a grid)`)
    } else if (values.some((v) => !(v >= 0 && v <= 1))) {
      logger.warn(`meshopt: ${semantic} kept as floats (outside [0, 1] and no texture grid covers it)`)
    } else {
      // The value's high bits repeated below it, so that 1.0 decodes as exactly 1.
      const grid = new Uint16Array(values.length)
      for (let i = 0; i < values.length; i++) grid[i] = replicate(Math.round(values[i]! * steps), bits)
      accessor.setArray(grid).setNormalized(true)
    }
  }
}

/** Each float TEXCOORD accessor of the document once, and whether it holds morph-target offsets. */
function floatTexcoords(doc: Document): { accessor: Accessor; semantic: string; morphed: boolean }[] {
  const found = new Map<Accessor, { accessor: Accessor; semantic: string; morphed: boolean }>()
  const prims = doc
    .getRoot()
    .listMeshes()
    .flatMap((mesh) => mesh.listPrimitives())
  for (const holder of prims.flatMap((prim) => [prim, ...prim.listTargets()])) {
    for (const semantic of holder.listSemantics().filter((s) => s.startsWith('TEXCOORD_'))) {
      const accessor = holder.getAttribute(semantic)!
      if (found.has(accessor) || accessor.getComponentType() !== Accessor.ComponentType.FLOAT) continue
      found.set(accessor, { accessor, semantic, morphed: holder instanceof PrimitiveTarget })
    }
  }
  return [...found.values()]
}

/** A `bits`-bit value spread over 16 bits: q·2^(16−bits) with the gap filled from q's high bits. */
function replicate(q: number, bits: number): number {
  return (q << (16 - bits)) | (q >> (2 * bits - 16))
}

/** The TextureInfos of a material (and of its extensions) that have a texture. */
function textureInfos(doc: Document, material: Property): TextureInfo[] {
  const edges = doc.getGraph().listChildEdges(material)
  const withTexture = new Set(edges.filter((e) => e.getChild().propertyType === 'Texture').map((e) => e.getName()))
  const infos: TextureInfo[] = []
  for (const edge of edges) {
    const child = edge.getChild()
    if (child instanceof TextureInfo && withTexture.has(edge.getName().replace(/Info$/, ''))) infos.push(child)
    else if (child.propertyType !== 'Texture' && !(child instanceof TextureInfo) && edge.getName() === 'extensions')
      infos.push(...textureInfos(doc, child))
  }
  return infos
}

/** A transform we can fold the grid into: none, or one without rotation and without its own UV set. */
function composable(info: TextureInfo): boolean {
  const t = info.getExtension<UvTransform>('KHR_texture_transform')
  return !t || (t.getRotation() === 0 && t.getTexCoord() === null)
}

function onlyUsedBy(accessor: Accessor, material: Material): boolean {
  return accessor
    .listParents()
    .filter((p) => p.propertyType !== 'Root')
    .every((p) => p instanceof Primitive && p.getMaterial() === material)
}
