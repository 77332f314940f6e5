import type { Document, Primitive } from '@gltf-transform/core'
import { type Entry, type Gltf1Data, type Gltf1Values, readGltf1Accessor } from './gltf1-json.ts'

/** A skinned 1.0 primitive made as a 2.0 one, with the semantics it had that 2.0 has no place for. */
export interface SkinnedPrimitive {
  primitive: Primitive
  dropped: string[]
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

/**
 * One skinned 1.0 primitive as a 2.0 primitive, from the file's accessors: POSITION, NORMAL,
 * TEXCOORD_n and COLOR_n as they are, JOINT_n and WEIGHT_n as JOINTS_n and WEIGHTS_n (unsigned
 * joint indices, four per set, the weights of each vertex scaled to sum to 1 as 2.0 requires). A
 * text saying why, where the primitive cannot be skinned in 2.0.
 */
export function skinnedPrimitive(
  doc: Document,
  json: Gltf1Data,
  source: Entry,
  joints: number,
  buffers: Map<string, Uint8Array>,
): SkinnedPrimitive | string {
  const mode = source.mode ?? TRIANGLES
  if (mode !== TRIANGLES) return `is not a triangle list (mode ${String(mode)})`
  const attributes = (source.attributes ?? {}) as Record<string, unknown>
  const buffer = doc.getRoot().listBuffers()[0] ?? doc.createBuffer()
  const primitive = doc.createPrimitive()
  const dropped: string[] = []
  const influences = new Map<number, { joints?: Gltf1Values; weights?: Gltf1Values }>()
  for (const [semantic, id] of Object.entries(attributes)) {
    const [base = '', set = '0'] = semantic.split(/_(?=\d+$)/)
    const values = readGltf1Accessor(json, id, buffers)
    if (!values) return `has an attribute ${semantic} that reads no values`
    if (base === 'JOINT' || base === 'WEIGHT') {
      const entry = influences.get(Number(set)) ?? {}
      influences.set(Number(set), { ...entry, [base === 'JOINT' ? 'joints' : 'weights']: values })
      continue
    }
    const known = FLOAT_SEMANTICS[base]
    if (!known || values.componentType !== FLOAT || !known.types.includes(values.type)) {
      dropped.push(semantic)
      continue
    }
    const name = base === 'TEXCOORD' || base === 'COLOR' ? `${known.name}_${set}` : known.name
    primitive.setAttribute(
      name,
      doc
        .createAccessor()
        .setType(values.type as 'VEC3')
        .setArray(new Float32Array(values.values))
        .setBuffer(buffer),
    )
  }
  const count = primitive.getAttribute('POSITION')?.getCount()
  if (count === undefined) return 'has no float POSITION'
  const sets = [...influences.keys()].sort((a, b) => a - b)
  if (sets.length === 0) return 'has no JOINT and WEIGHT attributes'
  const made = influenceSets(
    sets.map((set) => influences.get(set)!),
    count,
    joints,
  )
  if (typeof made === 'string') return made
  made.forEach(({ joints: j, weights: w }, index) => {
    primitive.setAttribute(`JOINTS_${index}`, doc.createAccessor().setType('VEC4').setArray(j).setBuffer(buffer))
    primitive.setAttribute(`WEIGHTS_${index}`, doc.createAccessor().setType('VEC4').setArray(w).setBuffer(buffer))
  })
  if (source.indices !== undefined) {
    const indices = readGltf1Accessor(json, source.indices, buffers)
    if (indices?.type !== 'SCALAR' || indices.values.some((i) => !(i < count))) return 'has indices past its vertices'
    const array = count > 65535 ? new Uint32Array(indices.values) : new Uint16Array(indices.values)
    primitive.setIndices(doc.createAccessor().setType('SCALAR').setArray(array).setBuffer(buffer))
  }
  return { primitive, dropped }
}

/**
 * Each vertex's joints and weights as 2.0 sets of four: a joint past the skin's is refused; a joint
 * given twice gets its weights added in its first place (2.0 forbids duplicates), a zero weight's
 * joint is 0, and the weights are scaled to sum to 1 across the sets.
 */
function influenceSets(
  sets: { joints?: Gltf1Values; weights?: Gltf1Values }[],
  count: number,
  skinJoints: number,
): { joints: Uint16Array; weights: Float32Array }[] | string {
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
