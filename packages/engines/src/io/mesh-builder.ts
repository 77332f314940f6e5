import { type Document, Logger, type Material } from '@gltf-transform/core'

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
