import type { Document, Material, Node, Skin } from '@gltf-transform/core'
import { type Entry, entries, readGltf1Accessor } from './gltf1-json.ts'
import { OUTSIDE_SCENE } from './gltf1-nodes.ts'
import { buildGltf1Mesh, type Gltf1Meshes, replaceNodeMesh } from './gltf1-primitive.ts'

/**
 * glTF 1.0 skins, which assimp's importer leaves out (it reads no JOINT or WEIGHT attribute), made
 * again as glTF 2.0 skins. In 1.0 a node instances a skin with `skin`, its meshes with `meshes` and
 * names in `skeletons` the roots of the subtrees where the skin's `jointNames` are found (as the
 * nodes' `jointName`); the joint matrix a 1.0 shader applies is
 * inverse(node) · joint · inverseBindMatrix · bindShapeMatrix, and 2.0's is joint · inverseBindMatrix
 * with the node's own transform ignored, which is the same where the 2.0 inverse bind matrix is the
 * 1.0 one times the bind shape matrix (so the vertices stay as the file gives them).
 *
 * The skinned node's mesh is built again from the file's accessors (gltf1-primitive.ts): the
 * mesh assimp made has no joints or weights, and its vertices no longer line up with the file's.
 */

/** The parts of a glTF 1.0 JSON the skins are read from. */
export interface Gltf1Skins extends Gltf1Meshes {
  nodes?: Record<string, Entry>
  skins?: Record<string, Entry>
}

/**
 * Puts each skinned node's skin and skinned mesh on its node. `nodes` and `materials` are the
 * document's, by 1.0 id. Returns a note for each skin instance it could not make, and why.
 */
export function restoreGltf1Skins(
  doc: Document,
  json: Gltf1Skins,
  nodes: Map<string, Node>,
  materials: Map<string, Material>,
  buffers: Map<string, Uint8Array>,
): string[] {
  const notes: string[] = []
  const made = new Map<string, Skin | string>()
  const used = new Set<string>()
  const dropped = new Set<string>()
  for (const [id, source] of entries(json.nodes)) {
    const skinId = source.skin
    if (typeof skinId !== 'string') continue
    used.add(skinId)
    const node = nodes.get(id)
    if (!node) {
      notes.push(`skin "${skinId}" of node "${id}" not carried: ${OUTSIDE_SCENE}`)
      continue
    }
    const key = JSON.stringify([skinId, source.skeletons])
    if (!made.has(key)) made.set(key, makeSkin(doc, json, skinId, source.skeletons, nodes, buffers))
    const skin = made.get(key)!
    const mesh =
      typeof skin === 'string' ? skin : buildGltf1Mesh(doc, json, source.meshes, materials, buffers, dropped, skin.listJoints().length)
    if (typeof skin === 'string' || typeof mesh === 'string') {
      notes.push(`skin "${skinId}" of node "${id}" not carried (its mesh is drawn unskinned): ${typeof skin === 'string' ? skin : mesh}`)
      continue
    }
    replaceNodeMesh(node, mesh)
    node.setSkin(skin)
  }
  // A skin made for nodes whose meshes could not be skinned: nothing draws with it.
  for (const skin of made.values()) {
    if (typeof skin === 'string' || skin.listParents().some((parent) => parent.propertyType === 'Node')) continue
    skin.getInverseBindMatrices()?.dispose()
    skin.dispose()
  }
  if (dropped.size > 0) {
    notes.push(`attribute(s) ${[...dropped].join(', ')} of skinned meshes not carried: glTF 2.0 has no such vertex attribute`)
  }
  const unused = entries(json.skins).filter(([id]) => !used.has(id))
  if (unused.length > 0) {
    notes.push(`${unused.length} skin(s) no node uses not carried (${unused.map(([id]) => `"${id}"`).join(', ')})`)
  }
  return notes
}

/**
 * The 2.0 skin of a 1.0 skin on `skeletons`: its joints in `jointNames` order (which JOINT
 * attributes index), the inverse bind matrices times the bind shape matrix, the skeleton root
 * where there is one. A text saying why, where it cannot be made.
 */
function makeSkin(
  doc: Document,
  json: Gltf1Skins,
  skinId: string,
  skeletons: unknown,
  nodes: Map<string, Node>,
  buffers: Map<string, Uint8Array>,
): Skin | string {
  const source = json.skins?.[skinId]
  if (!source) return 'the file has no such skin'
  const names = source.jointNames
  if (!Array.isArray(names) || names.length === 0 || !names.every((name) => typeof name === 'string')) return 'it names no joints'
  const roots = Array.isArray(skeletons) ? skeletons.filter((root): root is string => typeof root === 'string') : []
  const joints = jointNodes(json, roots.length > 0 ? roots : Object.keys(json.nodes ?? {}))
  const found: Node[] = []
  for (const name of names as string[]) {
    const id = joints.get(name)
    const node = id === undefined ? undefined : nodes.get(id)
    if (!node) return id === undefined ? `joint "${name}" is no node of its skeletons` : `joint "${name}": ${OUTSIDE_SCENE}`
    found.push(node)
  }
  const inverse = source.inverseBindMatrices === undefined ? undefined : readGltf1Accessor(json, source.inverseBindMatrices, buffers)
  if (
    source.inverseBindMatrices !== undefined &&
    !(inverse?.type === 'MAT4' && inverse.componentType === 5126 && inverse.count >= names.length)
  ) {
    return 'its inverse bind matrices are not one float 4×4 matrix per joint'
  }
  const shape = isMatrix(source.bindShapeMatrix) ? (source.bindShapeMatrix as number[]) : IDENTITY
  const matrices = new Float32Array(names.length * 16)
  for (let j = 0; j < names.length; j++) {
    matrices.set(multiply(inverse ? inverse.values.slice(j * 16, j * 16 + 16) : IDENTITY, shape), j * 16)
  }
  const buffer = doc.getRoot().listBuffers()[0] ?? doc.createBuffer()
  const skin = doc
    .createSkin(typeof source.name === 'string' ? source.name : skinId)
    .setInverseBindMatrices(doc.createAccessor().setType('MAT4').setArray(matrices).setBuffer(buffer))
  for (const joint of found) skin.addJoint(joint)
  const [root] = roots
  const skeleton = roots.length === 1 && root !== undefined ? nodes.get(root) : undefined
  if (skeleton) skin.setSkeleton(skeleton)
  return skin
}

/** Each `jointName` found in the subtrees of `roots`, and the id of its node (the first found). */
function jointNodes(json: Gltf1Skins, roots: string[]): Map<string, string> {
  const joints = new Map<string, string>()
  const seen = new Set<string>()
  const visit = (id: string) => {
    const node = json.nodes?.[id]
    if (!node || seen.has(id)) return
    seen.add(id)
    if (typeof node.jointName === 'string' && !joints.has(node.jointName)) joints.set(node.jointName, id)
    if (Array.isArray(node.children)) for (const child of node.children) if (typeof child === 'string') visit(child)
  }
  for (const root of roots) visit(root)
  return joints
}

const IDENTITY = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]

function isMatrix(value: unknown): boolean {
  return Array.isArray(value) && value.length === 16 && value.every((n) => typeof n === 'number' && Number.isFinite(n))
}

/** a · b, both column-major 4×4 as glTF stores them. */
function multiply(a: number[], b: number[]): number[] {
  const out = new Array<number>(16)
  for (let column = 0; column < 4; column++) {
    for (let row = 0; row < 4; row++) {
      let sum = 0
      for (let k = 0; k < 4; k++) sum += a[k * 4 + row]! * b[column * 4 + k]!
      out[column * 4 + row] = sum
    }
  }
  return out
}
