import { type Accessor, type Document, type Material, Primitive, type TextureInfo } from '@gltf-transform/core'
import type { Anisotropy, Clearcoat, Transform as UvTransform } from '@gltf-transform/extensions'
import { bakeTransform } from '../io/export-maps.ts'
import { accessorSetKey } from './weld-bitwise.ts'
import { texCoordOf } from '../io/texture-slots.ts'

type GenerateTangents = (position: Float32Array, normal: Float32Array, texcoord: Float32Array) => Float32Array

/**
 * What needs a tangent space the material cannot give: a clearcoat normal map or anisotropy, on a
 * material without a normal map. With a normal map a renderer derives tangents from it (a warning
 * in glTF-Validator); without one it has none (MESH_PRIMITIVE_NO_TANGENT_SPACE, an error).
 */
function tangentSpaceNeed(material: Material | null): { label: string; uvs: TextureInfo | null } | null {
  if (!material || material.getNormalTexture()) return null
  const clearcoat = material.getExtension<Clearcoat>('KHR_materials_clearcoat')
  if (clearcoat?.getClearcoatNormalTexture()) {
    return { label: 'its clearcoat normal map', uvs: clearcoat.getClearcoatNormalTextureInfo() }
  }
  const anisotropy = material.getExtension<Anisotropy>('KHR_materials_anisotropy')
  if (anisotropy) return { label: 'its anisotropy', uvs: anisotropy.getAnisotropyTexture() ? anisotropy.getAnisotropyTextureInfo() : null }
  return null
}

/**
 * Gives MikkTSpace tangents (the tangent space glTF names) to the triangle primitives whose
 * material needs a tangent space and has no normal map to derive one from: glTF-Validator refuses
 * them (ClearCoatTest's sphere with only a clearcoat normal map), and renderers would each make up
 * their own. The tangents follow the UV set the texture reads, as its KHR_texture_transform moves
 * it. A vertex whose corners get different tangents (a UV seam) is split, and only there. The
 * `mikktspace` WASM module is loaded the first time a file needs it (`generator` stands in for it,
 * to show what a failing one leaves). Returns a note, or none.
 *
 * ```ts
 * notes.push(...(await addMissingTangents(doc)))
 * // ['TANGENT generated (MikkTSpace) for 1 primitive (…): …clearcoat normal map needs a tangent space…']
 * ```
 */
export async function addMissingTangents(doc: Document, generator?: GenerateTangents): Promise<string[]> {
  const wanted: { prim: Primitive; uvs: string; transform: UvTransform | null; label: string }[] = []
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      if (prim.getMode() !== Primitive.Mode.TRIANGLES || prim.getAttribute('TANGENT')) continue
      const need = tangentSpaceNeed(prim.getMaterial())
      const uvs = `TEXCOORD_${need?.uvs ? texCoordOf(need.uvs) : 0}`
      if (!need || !prim.getAttribute('POSITION') || !prim.getAttribute('NORMAL') || !prim.getAttribute(uvs)) continue
      wanted.push({ prim, uvs, transform: need.uvs?.getExtension<UvTransform>('KHR_texture_transform') ?? null, label: need.label })
    }
  }
  if (wanted.length === 0) return []
  const generateTangents = generator ?? ((await import('mikktspace')) as { generateTangents: GenerateTangents }).generateTangents
  let vertices = 0
  let done = 0
  const failed: string[] = []
  for (const { prim, uvs, transform } of wanted) {
    // Given with the streams it shares with a primitive before it (generating again would unshare them).
    if (prim.getAttribute('TANGENT')) {
      done++
      continue
    }
    const generated = addTangents(doc, prim, uvs, transform, generateTangents)
    if (typeof generated === 'number') {
      vertices += generated
      done++
    } else failed.push(generated.failed)
  }
  const labels = [...new Set(wanted.map((w) => w.label))].join(' or ')
  const count = (n: number) => (n === 1 ? '1 primitive' : `${n} primitives`)
  return [
    ...(done > 0
      ? [
          `TANGENT generated (MikkTSpace) for ${count(done)} (${vertices} vertices): ${labels} needs a tangent space, and with no normal map a renderer has none to derive`,
        ]
      : []),
    // The file is still written: without tangents, as it came.
    ...(failed.length > 0
      ? [`TANGENT not generated for ${count(failed.length)}: MikkTSpace could not take their geometry (${failed[0]})`]
      : []),
  ]
}

/**
 * Adds TANGENT to one primitive, splitting the vertices whose corners disagree; returns its vertex
 * count, or why MikkTSpace failed (its WASM build traps on what it cannot take).
 */
function addTangents(
  doc: Document,
  prim: Primitive,
  uvs: string,
  transform: UvTransform | null,
  generate: GenerateTangents,
): number | { failed: string } {
  const count = prim.getAttribute('POSITION')!.getCount()
  const indices = prim.getIndices()?.getArray() ?? Uint32Array.from({ length: count }, (_, i) => i)
  const corners = indices.length - (indices.length % 3)
  const position = cornerValues(prim.getAttribute('POSITION')!, indices, corners, 3)
  const normal = cornerValues(prim.getAttribute('NORMAL')!, indices, corners, 3)
  const texcoord = cornerValues(prim.getAttribute(uvs)!, indices, corners, 2)
  if (transform) bakeTransform(texcoord, 0, corners, transform)
  // Without a whole triangle there is nothing to measure: every vertex gets the default tangent below.
  let tangents: Float32Array
  try {
    tangents = corners > 0 ? generate(position, normal, texcoord) : new Float32Array(0)
  } catch (error) {
    return { failed: error instanceof Error && error.message ? error.message : String(error) }
  }
  // mikktspace-wasm's handedness is the opposite of glTF's (glTF-Transform's tangents() flips it too).
  for (let i = 3; i < tangents.length; i += 4) tangents[i] = -tangents[i]!

  const { source, index, tangent } = vertexPerTangent(indices, count, corners, tangents)
  const buffer = prim.getAttribute('POSITION')!.getBuffer()
  const tangentAccessor = doc.createAccessor().setType('VEC4').setArray(tangent).setBuffer(buffer)
  // Where no vertex splits, the primitive keeps its accessors, and the primitives drawing the very
  // same ones (ClearCoatTest's spheres, one per material) get the same tangents: the encoders keep
  // a shared set of streams shared, and one primitive with a stream more would get a copy of them all.
  if (source.length === count) {
    for (const same of drawingTheSame(prim)) same.setAttribute('TANGENT', tangentAccessor)
    return count
  }
  rebuildWithVertices(doc, prim, source, index)
  prim.setAttribute('TANGENT', tangentAccessor)
  return source.length
}

/**
 * The vertices a primitive needs once each corner has its tangent: a vertex keeps its number and
 * the tangent of its first corner; a corner whose tangent differs (a UV seam the vertex straddles)
 * gets a new vertex per tangent, numbered after the others. `source` is each vertex's input vertex,
 * `index` each corner's vertex, `tangent` each vertex's tangent.
 */
function vertexPerTangent(
  indices: ArrayLike<number>,
  count: number,
  corners: number,
  tangents: Float32Array,
): { source: number[]; index: Uint32Array; tangent: Float32Array } {
  const firstCorner = new Int32Array(count).fill(-1)
  const source = Array.from({ length: count }, (_, v) => v)
  const extraCorner: number[] = []
  const extraOf = new Map<string, number>()
  const index = new Uint32Array(corners)
  const same = (a: number, b: number) => [0, 1, 2, 3].every((k) => tangents[a * 4 + k] === tangents[b * 4 + k])
  for (let c = 0; c < corners; c++) {
    const v = indices[c]!
    index[c] = v
    if (firstCorner[v]! < 0) firstCorner[v] = c
    else if (!same(firstCorner[v]!, c)) {
      const key = `${v}|${tangents.subarray(c * 4, c * 4 + 4).join(',')}`
      let extra = extraOf.get(key)
      if (extra === undefined) {
        extra = source.length
        extraOf.set(key, extra)
        source.push(v)
        extraCorner.push(c)
      }
      index[c] = extra
    }
  }
  const tangent = new Float32Array(source.length * 4)
  for (let v = 0; v < source.length; v++) {
    const c = v < count ? firstCorner[v]! : extraCorner[v - count]!
    // A vertex no triangle uses draws nothing: any unit tangent is valid for it.
    tangent.set(c < 0 ? [1, 0, 0, 1] : tangents.subarray(c * 4, c * 4 + 4), v * 4)
  }
  return { source, index, tangent }
}

/** Gives a primitive (and its morph targets) the vertices `source` names and the corners `index` draws; what nothing else reads goes. */
function rebuildWithVertices(doc: Document, prim: Primitive, source: number[], index: Uint32Array): void {
  const replaced = new Set<Accessor>()
  for (const holder of [prim, ...prim.listTargets()]) {
    for (const semantic of holder.listSemantics()) {
      replaced.add(holder.getAttribute(semantic)!)
      holder.setAttribute(semantic, picked(doc, holder.getAttribute(semantic)!, source))
    }
  }
  const oldIndices = prim.getIndices()
  if (oldIndices) replaced.add(oldIndices)
  const narrow = source.length <= 0xffff ? Uint16Array.from(index) : index
  prim.setIndices(doc.createAccessor().setType('SCALAR').setArray(narrow).setBuffer(prim.getAttribute('POSITION')!.getBuffer()))
  // The root is every accessor's parent: one with no other is read by nothing.
  for (const accessor of replaced) if (accessor.listParents().length <= 1) accessor.dispose()
}

/** The primitives drawing exactly the indices and attributes `prim` draws, `prim` included (the weld's own test of it). */
function drawingTheSame(prim: Primitive): Primitive[] {
  const key = accessorSetKey()
  const own = key(prim)
  return prim
    .getAttribute('POSITION')!
    .listParents()
    .filter((other): other is Primitive => other instanceof Primitive && key(other) === own)
}

/** An attribute's values at each corner, as floats (normalized integers read as their fractions). */
function cornerValues(accessor: Accessor, indices: ArrayLike<number>, corners: number, size: number): Float32Array {
  const out = new Float32Array(corners * size)
  const element: number[] = []
  for (let c = 0; c < corners; c++) {
    accessor.getElement(indices[c]!, element)
    for (let k = 0; k < size; k++) out[c * size + k] = element[k]!
  }
  return out
}

/** A copy of an accessor holding the elements at `source`, in that order. */
function picked(doc: Document, accessor: Accessor, source: number[]): Accessor {
  const size = accessor.getElementSize()
  const from = accessor.getArray()!
  const to = new (from.constructor as new (length: number) => typeof from)(source.length * size)
  for (const [v, s] of source.entries()) for (let k = 0; k < size; k++) to[v * size + k] = from[s * size + k]!
  return doc
    .createAccessor()
    .setType(accessor.getType())
    .setArray(to)
    .setNormalized(accessor.getNormalized())
    .setBuffer(accessor.getBuffer())
}
