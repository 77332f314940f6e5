import type { Document, Material, Mesh, Node, Primitive } from '@gltf-transform/core'
import { type Entry, type Gltf1Data, type Gltf1Values, readGltf1Accessor } from './gltf1-json.ts'

/**
 * 1.0 meshes made from the file's own accessors, for what assimp's importer drops from them: joints
 * and weights (gltf1-skins.ts) and vertex colours (gltf1-colors.ts). The mesh assimp made cannot be
 * added to: its vertices no longer line up with the file's.
 */

/** The parts of a glTF 1.0 JSON meshes are built from. */
export interface Gltf1Meshes extends Gltf1Data {
  meshes?: Record<string, Entry>
}

/** A 1.0 primitive made as a 2.0 one, with the semantics it had that 2.0 has no place for. */
interface BuiltPrimitive {
  primitive: Primitive
  dropped: string[]
}

/**
 * A node's 1.0 meshes as one 2.0 mesh, a primitive per 1.0 primitive, each with its material (the
 * document's, by 1.0 id); skinned where `joints` (the skin's joint count) is given. Semantics 2.0
 * has no place for are added to `dropped`. A text saying why, where it cannot be made.
 */
export function buildGltf1Mesh(
  doc: Document,
  json: Gltf1Meshes,
  meshIds: unknown,
  materials: Map<string, Material>,
  buffers: Map<string, Uint8Array>,
  dropped: Set<string>,
  joints?: number,
): Mesh | string {
  const ids = Array.isArray(meshIds) ? meshIds.filter((id): id is string => typeof id === 'string') : []
  const built: Primitive[] = []
  for (const id of ids) {
    const primitives = json.meshes?.[id]?.primitives
    for (const source of Array.isArray(primitives) ? (primitives as Entry[]) : []) {
      const made = gltf1Primitive(doc, json, source, buffers, joints)
      if (typeof made === 'string') {
        for (const primitive of built) disposePrimitive(primitive)
        return `a primitive of mesh "${id}" ${made}`
      }
      made.primitive.setMaterial(materials.get(String(source.material)) ?? null)
      for (const semantic of made.dropped) dropped.add(semantic)
      built.push(made.primitive)
    }
  }
  if (built.length === 0) return 'the node draws no mesh'
  const name = json.meshes?.[ids[0] ?? '']?.name
  const mesh = doc.createMesh(typeof name === 'string' ? name : ids.join(' '))
  for (const primitive of built) mesh.addPrimitive(primitive)
  return mesh
}

const FLOAT = 5126
const TRIANGLES = 4

/** 1.0 semantics (with or without a set index: TEXCOORD, TEXCOORD_1) and their 2.0 names and float element types. */
const FLOAT_SEMANTICS: Record<string, { name: string; types: string[] }> = {
  POSITION: { name: 'POSITION', types: ['VEC3'] },
  NORMAL: { name: 'NORMAL', types: ['VEC3'] },
  TEXCOORD: { name: 'TEXCOORD', types: ['VEC2'] },
  COLOR: { name: 'COLOR', types: ['VEC3', 'VEC4'] },
}

/** Joints or weights per set: 2.0 takes four per JOINTS_n/WEIGHTS_n; 1.0's set is one attribute of up to four. */
const INFLUENCE_TYPES: Record<string, number> = { SCALAR: 1, VEC2: 2, VEC3: 3, VEC4: 4 }

/** A primitive made for a mesh that could not be made, with its accessors. */
function disposePrimitive(primitive: Primitive): void {
  for (const accessor of [...primitive.listAttributes(), primitive.getIndices()]) accessor?.dispose()
  primitive.dispose()
}

/**
 * One 1.0 primitive as a 2.0 primitive, from the file's accessors: POSITION, NORMAL, TEXCOORD_n and
 * COLOR_n as they are; where skinned (`joints` given), JOINT_n and WEIGHT_n as JOINTS_n and
 * WEIGHTS_n (unsigned joint indices, four per set, the weights of each vertex scaled to sum to 1 as
 * 2.0 requires), else left out as an unskinned 1.0 node draws them. A text saying why, where the
 * primitive cannot be made.
 */
function gltf1Primitive(
  doc: Document,
  json: Gltf1Data,
  source: Entry,
  buffers: Map<string, Uint8Array>,
  joints: number | undefined,
): BuiltPrimitive | string {
  const mode = source.mode ?? TRIANGLES
  if (mode !== TRIANGLES) return `is not a triangle list (mode ${String(mode)})`
  // Everything is read and checked before anything is made, so that a refusal leaves nothing behind.
  const read = readAttributes(json, source, buffers)
  if (typeof read === 'string') return read
  const count = read.floats.get('POSITION')?.values.length
  if (count === undefined) return 'has no float POSITION'
  const vertices = count / 3
  if ([...read.floats.values()].some((values) => values.count !== vertices)) return 'has attributes of unequal counts'
  const sets = [...read.influences.keys()].sort((a, b) => a - b)
  if (joints !== undefined && sets.length === 0) return 'has no JOINT and WEIGHT attributes'
  const skinning =
    joints === undefined
      ? []
      : influenceSets(
          sets.map((set) => read.influences.get(set)!),
          vertices,
          joints,
        )
  if (typeof skinning === 'string') return skinning
  const indices = source.indices === undefined ? undefined : readGltf1Accessor(json, source.indices, buffers)
  if (source.indices !== undefined && (indices?.type !== 'SCALAR' || indices.values.some((i) => !(i < vertices)))) {
    return 'has indices past its vertices'
  }
  const buffer = doc.getRoot().listBuffers()[0] ?? doc.createBuffer()
  const accessor = (type: 'SCALAR' | 'VEC2' | 'VEC3' | 'VEC4', array: Float32Array | Uint16Array | Uint32Array) =>
    doc.createAccessor().setType(type).setArray(array).setBuffer(buffer)
  const primitive = doc.createPrimitive()
  for (const [name, values] of read.floats) primitive.setAttribute(name, accessor(values.type as 'VEC3', new Float32Array(values.values)))
  skinning.forEach((set, index) => {
    primitive.setAttribute(`JOINTS_${index}`, accessor('VEC4', set.joints))
    primitive.setAttribute(`WEIGHTS_${index}`, accessor('VEC4', set.weights))
  })
  if (indices)
    primitive.setIndices(accessor('SCALAR', vertices > 65535 ? new Uint32Array(indices.values) : new Uint16Array(indices.values)))
  return { primitive, dropped: read.dropped }
}

/** A 1.0 primitive's attributes: the float ones under their 2.0 names, the joint and weight sets, and the semantics 2.0 has no place for. */
function readAttributes(
  json: Gltf1Data,
  source: Entry,
  buffers: Map<string, Uint8Array>,
): { floats: Map<string, Gltf1Values>; influences: Map<number, Influences>; dropped: string[] } | string {
  const floats = new Map<string, Gltf1Values>()
  const influences = new Map<number, Influences>()
  const dropped: string[] = []
  for (const [semantic, id] of Object.entries((source.attributes ?? {}) as Record<string, unknown>)) {
    const [base = '', set = '0'] = semantic.split(/_(?=\d+$)/)
    const values = readGltf1Accessor(json, id, buffers)
    if (!values) return `has an attribute ${semantic} that reads no values`
    if (base === 'JOINT' || base === 'WEIGHT') {
      influences.set(Number(set), { ...influences.get(Number(set)), [base === 'JOINT' ? 'joints' : 'weights']: values })
      continue
    }
    const known = FLOAT_SEMANTICS[base]
    if (!known || values.componentType !== FLOAT || !known.types.includes(values.type)) dropped.push(semantic)
    else floats.set(base === 'TEXCOORD' || base === 'COLOR' ? `${known.name}_${set}` : known.name, values)
  }
  return { floats, influences, dropped }
}

/** One 1.0 set of joints and weights (JOINT_n and WEIGHT_n). */
interface Influences {
  joints?: Gltf1Values
  weights?: Gltf1Values
}

/**
 * Each vertex's joints and weights as 2.0 sets of four: a joint past the skin's is refused; a joint
 * given twice gets its weights added in its first place (2.0 forbids duplicates), a zero weight's
 * joint is 0, and the weights are scaled to sum to 1 across the sets.
 */
function influenceSets(sets: Influences[], count: number, skinJoints: number): { joints: Uint16Array; weights: Float32Array }[] | string {
  for (const { joints, weights } of sets) {
    if (!joints || !weights) return 'has a JOINT attribute without its WEIGHT, or the other way round'
    for (const values of [joints, weights]) {
      if (!INFLUENCE_TYPES[values.type] || values.count !== count) return 'has joints or weights that are not up to four per vertex'
    }
  }
  const out = sets.map(() => ({ joints: new Uint16Array(count * 4), weights: new Float32Array(count * 4) }))
  for (let v = 0; v < count; v++) {
    const byJoint = new Map<number, number>()
    for (const { joints, weights } of sets) {
      const n = INFLUENCE_TYPES[joints!.type]!
      const m = INFLUENCE_TYPES[weights!.type]!
      for (let k = 0; k < n; k++) {
        const joint = Math.round(joints!.values[v * n + k]!)
        const weight = k < m ? weights!.values[v * m + k]! : 0
        if (!(weight > 0)) continue
        if (!(joint >= 0 && joint < skinJoints)) return `names joint ${joint}, past the skin's ${skinJoints}`
        byJoint.set(joint, (byJoint.get(joint) ?? 0) + weight)
      }
    }
    const total = [...byJoint.values()].reduce((sum, weight) => sum + weight, 0)
    // A vertex no joint moves: a 1.0 shader drew it at the origin; 2.0 needs a weight, and the first joint takes it.
    const influences = total > 0 ? [...byJoint] : [[0, 1] as [number, number]]
    influences.forEach(([joint, weight], slot) => {
      const target = out[Math.floor(slot / 4)]
      if (!target) return
      target.joints[v * 4 + (slot % 4)] = joint
      target.weights[v * 4 + (slot % 4)] = total > 0 ? weight / total : weight
    })
  }
  return out
}

/** Puts `mesh`, made again from the file, on `node`; assimp's mesh goes where no other node draws it. */
export function replaceNodeMesh(node: Node, mesh: Mesh): void {
  const old = node.getMesh()
  node.setMesh(mesh)
  if (old && !old.listParents().some((parent) => parent.propertyType === 'Node')) old.dispose()
}
