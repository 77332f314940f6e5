import { type Document, Logger, type Material } from '@gltf-transform/core'
import { mix32 } from '../geometry/mix32.ts'

/** One primitive as a reader produces it: flat typed arrays, indices optional. */
export interface PrimitiveData {
  positions: Float32Array
  normals?: Float32Array
  uvs?: Float32Array
  /** RGB or RGBA per vertex (see `colorSize`), linear 0..1. */
  colors?: Float32Array
  colorSize?: 3 | 4
  indices?: Uint32Array
  /** glTF mode: 0 points, 1 lines, 4 triangles. */
  mode: 0 | 1 | 4
  material?: Material
}

export interface MeshData {
  name: string
  primitives: PrimitiveData[]
}

/**
 * Builds a Document with one buffer, one scene, and one node per mesh: the shape every hand-written
 * reader (OBJ, STL, PLY) returns. Empty primitives are left out.
 */
export function buildDocument(doc: Document, meshes: MeshData[]): Document {
  // Same verbosity as the platform's IO: a service logs warnings, not every transform's progress.
  doc.setLogger(new Logger(Logger.Verbosity.WARN))
  const buffer = doc.getRoot().listBuffers()[0] ?? doc.createBuffer()
  const scene = doc.getRoot().getDefaultScene() ?? doc.createScene()
  doc.getRoot().setDefaultScene(scene)
  for (const data of meshes) {
    const prims = data.primitives.filter((p) => p.positions.length > 0 && (!p.indices || p.indices.length > 0))
    if (prims.length === 0) continue
    const mesh = doc.createMesh(data.name)
    for (const p of prims) {
      const prim = doc.createPrimitive().setMode(p.mode)
      prim.setAttribute('POSITION', doc.createAccessor().setType('VEC3').setArray(p.positions).setBuffer(buffer))
      if (p.normals) prim.setAttribute('NORMAL', doc.createAccessor().setType('VEC3').setArray(p.normals).setBuffer(buffer))
      if (p.uvs) prim.setAttribute('TEXCOORD_0', doc.createAccessor().setType('VEC2').setArray(p.uvs).setBuffer(buffer))
      if (p.colors) {
        const type = (p.colorSize ?? 3) === 4 ? 'VEC4' : 'VEC3'
        prim.setAttribute('COLOR_0', doc.createAccessor().setType(type).setArray(p.colors).setBuffer(buffer))
      }
      if (p.indices) {
        const count = p.positions.length / 3
        const array = count <= 65535 ? Uint16Array.from(p.indices) : p.indices
        prim.setIndices(doc.createAccessor().setType('SCALAR').setArray(array).setBuffer(buffer))
      }
      if (p.material) prim.setMaterial(p.material)
      mesh.addPrimitive(prim)
    }
    scene.addChild(doc.createNode(data.name).setMesh(mesh))
  }
  return doc
}

/** Growable Float32/Uint32 storage for streaming parsers (no per-element JS arrays). */
export class GrowableArray<T extends Float32Array | Uint32Array> {
  length = 0
  private data: T
  constructor(
    private readonly Ctor: new (n: number) => T,
    capacity = 1024,
  ) {
    this.data = new Ctor(capacity)
  }
  push(value: number): void {
    if (this.length === this.data.length) this.grow(this.length + 1)
    this.data[this.length++] = value
  }
  push3(a: number, b: number, c: number): void {
    if (this.length + 3 > this.data.length) this.grow(this.length + 3)
    const d = this.data
    d[this.length] = a
    d[this.length + 1] = b
    d[this.length + 2] = c
    this.length += 3
  }
  get(index: number): number {
    return this.data[index]!
  }
  set(index: number, value: number): void {
    this.data[index] = value
  }
  toArray(): T {
    return this.data.slice(0, this.length) as T
  }
  private grow(min: number): void {
    const next = new this.Ctor(Math.max(min, this.data.length * 2))
    next.set(this.data)
    this.data = next
  }
}

/**
 * A map from non-negative integers to non-negative integers: open addressing over typed arrays, for
 * the hot loops of the readers, where a `Map` grew an entry per key (the OBJ reader's corner lookup:
 * ogre.obj read in 91–97 ms with a Map, 84–86 with this, best of 25 reads). Grows at half full.
 */
export class IntMap {
  private keys = new Int32Array(1024).fill(-1)
  private values = new Int32Array(1024)
  private size = 0

  /** The value of `key`, or -1 when it has none. */
  get(key: number): number {
    const mask = this.keys.length - 1
    for (let slot = mix32(key) & mask; ; slot = (slot + 1) & mask) {
      const found = this.keys[slot]!
      if (found === key) return this.values[slot]!
      if (found === -1) return -1
    }
  }

  set(key: number, value: number): void {
    if (2 * (this.size + 1) > this.keys.length) this.grow()
    const mask = this.keys.length - 1
    for (let slot = mix32(key) & mask; ; slot = (slot + 1) & mask) {
      const found = this.keys[slot]!
      if (found === key || found === -1) {
        if (found === -1) this.size++
        this.keys[slot] = key
        this.values[slot] = value
        return
      }
    }
  }

  private grow(): void {
    const { keys, values } = this
    this.keys = new Int32Array(keys.length * 2).fill(-1)
    this.values = new Int32Array(keys.length * 2)
    this.size = 0
    for (let slot = 0; slot < keys.length; slot++) if (keys[slot] !== -1) this.set(keys[slot]!, values[slot]!)
  }
}
