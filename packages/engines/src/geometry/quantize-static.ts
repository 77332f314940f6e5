import {
  AnimationChannel,
  Node,
  PrimitiveTarget,
  PropertyType,
  type Document,
  type ILogger,
  type Mesh,
  type mat4,
  type Primitive,
  type Skin,
  type Transform,
} from '@gltf-transform/core'
import { KHRMeshQuantization } from '@gltf-transform/extensions'
import { QUANTIZE_DEFAULTS, dedup, prune, quantize, sortPrimitiveWeights } from '@gltf-transform/functions'
import { firstUseNumbering } from './vertex-rows.ts'
import { compactPrimitiveRows } from './weld-bitwise.ts'
import { invert, multiply, scaleThenMove } from './mat4.ts'
import { findPositionLattice } from './lattice.ts'

export interface QuantizeStaticOptions {
  /** Attributes to quantize (glTF-Transform's `pattern`). */
  pattern: RegExp
  /** Morph target attributes to quantize (glTF-Transform's `patternTargets`); `pattern` when absent. */
  patternTargets?: RegExp
  quantizePosition: number
  quantizeNormal: number
  quantizeColor: number
  /**
   * Positions that lie on a lattice coarser than the grid are quantized on it (lattice.ts),
   * in integers one apart. Only for a caller that then stores every position as a plain integer
   * (meshopt-grid.ts): there the lattice is kept exactly; the normalized storage's replicated low
   * bits would move a point k steps from the centre by about k · 9e-5 steps.
   * Off: quantize()'s grid across the bounds, byte for byte.
   */
  lattice?: boolean
}

/**
 * glTF-Transform's `quantize({ ...options, quantizationVolume: 'scene' })` with the same bytes, for
 * documents without instancing: positions, normals, tangents, colours, joints, weights and morph
 * targets of plain and skinned nodes. The library reads and writes every vertex through
 * `Accessor.getElement`/`setElement` (a third of a meshopt job; 2CylinderEngine ~90 ms, a
 * 1M-triangle mesh ~500 ms); here each array is one loop, doing the same double-precision arithmetic
 * in the same order (weights are still sorted by the library's `sortPrimitiveWeights`). Anything else
 * (instancing, custom attributes, volume materials, skins without inverse bind matrices, integer
 * sources to narrow) goes to `quantize()`.
 *
 * ```ts
 * await doc.transform(quantizeStatic({ pattern: /^(?!TEXCOORD_)/, quantizePosition: 14, quantizeNormal: 8, quantizeColor: 8 }))
 * ```
 */
export function quantizeStatic(options: QuantizeStaticOptions): Transform {
  return async function quantizeStaticTransform(doc: Document): Promise<void> {
    if (!isStatic(doc, options)) {
      await doc.transform(quantize({ ...options, quantizationVolume: 'scene' }))
      return
    }
    const meshes = doc.getRoot().listMeshes()
    const targets = options.patternTargets ?? options.pattern
    let toGrid: number[] = []
    let deltaScale: number[] = []
    if (meshes.length > 0) {
      const { scale, offset } = positionVolume(meshes, options)
      const toNode = scaleThenMove(scale, offset)
      toGrid = invert(toNode)
      // Morph deltas only scale (gl-matrix's fromScaling).
      deltaScale = [1 / scale, 0, 0, 0, 0, 1 / scale, 0, 0, 0, 0, 1 / scale, 0, 0, 0, 0, 1]
      for (const mesh of meshes) {
        if (options.pattern.test('POSITION')) moveMeshParents(doc, mesh, toNode)
        for (const prim of mesh.listPrimitives()) {
          const position = prim.getAttribute('POSITION')
          const indices = prim.getIndices()?.getArray()
          if (position && indices && indices.length < position.getCount() / 2)
            compactPrimitiveRows(prim, ...firstUseNumbering(indices, position.getCount()))
          quantizePrimitive(prim, toGrid, options.pattern, options, doc.getLogger())
          for (const target of prim.listTargets()) quantizePrimitive(target, deltaScale, targets, options, doc.getLogger())
        }
      }
    }
    if (meshes.some((mesh) => mesh.listPrimitives().some(isQuantizedPrimitive))) doc.createExtension(KHRMeshQuantization).setRequired(true)
    // quantize()'s own clean-up, unchanged.
    await doc.transform(
      prune({
        propertyTypes: [PropertyType.ACCESSOR, PropertyType.SKIN, PropertyType.MATERIAL],
        keepAttributes: true,
        keepIndices: true,
        keepLeaves: true,
        keepSolidTextures: true,
      }),
      dedup({ propertyTypes: [PropertyType.ACCESSOR, PropertyType.MATERIAL, PropertyType.SKIN], keepUniqueNames: true }),
    )
  }
}

const PLAIN_SEMANTIC = /^(POSITION|NORMAL|TANGENT|COLOR_\d+|WEIGHTS_\d+|JOINTS_\d+)$/

/** Whether this transform reproduces quantize() on the document (see quantizeStatic). */
function isStatic(doc: Document, options: QuantizeStaticOptions): boolean {
  const root = doc.getRoot()
  if (root.listExtensionsUsed().some((ext) => ext.extensionName === 'KHR_mesh_primitive_restart')) return false
  for (const mesh of root.listMeshes()) {
    const prims = mesh.listPrimitives()
    if (!prims.some((prim) => prim.getAttribute('POSITION'))) return false // quantize() throws: let it
    for (const parent of mesh.listParents()) {
      if (!(parent instanceof Node)) continue
      if (parent.getExtension('EXT_mesh_gpu_instancing')) return false
      // quantize() moves a skin through its inverse bind matrices (and throws without them).
      if (parent.getSkin() && !parent.getSkin()!.getInverseBindMatrices()) return false
    }
    for (const prim of prims) {
      if (prim.getMaterial()?.getExtension('KHR_materials_volume')) return false
      for (const holder of [prim, ...prim.listTargets()]) {
        const pattern = holder === prim ? options.pattern : (options.patternTargets ?? options.pattern)
        for (const semantic of holder.listSemantics()) {
          if (!pattern.test(semantic)) continue
          if (!PLAIN_SEMANTIC.test(semantic)) return false
          const attribute = holder.getAttribute(semantic)!
          if (semantic.startsWith('JOINTS_')) continue
          const { bits } = settings(semantic, options)
          if (attribute.getComponentSize() > bits / 8 && !(attribute.getArray() instanceof Float32Array)) return false
        }
      }
    }
  }
  return true
}

/**
 * The box the grid spans, as its half side (`scale`) and centre (`offset`): quantize()'s, or with
 * `lattice`, one where each lattice point falls on a grid point (the grid's step is the lattice's,
 * the centre a lattice point), so quantizing moves no position.
 */
function positionVolume(meshes: Mesh[], options: QuantizeStaticOptions): { scale: number; offset: number[] } {
  const half = 2 ** (options.quantizePosition - 1) - 1
  // At most 2·half steps: from a lattice point in the middle, each side then holds half of them.
  const lattice = options.lattice && options.pattern.test('POSITION') ? findPositionLattice(meshes, 2 * half) : undefined
  const { min, max } = sceneBounds(meshes)
  if (lattice) {
    const { step, origin } = lattice
    return { scale: step * half, offset: origin.map((o, k) => o + step * Math.floor(Math.round((max[k]! - o) / step) / 2)) }
  }
  const scale = Math.max((max[0]! - min[0]!) / 2, (max[1]! - min[1]!) / 2, (max[2]! - min[2]!) / 2)
  const offset = [min[0]! + (max[0]! - min[0]!) / 2, min[1]! + (max[1]! - min[1]!) / 2, min[2]! + (max[2]! - min[2]!) / 2]
  return { scale, offset }
}

/** quantize()'s scene volume: every mesh's POSITION bounds (finite values) and morph reach, merged. */
function sceneBounds(meshes: Mesh[]): { min: number[]; max: number[] } {
  const min = [Infinity, Infinity, Infinity]
  const max = [-Infinity, -Infinity, -Infinity]
  for (const mesh of meshes) {
    for (const prim of mesh.listPrimitives()) {
      const position = prim.getAttribute('POSITION')
      if (!position) continue
      const lo = position.getMinNormalized([])
      const hi = position.getMaxNormalized([])
      for (let k = 0; k < 3; k++) {
        min[k] = Math.min(min[k]!, lo[k]!)
        max[k] = Math.max(max[k]!, hi[k]!)
      }
      // A morph target's deltas widen the volume by twice their reach, and to the origin (quantize()'s rule).
      for (const target of prim.listTargets()) {
        const delta = target.getAttribute('POSITION')
        if (!delta) continue
        const dlo = delta.getMinNormalized([])
        const dhi = delta.getMaxNormalized([])
        for (let k = 0; k < 3; k++) {
          min[k] = Math.min(min[k]!, Math.min(dlo[k]! * 2, 0))
          max[k] = Math.max(max[k]!, Math.max(dhi[k]! * 2, 0))
        }
      }
    }
  }
  return { min, max }
}

const TRS = new Set(['translation', 'rotation', 'scale'])

/** quantize()'s `transformMeshParents` for plain nodes: each node drawing the mesh takes `toNode`. */
function moveMeshParents(doc: Document, mesh: Mesh, toNode: number[]): void {
  for (const parent of mesh.listParents()) {
    if (!(parent instanceof Node)) continue
    const skin = parent.getSkin()
    if (skin) {
      parent.setSkin(movedSkin(skin, toNode))
      continue
    }
    const channels = parent.listParents().filter((p): p is AnimationChannel => p instanceof AnimationChannel)
    let target = parent
    // A node that moves or carries children keeps its transform: the mesh moves to a child of its own.
    if (parent.listChildren().length > 0 || channels.some((channel) => TRS.has(channel.getTargetPath()!))) {
      target = doc.createNode('').setMesh(mesh)
      parent.addChild(target).setMesh(null)
      for (const channel of channels) if (channel.getTargetPath() === 'weights') channel.setTargetNode(target)
    }
    target.setMatrix(multiply(target.getMatrix(), toNode) as Parameters<Node['setMatrix']>[0])
  }
}

/** quantize()'s `transformSkin`: a copy of the skin whose inverse bind matrices take `toNode`. */
function movedSkin(skin: Skin, toNode: number[]): Skin {
  const moved = skin.clone()
  const matrices = skin.getInverseBindMatrices()!.clone()
  const matrix: number[] = []
  for (let i = 0, count = matrices.getCount(); i < count; i++) matrices.setElement(i, multiply(matrices.getElement(i, matrix), toNode))
  return moved.setInverseBindMatrices(matrices)
}

function quantizePrimitive(
  prim: Primitive | PrimitiveTarget,
  toGrid: number[],
  pattern: RegExp,
  options: QuantizeStaticOptions,
  logger: ILogger,
): void {
  for (const semantic of prim.listSemantics()) {
    if (!pattern.test(semantic)) continue
    const src = prim.getAttribute(semantic)!
    if (semantic.startsWith('JOINTS_')) {
      // quantize() narrows joint indices in place, to 8 bits where they fit.
      const ctor = Math.max(...src.getMax([])) <= 255 ? Uint8Array : Uint16Array
      if (src.getComponentSize() > ctor.BYTES_PER_ELEMENT) src.setArray(new ctor(src.getArray()!))
      continue
    }
    if (semantic.startsWith('WEIGHTS_') && (src.getMinNormalized([]).some((v) => v < 0) || src.getMaxNormalized([]).some((v) => v > 1))) {
      logger.warn(`quantize: Skipping ${semantic}; out of [0,1] range.`)
      continue
    }
    const { bits, ctor } = settings(semantic, options)
    if (bits < 8 || bits > 16) throw new Error('quantize: Requires bits = 8–16.')
    if (src.getComponentSize() <= bits / 8) continue
    const values = src.getArray() as Float32Array
    const quantized = semantic === 'POSITION' ? quantizedPositions(values, toGrid, ctor, bits) : quantizedValues(values, ctor, bits)
    prim.setAttribute(semantic, src.clone().setArray(quantized).setNormalized(true).setSparse(false))
  }
  if (prim instanceof PrimitiveTarget) return
  if (prim.getAttribute('WEIGHTS_0')) sortPrimitiveWeights(prim, Infinity)
  const indices = prim.getIndices()
  const first = prim.listAttributes()[0]
  if (indices && first && first.getCount() < 65535) indices.setArray(new Uint16Array(indices.getArray()!))
}

type IntArrayConstructor = Int8ArrayConstructor | Int16ArrayConstructor | Uint8ArrayConstructor | Uint16ArrayConstructor

function settings(semantic: string, options: QuantizeStaticOptions): { bits: number; ctor: IntArrayConstructor } {
  if (semantic === 'POSITION') return { bits: options.quantizePosition, ctor: options.quantizePosition <= 8 ? Int8Array : Int16Array }
  if (semantic === 'NORMAL' || semantic === 'TANGENT')
    return { bits: options.quantizeNormal, ctor: options.quantizeNormal <= 8 ? Int8Array : Int16Array }
  if (semantic.startsWith('WEIGHTS_'))
    return { bits: QUANTIZE_DEFAULTS.quantizeWeight, ctor: QUANTIZE_DEFAULTS.quantizeWeight <= 8 ? Uint8Array : Uint16Array }
  return { bits: options.quantizeColor, ctor: options.quantizeColor <= 8 ? Uint8Array : Uint16Array }
}

/** quantize()'s `quantizeAttribute` arithmetic: clamp, round on `bits`, replicate the high bits low. */
function encoding(ctor: IntArrayConstructor, bits: number) {
  const signed = ctor === Int8Array || ctor === Int16Array
  const quantBits = bits - (signed ? 1 : 0)
  const storageBits = ctor.BYTES_PER_ELEMENT * 8 - (signed ? 1 : 0)
  return { floor: signed ? -1 : 0, scale: 2 ** quantBits - 1, lo: storageBits - quantBits, hi: 2 * quantBits - storageBits }
}

function quantizedValues(values: Float32Array, ctor: IntArrayConstructor, bits: number) {
  const { floor, scale, lo, hi } = encoding(ctor, bits)
  const out = new ctor(values.length)
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!
    const q = Math.round(Math.abs(Math.min(Math.max(v, floor), 1)) * scale)
    out[i] = ((q << lo) | (q >> hi)) * Math.sign(v)
  }
  return out
}

/** Positions moved onto the grid (`toGrid`, as gl-matrix's transformMat4 does it, stored as float32), then quantized. */
function quantizedPositions(values: Float32Array, m: number[], ctor: IntArrayConstructor, bits: number) {
  const { floor, scale, lo, hi } = encoding(ctor, bits)
  const out = new ctor(values.length)
  const [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15] = m as mat4
  const count = Math.floor(values.length / 3)
  for (let e = 0; e < count; e++) {
    const i = e * 3
    const x = values[i]!
    const y = values[i + 1]!
    const z = values[i + 2]!
    const w = m3 * x + m7 * y + m11 * z + m15 || 1
    for (let k = 0; k < 3; k++) {
      const t =
        k === 0
          ? (m0 * x + m4 * y + m8 * z + m12) / w
          : k === 1
            ? (m1 * x + m5 * y + m9 * z + m13) / w
            : (m2 * x + m6 * y + m10 * z + m14) / w
      const v = Math.fround(t)
      const q = Math.round(Math.abs(Math.min(Math.max(v, floor), 1)) * scale)
      out[i + k] = ((q << lo) | (q >> hi)) * Math.sign(v)
    }
  }
  return out
}

/** quantize()'s `isQuantizedPrimitive`, as written there (it tests the POSITION accessor under every semantic). */
function isQuantizedPrimitive(prim: Primitive | PrimitiveTarget): boolean {
  const position = prim.getAttribute('POSITION')
  if (!position) return false
  const quantized = prim.listSemantics().some((semantic) => {
    const size = position.getComponentSize()
    if (semantic === 'POSITION' || semantic === 'NORMAL' || semantic === 'TANGENT') return size < 4
    if (semantic.startsWith('TEXCOORD_')) {
      const type = position.getComponentType()
      return size < 4 && !(position.getNormalized() && (type === 5121 || type === 5123))
    }
    return false
  })
  return quantized || (!(prim instanceof PrimitiveTarget) && prim.listTargets().some(isQuantizedPrimitive))
}
