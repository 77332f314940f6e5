import type { Accessor, Document, Material, Mesh, Node, Primitive, Texture } from '@gltf-transform/core'
import { type ExportAnimation, type ExportTrack, sampleAnimation } from './export-animation.ts'
import { bakeTransform, type MapSlot, materialTextures, transformsBySet } from './export-maps.ts'
import { createImageFiles, type ImageFile } from './image-files.ts'
import { texCoordOf } from './texture-slots.ts'

/**
 * What the FBX and COLLADA writers need from a Document, flattened once: per mesh one vertex list
 * with triangles and lines into it, the materials those use, the node tree, skins and resampled
 * node animations, and notes on what the writing itself changed (what the target format cannot
 * hold at all is noted by target-holds.ts).
 */
export interface ExportScene {
  roots: ExportNode[]
  meshes: ExportMesh[]
  materials: ExportMaterial[]
  /** Present only when the writer holds deformations (`options.deform`). */
  animations: ExportAnimation<ExportNode>[]
  /** Things dropped or changed on the way, logged by the writer. */
  notes: string[]
}

/** A node of the default scene, with its local transform. */
export interface ExportNode {
  name: string
  translation: [number, number, number]
  rotation: [number, number, number, number]
  scale: [number, number, number]
  mesh?: ExportMesh
  /** The skin deforming this node's mesh (`options.deform` only). */
  skin?: ExportSkin
  /** True when a skin uses this node as a joint. */
  joint: boolean
  children: ExportNode[]
}

/** A glTF skin: its joints, in the order the mesh's joint indices use, and their inverse bind matrices. */
export interface ExportSkin {
  index: number
  name: string
  joints: ExportNode[]
  /** Per joint 16 values, row-major (translation in the last column). */
  inverseBindMatrices: Float32Array
  /** The topmost joints: those whose parent is not a joint of this skin. */
  roots: ExportNode[]
}

/** A glTF mesh flattened to one vertex list. */
export interface ExportMesh {
  index: number
  name: string
  positions: Float32Array
  /** Present when every triangle-bearing primitive has normals. */
  normals?: Float32Array
  /** TEXCOORD_0..n, glTF convention (v down), `KHR_texture_transform` baked in; 0 where a primitive lacks a set. */
  uvSets: Float32Array[]
  /** RGBA in 0..1; present when any primitive has COLOR_0 (white where missing). */
  colors?: Float32Array
  /** JOINTS_n/WEIGHTS_n: `influences` joint indices and weights per vertex (`options.deform` only). */
  skinning?: { joints: Float32Array; weights: Float32Array; influences: number }
  /** One group of triangles (and lines) per source primitive with a material. */
  groups: ExportGroup[]
}

/** Triangles and lines of one source primitive, indexing the mesh's vertex list. */
export interface ExportGroup {
  material: ExportMaterial
  triangles: Uint32Array
  lines: Uint32Array
}

/** One texture map of a material and the UV set it reads. */
export interface ExportMap {
  image: ExportImage
  texCoord: number
}

/** What the writers keep of a material. */
export interface ExportMaterial {
  index: number
  name: string
  baseColor: [number, number, number, number]
  emissive: [number, number, number]
  maps: Partial<Record<MapSlot, ExportMap>>
  doubleSided: boolean
}

/** An image as a file beside (COLLADA) or inside (FBX) the model, named clean and unique. */
export type ExportImage = ImageFile

/** What the target format holds beyond triangles. */
export interface ExportOptions {
  lines: boolean
  /** Skins and node animations (morph targets are dropped by both writers: see docs/formats-fbx-dae.md). */
  deform: boolean
}

/** Flattens the Document's default scene for the FBX or COLLADA writer. */
export function collectExportScene(doc: Document, options: ExportOptions): ExportScene {
  const root = doc.getRoot()
  const scene = root.getDefaultScene() ?? root.listScenes()[0]
  const notes: string[] = []
  const materials = new Map<Material | null, ExportMaterial>()
  const meshes = new Map<Mesh, ExportMesh>()
  const counts = { transforms: 0 }

  const exportImage = createImageFiles()

  const exportMaterial = (material: Material | null): ExportMaterial => {
    let out = materials.get(material)
    if (!out) {
      out = toExportMaterial(material, materials.size, exportImage)
      materials.set(material, out)
    }
    return out
  }

  const exportMesh = (mesh: Mesh): ExportMesh => {
    let out = meshes.get(mesh)
    if (!out) {
      out = flattenMesh(mesh, meshes.size, exportMaterial, options, counts)
      meshes.set(mesh, out)
    }
    return out
  }

  const nodes = new Map<Node, ExportNode>()
  const exportNode = (node: Node): ExportNode => {
    const mesh = node.getMesh()
    const index = nodes.size
    const out: ExportNode = {
      // DCC tools key nodes by name; unnamed glTF nodes get a stable one.
      name: node.getName() || `node_${index}`,
      translation: node.getTranslation(),
      rotation: node.getRotation(),
      scale: node.getScale(),
      mesh: mesh ? exportMesh(mesh) : undefined,
      joint: false,
      children: [],
    }
    nodes.set(node, out)
    out.children = node.listChildren().map(exportNode)
    return out
  }

  const roots = scene ? scene.listChildren().map(exportNode) : []
  const animations = options.deform ? attachDeformations(doc, nodes, notes) : []
  if (counts.transforms > 0)
    notes.push(`KHR_texture_transform of ${counts.transforms} map(s) dropped: their UV set carries another map's transform`)
  return { roots, meshes: [...meshes.values()], materials: [...materials.values()], animations, notes }
}

/** What the writers keep of a material (glTF's default material for none), its maps' images made files. */
function toExportMaterial(material: Material | null, index: number, exportImage: (texture: Texture) => ImageFile): ExportMaterial {
  const factor = material?.getBaseColorFactor() ?? [0.8, 0.8, 0.8, 1]
  const emissive = material?.getEmissiveFactor() ?? [0, 0, 0]
  const maps: Partial<Record<MapSlot, ExportMap>> = {}
  if (material)
    for (const [slot, texture, info] of materialTextures(material)) maps[slot] = { image: exportImage(texture), texCoord: texCoordOf(info) }
  return {
    index,
    name: material?.getName() || `material_${index}`,
    baseColor: [factor[0], factor[1], factor[2], factor[3]],
    emissive: [emissive[0], emissive[1], emissive[2]],
    maps,
    doubleSided: material?.getDoubleSided() ?? false,
  }
}

/** Gives skinned nodes their skins and resamples the animations of the scene's nodes. */
function attachDeformations(doc: Document, nodes: Map<Node, ExportNode>, notes: string[]): ExportAnimation<ExportNode>[] {
  const skins = new Map<object, ExportSkin | null>()
  const parents = new Map<ExportNode, ExportNode>()
  for (const parent of nodes.values()) for (const child of parent.children) parents.set(child, parent)
  for (const [node, out] of nodes) {
    const skin = node.getSkin()
    if (!skin || !out.mesh) continue
    if (!out.mesh.skinning) {
      notes.push(`skin of node "${node.getName()}" dropped: its mesh has no joint weights (written in its bind pose)`)
      continue
    }
    if (!skins.has(skin)) {
      const joints = skin.listJoints().map((joint) => nodes.get(joint))
      if (joints.some((joint) => !joint)) {
        notes.push(`skin "${skin.getName()}" dropped: some of its joints are not in the scene`)
        skins.set(skin, null)
      } else {
        const found = joints as ExportNode[]
        for (const joint of found) joint.joint = true
        skins.set(skin, {
          index: skins.size,
          name: skin.getName(),
          joints: found,
          inverseBindMatrices: inverseBindMatrices(skin.getInverseBindMatrices(), found.length),
          roots: found.filter((joint) => !found.includes(parents.get(joint)!)),
        })
      }
    }
    out.skin = skins.get(skin) ?? undefined
  }
  const animations: ExportAnimation<ExportNode>[] = []
  let outside = 0
  for (const animation of doc.getRoot().listAnimations()) {
    const sampled = sampleAnimation(animation, notes)
    const tracks: ExportTrack<ExportNode>[] = []
    for (const track of sampled.tracks) {
      const node = nodes.get(track.node)
      if (node) tracks.push({ ...track, node })
      else outside++
    }
    if (tracks.length > 0) animations.push({ name: sampled.name, tracks })
  }
  if (outside > 0) notes.push(`${outside} animation track(s) dropped: their node is not in the scene`)
  return animations
}

/** glTF's column-major inverse bind matrices as row-major ones (identity when absent). */
function inverseBindMatrices(accessor: Accessor | null, count: number): Float32Array {
  const out = new Float32Array(count * 16)
  const element: number[] = []
  for (let j = 0; j < count; j++) {
    if (accessor && j < accessor.getCount()) accessor.getElement(j, element)
    else element.splice(0, 16, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1)
    for (let row = 0; row < 4; row++) for (let col = 0; col < 4; col++) out[j * 16 + row * 4 + col] = element[col * 4 + row]!
  }
  return out
}

/** A primitive's drawn elements, unrolled to lists indexing its own vertices. */
interface KeptPrimitive {
  prim: Primitive
  triangles: ArrayLike<number>
  lines: number[]
}

/** The mesh's vertex arrays, sized for all its kept primitives; an attribute is present when the writers can use it. */
interface MeshVertices {
  positions: Float32Array
  normals?: Float32Array
  uvSets: Float32Array[]
  colors?: Float32Array
  /** JOINTS_n/WEIGHTS_n pairs copied, 4 influences each. */
  skinning?: NonNullable<ExportMesh['skinning']>
}

function flattenMesh(
  mesh: Mesh,
  index: number,
  exportMaterial: (material: Material | null) => ExportMaterial,
  options: ExportOptions,
  counts: { transforms: number },
): ExportMesh {
  const kept: KeptPrimitive[] = []
  for (const prim of mesh.listPrimitives()) {
    const position = prim.getAttribute('POSITION')
    if (!position) continue
    const { triangles, lines } = drawnElements(prim, position)
    // Points, and lines where the target has none, are left out; target-holds.ts notes them.
    if (!options.lines) lines.length = 0
    if (triangles.length > 0 || lines.length > 0) kept.push({ prim, triangles, lines })
  }
  const vertices = allocateVertices(kept, options)
  const groups: ExportGroup[] = []
  let base = 0
  for (const { prim, triangles, lines } of kept) {
    counts.transforms += copyVertices(prim, vertices, base)
    groups.push({
      material: exportMaterial(prim.getMaterial()),
      triangles: offsetIndices(triangles, base),
      lines: offsetIndices(lines, base),
    })
    base += prim.getAttribute('POSITION')!.getCount()
  }
  const { positions, normals, uvSets, colors, skinning } = vertices
  return { index, name: mesh.getName() || `mesh_${index}`, positions, normals, uvSets, colors, skinning, groups }
}

/** A primitive's triangles (strips and fans unrolled) or lines (strips and loops unrolled); points give neither. */
function drawnElements(prim: Primitive, position: Accessor): { triangles: ArrayLike<number>; lines: number[] } {
  const order = vertexOrder(prim, position)
  const mode = prim.getMode()
  let triangles: ArrayLike<number> = []
  const lines: number[] = []
  if (mode === 4) triangles = order.length % 3 === 0 ? order : Array.prototype.slice.call(order, 0, order.length - (order.length % 3))
  else if (mode === 5) {
    triangles = strip(order)
  } else if (mode === 6) {
    triangles = fan(order)
  } else if (mode === 1) for (let i = 0; i + 1 < order.length; i += 2) lines.push(order[i]!, order[i + 1]!)
  else if (mode === 3 || mode === 2) {
    for (let i = 0; i + 1 < order.length; i++) lines.push(order[i]!, order[i + 1]!)
    if (mode === 2 && order.length > 2) lines.push(order[order.length - 1]!, order[0]!)
  }
  return { triangles, lines }
}

function allocateVertices(kept: KeptPrimitive[], options: ExportOptions): MeshVertices {
  const vertexCount = kept.reduce((n, k) => n + k.prim.getAttribute('POSITION')!.getCount(), 0)
  const withTriangles = kept.filter((k) => k.triangles.length > 0)
  const hasNormals = withTriangles.length > 0 && withTriangles.every((k) => k.prim.getAttribute('NORMAL'))
  const setCount = (prefix: string) => Math.max(0, ...kept.map((k) => k.prim.listSemantics().filter((s) => s.startsWith(prefix)).length))
  const uvSetCount = setCount('TEXCOORD_')
  const jointSets = options.deform ? Math.min(setCount('JOINTS_'), setCount('WEIGHTS_')) : 0
  const hasColors = kept.some((k) => k.prim.getAttribute('COLOR_0'))
  const influences = jointSets * 4
  return {
    positions: new Float32Array(vertexCount * 3),
    normals: hasNormals ? new Float32Array(vertexCount * 3) : undefined,
    uvSets: Array.from({ length: uvSetCount }, () => new Float32Array(vertexCount * 2)),
    colors: hasColors ? new Float32Array(vertexCount * 4).fill(1) : undefined,
    skinning:
      influences > 0
        ? { joints: new Float32Array(vertexCount * influences), weights: new Float32Array(vertexCount * influences), influences }
        : undefined,
  }
}

/**
 * Copies a primitive's vertices into the mesh's arrays from vertex `base`, its texture transforms
 * baked into the UVs; returns how many transforms were dropped (their UV set carries another's).
 */
function copyVertices(prim: Primitive, vertices: MeshVertices, base: number): number {
  const { positions, normals, uvSets, colors, skinning } = vertices
  const count = prim.getAttribute('POSITION')!.getCount()
  copyAttribute(prim.getAttribute('POSITION'), positions, base, 3)
  if (normals) copyAttribute(prim.getAttribute('NORMAL'), normals, base, 3)
  const { bySet, dropped } = transformsBySet(prim.getMaterial())
  uvSets.forEach((uvs, set) => {
    copyAttribute(prim.getAttribute(`TEXCOORD_${set}`), uvs, base, 2)
    const transform = bySet.get(set)
    if (transform) bakeTransform(uvs, base, base + count, transform)
  })
  if (colors) copyAttribute(prim.getAttribute('COLOR_0'), colors, base, 4)
  if (skinning)
    for (let set = 0; set < skinning.influences / 4; set++) {
      copyAttributeInterleaved(prim.getAttribute(`JOINTS_${set}`), skinning.joints, base, skinning.influences, set * 4)
      copyAttributeInterleaved(prim.getAttribute(`WEIGHTS_${set}`), skinning.weights, base, skinning.influences, set * 4)
    }
  return dropped
}

function vertexOrder(prim: Primitive, position: Accessor): ArrayLike<number> {
  const indices = prim.getIndices()
  if (indices) return indices.getArray() as ArrayLike<number>
  return Uint32Array.from({ length: position.getCount() }, (_, i) => i)
}

function strip(order: ArrayLike<number>): number[] {
  const out: number[] = []
  // Every other triangle of a strip is wound the other way round.
  for (let i = 0; i + 2 < order.length; i++) {
    if (i % 2 === 0) out.push(order[i]!, order[i + 1]!, order[i + 2]!)
    else out.push(order[i + 1]!, order[i]!, order[i + 2]!)
  }
  return out
}

function fan(order: ArrayLike<number>): number[] {
  const out: number[] = []
  for (let i = 1; i + 1 < order.length; i++) out.push(order[0]!, order[i]!, order[i + 1]!)
  return out
}

function offsetIndices(indices: ArrayLike<number>, base: number): Uint32Array {
  const out = Uint32Array.from(indices)
  if (base !== 0) for (let i = 0; i < out.length; i++) out[i]! += base
  return out
}

/** Copies an accessor's elements (denormalized) into `target` from vertex `base`, padding to `size`. */
function copyAttribute(accessor: Accessor | null, target: Float32Array, base: number, size: number): void {
  if (!accessor) return
  const array = accessor.getArray()
  if (array instanceof Float32Array && accessor.getElementSize() === size) {
    target.set(array.subarray(0, accessor.getCount() * size), base * size) // the common case, without per-element calls
    return
  }
  copyAttributeInterleaved(accessor, target, base, size, 0)
}

/** Copies an accessor's elements (denormalized) into columns `offset`… of rows of `stride` values from row `base`. */
function copyAttributeInterleaved(accessor: Accessor | null, target: Float32Array, base: number, stride: number, offset: number): void {
  if (!accessor) return
  const element: number[] = []
  const width = Math.min(accessor.getElementSize(), stride - offset)
  for (let i = 0; i < accessor.getCount(); i++) {
    accessor.getElement(i, element)
    for (let c = 0; c < width; c++) target[(base + i) * stride + offset + c] = element[c]!
  }
}

/** The 3×3 rotation matrix of a unit quaternion (x, y, z, w), acting on column vectors, indexed m[row][col]. */
export function quaternionToMatrix([x, y, z, w]: [number, number, number, number]): number[][] {
  return [
    [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
    [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
    [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
  ]
}

/** Texture coordinates with v flipped (COLLADA's and FBX's v axis points up, glTF's down), as `Target`. */
export function flippedV<T extends Float32Array | Float64Array>(uvs: ArrayLike<number>, Target: new (length: number) => T): T {
  const out = new Target(uvs.length)
  for (let i = 0; i < uvs.length; i += 2) {
    out[i] = uvs[i]!
    out[i + 1] = 1 - uvs[i + 1]!
  }
  return out
}
