import type { Accessor, Document, Material, Mesh, Node, Primitive, Texture } from '@gltf-transform/core'

/**
 * What the FBX and COLLADA writers need from a Document, flattened once: per mesh one vertex list
 * with triangles and lines into it, the materials those use, and the node tree. What the target
 * format cannot hold is noted by target-holds.ts.
 */
export interface ExportScene {
  roots: ExportNode[]
  meshes: ExportMesh[]
  materials: ExportMaterial[]
}

/** A node of the default scene, with its local transform. */
export interface ExportNode {
  name: string
  translation: [number, number, number]
  rotation: [number, number, number, number]
  scale: [number, number, number]
  mesh?: ExportMesh
  children: ExportNode[]
}

/** A glTF mesh flattened to one vertex list. */
export interface ExportMesh {
  index: number
  name: string
  positions: Float32Array
  /** Present when every triangle-bearing primitive has normals. */
  normals?: Float32Array
  /** glTF convention (v down); present when any primitive has TEXCOORD_0 (0 where missing). */
  uvs?: Float32Array
  /** RGBA in 0..1; present when any primitive has COLOR_0 (white where missing). */
  colors?: Float32Array
  /** One group of triangles (and lines) per source primitive with a material. */
  groups: ExportGroup[]
}

/** Triangles and lines of one source primitive, indexing the mesh's vertex list. */
export interface ExportGroup {
  material: ExportMaterial
  triangles: Uint32Array
  lines: Uint32Array
}

/** What the writers keep of a material. */
export interface ExportMaterial {
  index: number
  name: string
  baseColor: [number, number, number, number]
  baseColorTexture?: ExportImage
  doubleSided: boolean
}

/** A base colour image as a file beside (COLLADA) or inside (FBX) the model. */
export interface ExportImage {
  /** A file name unique within the export, with the extension of the image's type. */
  fileName: string
  bytes: Uint8Array
}

const MIME_EXTENSION: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/ktx2': 'ktx2' }

/** Flattens the Document's default scene for the FBX or COLLADA writer. */
export function collectExportScene(doc: Document, options: { lines: boolean }): ExportScene {
  const root = doc.getRoot()
  const scene = root.getDefaultScene() ?? root.listScenes()[0]
  const materials = new Map<Material | null, ExportMaterial>()
  const images = new Map<Texture, ExportImage>()
  const usedNames = new Set<string>()
  const meshes = new Map<Mesh, ExportMesh>()

  const exportImage = (texture: Texture): ExportImage => {
    let image = images.get(texture)
    if (!image) {
      const extension = MIME_EXTENSION[texture.getMimeType()] ?? 'png'
      const stem = (
        texture.getName() ||
        texture
          .getURI()
          .replace(/^.*[\\/]/, '')
          .replace(/\.[^.]*$/, '') ||
        'texture'
      ).replace(/[^\w.-]+/g, '_')
      let fileName = `${stem}.${extension}`
      for (let n = 1; usedNames.has(fileName.toLowerCase()); n++) fileName = `${stem}_${n}.${extension}`
      usedNames.add(fileName.toLowerCase())
      image = { fileName, bytes: texture.getImage() ?? new Uint8Array(0) }
      images.set(texture, image)
    }
    return image
  }

  const exportMaterial = (material: Material | null): ExportMaterial => {
    let out = materials.get(material)
    if (!out) {
      const texture = material?.getBaseColorTexture()
      const factor = material?.getBaseColorFactor() ?? [0.8, 0.8, 0.8, 1]
      out = {
        index: materials.size,
        name: material?.getName() || `material_${materials.size}`,
        baseColor: [factor[0], factor[1], factor[2], factor[3]],
        baseColorTexture: texture ? exportImage(texture) : undefined,
        doubleSided: material?.getDoubleSided() ?? false,
      }
      materials.set(material, out)
    }
    return out
  }

  const exportMesh = (mesh: Mesh): ExportMesh => {
    let out = meshes.get(mesh)
    if (!out) {
      out = flattenMesh(mesh, meshes.size, exportMaterial, options)
      meshes.set(mesh, out)
    }
    return out
  }

  let nodeCount = 0
  const exportNode = (node: Node): ExportNode => {
    const mesh = node.getMesh()
    const index = nodeCount++
    return {
      // DCC tools key nodes by name; unnamed glTF nodes get a stable one.
      name: node.getName() || `node_${index}`,
      translation: node.getTranslation(),
      rotation: node.getRotation(),
      scale: node.getScale(),
      mesh: mesh ? exportMesh(mesh) : undefined,
      children: node.listChildren().map(exportNode),
    }
  }

  const roots = scene ? scene.listChildren().map(exportNode) : []
  return { roots, meshes: [...meshes.values()], materials: [...materials.values()] }
}

function flattenMesh(
  mesh: Mesh,
  index: number,
  exportMaterial: (material: Material | null) => ExportMaterial,
  options: { lines: boolean },
): ExportMesh {
  const kept: { prim: Primitive; triangles: ArrayLike<number>; lines: number[] }[] = []
  for (const prim of mesh.listPrimitives()) {
    const position = prim.getAttribute('POSITION')
    if (!position) continue
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
    if (!options.lines) lines.length = 0
    if (triangles.length > 0 || lines.length > 0) kept.push({ prim, triangles, lines })
  }
  const vertexCount = kept.reduce((n, k) => n + k.prim.getAttribute('POSITION')!.getCount(), 0)
  const withTriangles = kept.filter((k) => k.triangles.length > 0)
  const hasNormals = withTriangles.length > 0 && withTriangles.every((k) => k.prim.getAttribute('NORMAL'))
  const hasUvs = kept.some((k) => k.prim.getAttribute('TEXCOORD_0'))
  const hasColors = kept.some((k) => k.prim.getAttribute('COLOR_0'))
  const positions = new Float32Array(vertexCount * 3)
  const normals = hasNormals ? new Float32Array(vertexCount * 3) : undefined
  const uvs = hasUvs ? new Float32Array(vertexCount * 2) : undefined
  const colors = hasColors ? new Float32Array(vertexCount * 4).fill(1) : undefined
  const groups: ExportGroup[] = []
  let base = 0
  for (const { prim, triangles, lines } of kept) {
    const count = prim.getAttribute('POSITION')!.getCount()
    copyAttribute(prim.getAttribute('POSITION'), positions, base, 3)
    if (normals) copyAttribute(prim.getAttribute('NORMAL'), normals, base, 3)
    if (uvs) copyAttribute(prim.getAttribute('TEXCOORD_0'), uvs, base, 2)
    if (colors) copyAttribute(prim.getAttribute('COLOR_0'), colors, base, 4)
    groups.push({
      material: exportMaterial(prim.getMaterial()),
      triangles: offsetIndices(triangles, base),
      lines: offsetIndices(lines, base),
    })
    base += count
  }
  return { index, name: mesh.getName() || `mesh_${index}`, positions, normals, uvs, colors, groups }
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
  const element: number[] = []
  const width = accessor.getElementSize()
  for (let i = 0; i < accessor.getCount(); i++) {
    accessor.getElement(i, element)
    for (let c = 0; c < Math.min(width, size); c++) target[(base + i) * size + c] = element[c]!
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
