import { type Document, type GLTF, Logger, NodeIO } from '@gltf-transform/core'
import { ALL_EXTENSIONS } from '@gltf-transform/extensions'
import draco3d from 'draco3dgltf'
import { unzipSync } from 'fflate'
import { MeshoptDecoder } from 'meshoptimizer'

/** What the suite learns from a glTF result. */
export interface ModelFacts {
  extensionsUsed: string[]
  extensionsRequired: string[]
  triangles: number
  vertices: number
  /** Triangles that repeat an index (zero area by construction). */
  degenerate: number
}

// glTF primitive modes (the spec's numbers).
const TRIANGLES = 4
const TRIANGLE_STRIP = 5
const TRIANGLE_FAN = 6

let reader: Promise<NodeIO> | undefined

/** A glTF reader that decodes Draco and meshopt; created once per process. */
function modelReader(): Promise<NodeIO> {
  reader ??= (async () => {
    await MeshoptDecoder.ready
    return new NodeIO()
      .setLogger(new Logger(Logger.Verbosity.ERROR))
      .registerExtensions(ALL_EXTENSIONS)
      .registerDependencies({ 'draco3d.decoder': await draco3d.createDecoderModule(), 'meshopt.decoder': MeshoptDecoder })
  })()
  return reader
}

/** Counts triangles, vertices and index-degenerate triangles of every triangle primitive. */
function documentFacts(doc: Document): ModelFacts {
  let triangles = 0
  let vertices = 0
  let degenerate = 0
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      const count = prim.getAttribute('POSITION')?.getCount() ?? 0
      vertices += count
      const mode = prim.getMode()
      const indices = prim.getIndices()?.getArray()
      const n = indices ? indices.length : count
      if (mode === TRIANGLES) {
        triangles += Math.floor(n / 3)
        if (indices) {
          for (let i = 0; i + 2 < n; i += 3) {
            const [a, b, c] = [indices[i], indices[i + 1], indices[i + 2]]
            if (a === b || b === c || a === c) degenerate++
          }
        }
      } else if (mode === TRIANGLE_STRIP || mode === TRIANGLE_FAN) {
        triangles += Math.max(0, n - 2)
      }
    }
  }
  const root = doc.getRoot()
  return {
    extensionsUsed: root.listExtensionsUsed().map((e) => e.extensionName),
    extensionsRequired: root.listExtensionsRequired().map((e) => e.extensionName),
    triangles,
    vertices,
    degenerate,
  }
}

/** Opens a GLB (decoding Draco/meshopt) and returns its facts. */
export async function inspectGlb(bytes: Uint8Array): Promise<ModelFacts> {
  const io = await modelReader()
  const document = await io.binaryToJSON(bytes)
  readKhrMeshoptAsExt(document.json)
  return documentFacts(await io.readJSON(document))
}

/**
 * KHR_meshopt_compression (a Mos server writes it when asked, meshopt_extension=khr) is
 * EXT_meshopt_compression's JSON under the Khronos name, with version 1 of the vertex codec and a
 * colour filter allowed; meshoptimizer's decoder reads both codec versions and every filter. The
 * reader here knows EXT only, so a file that uses KHR alone is read with the names swapped.
 */
function readKhrMeshoptAsExt(json: GLTF.IGLTF): void {
  const [ext, khr] = ['EXT_meshopt_compression', 'KHR_meshopt_compression']
  if (!json.extensionsUsed?.includes(khr) || json.extensionsUsed.includes(ext)) return
  const rename = (names?: string[]) => names?.map((name) => (name === khr ? ext : name))
  json.extensionsUsed = rename(json.extensionsUsed)
  if (json.extensionsRequired) json.extensionsRequired = rename(json.extensionsRequired)
  for (const def of [...(json.bufferViews ?? []), ...(json.buffers ?? [])]) {
    if (!def.extensions?.[khr]) continue
    def.extensions[ext] = def.extensions[khr]
    delete def.extensions[khr]
  }
}

/** Entries a bundle may declare: a server under test cannot make the checker allocate more than this per file. */
const MAX_ENTRY_BYTES = 1024 * 1024 * 1024

/** The files of a zip (folders left out), through fflate; throws on anything it cannot read. */
export function unzipBundle(bytes: Uint8Array): Map<string, Uint8Array> {
  const files = unzipSync(bytes, {
    filter: (entry) => {
      if (entry.originalSize > MAX_ENTRY_BYTES) throw new Error(`ZIP entry ${entry.name} declares ${entry.originalSize} bytes`)
      return !entry.name.endsWith('/')
    },
  })
  return new Map(Object.entries(files))
}

/** Opens a .zip bundle holding a .gltf, its .bin and textures. */
export async function inspectGltfZip(bytes: Uint8Array): Promise<ModelFacts & { entries: string[] }> {
  const entries = unzipBundle(bytes)
  const names = [...entries.keys()]
  const gltfName = names.find((name) => name.toLowerCase().endsWith('.gltf'))
  if (!gltfName) throw new Error(`the bundle holds no .gltf (entries: ${names.join(', ') || 'none'})`)
  const dir = gltfName.includes('/') ? gltfName.slice(0, gltfName.lastIndexOf('/') + 1) : ''
  const resources: Record<string, Uint8Array<ArrayBuffer>> = {}
  for (const [name, data] of entries)
    if (name !== gltfName && name.startsWith(dir)) resources[name.slice(dir.length)] = new Uint8Array(data)
  const json = JSON.parse(new TextDecoder().decode(entries.get(gltfName)))
  const doc = await (await modelReader()).readJSON({ json, resources })
  return { ...documentFacts(doc), entries: names }
}

/** Whether bytes open as a zip (its local file header's signature). */
const isZip = (bytes: Uint8Array) => bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04

/**
 * A bundled result's one model file (the only entry with the extension) and every entry, after
 * checking that each file the model names (`names`) is in the bundle.
 */
function bundledModel(bytes: Uint8Array, extension: string, names: (model: Uint8Array) => string[], naming: string): Uint8Array {
  const entries = unzipBundle(bytes)
  const models = [...entries.keys()].filter((name) => name.toLowerCase().endsWith(`.${extension}`))
  if (models.length !== 1)
    throw new Error(`the bundle holds ${models.length} .${extension} files (entries: ${[...entries.keys()].join(', ') || 'none'})`)
  const model = new Uint8Array(entries.get(models[0]!)!)
  for (const name of names(model))
    if (!entries.has(name)) throw new Error(`the bundle lacks ${name}, which its .${extension} names in ${naming}`)
  return model
}

/**
 * Triangles of an OBJ result, bare or bundled: the contract names no shape for OBJ output, and an OBJ
 * whose materials need an .mtl and images cannot be one file, so a .zip holding one .obj (and the
 * .mtl its `mtllib` names) is read like the glTF bundle.
 */
export function countObjResultTriangles(bytes: Uint8Array): number {
  if (!isZip(bytes)) return countObjTriangles(new TextDecoder().decode(bytes))
  const mtllib = (obj: Uint8Array) => [...new TextDecoder().decode(obj).matchAll(/^mtllib\s+(.+?)\s*$/gm)].map((m) => m[1]!)
  return countObjTriangles(new TextDecoder().decode(bundledModel(bytes, 'obj', mtllib, 'mtllib')))
}

/**
 * Triangles of a PLY result, bare or bundled as OBJ's is: a PLY whose faces draw with images
 * (`comment TextureFile`, as MeshLab writes them) comes in a .zip with them.
 */
export function countPlyResultTriangles(bytes: Uint8Array): number {
  if (!isZip(bytes)) return countPlyTriangles(bytes)
  const textureFiles = (ply: Uint8Array) => {
    const head = new TextDecoder('latin1').decode(ply.subarray(0, Math.min(ply.byteLength, 8192))).split('end_header')[0]!
    return [...head.matchAll(/^comment\s+TextureFile\s+(.+?)\s*$/gm)].map((m) => m[1]!)
  }
  return countPlyTriangles(bundledModel(bytes, 'ply', textureFiles, 'comment TextureFile'))
}

/** Triangles of an OBJ: a face of k corners is k − 2 triangles. */
export function countObjTriangles(text: string): number {
  let triangles = 0
  for (const line of text.split(/\r?\n/)) {
    const parts = line.trim().split(/\s+/)
    if (parts[0] === 'f') triangles += Math.max(0, parts.length - 3)
  }
  return triangles
}

/** Triangles of an STL, binary (header count, checked against the length) or ASCII. */
export function countStlTriangles(bytes: Uint8Array): number {
  const head = new TextDecoder().decode(bytes.subarray(0, Math.min(bytes.byteLength, 512)))
  if (bytes.byteLength >= 84) {
    const count = new DataView(bytes.buffer, bytes.byteOffset).getUint32(80, true)
    if (84 + count * 50 === bytes.byteLength) return count
  }
  if (/^\s*solid/.test(head)) return (new TextDecoder().decode(bytes).match(/\bfacet\s+normal\b/g) ?? []).length
  throw new Error('neither binary STL (length does not match the triangle count) nor ASCII STL')
}

const PLY_SIZES: Record<string, number> = {
  char: 1,
  int8: 1,
  uchar: 1,
  uint8: 1,
  short: 2,
  int16: 2,
  ushort: 2,
  uint16: 2,
  int: 4,
  int32: 4,
  uint: 4,
  uint32: 4,
  float: 4,
  float32: 4,
  double: 8,
  float64: 8,
}

interface PlyElement {
  name: string
  count: number
  properties: { type: string; list?: { countType: string; itemType: string } }[]
}

/** Triangles of a PLY (ASCII or binary): a face of k corners is k − 2 triangles. */
export function countPlyTriangles(bytes: Uint8Array): number {
  const { format, elements, body } = readPlyHeader(bytes)
  const faces = elements.find((e) => e.name === 'face')
  if (!faces) throw new Error('no face element')
  if (format === 'ascii') return countAsciiPlyTriangles(body, elements, faces)
  const little = format === 'binary_little_endian'
  if (!little && format !== 'binary_big_endian') throw new Error(`unknown PLY format "${format}"`)
  return countBinaryPlyTriangles(body, elements, faces, little)
}

/** The header's format and elements, and the bytes after it. */
function readPlyHeader(bytes: Uint8Array): { format: string; elements: PlyElement[]; body: Uint8Array } {
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, Math.min(bytes.byteLength, 8192)))
  if (!head.startsWith('ply')) throw new Error('does not start with "ply"')
  const end = /end_header\r?\n/.exec(head)
  if (!end) throw new Error('no end_header')
  const elements: PlyElement[] = []
  let format = ''
  for (const line of head.slice(0, end.index).split(/\r?\n/)) {
    const parts = line.trim().split(/\s+/)
    if (parts[0] === 'format') format = parts[1] ?? ''
    if (parts[0] === 'element') elements.push({ name: parts[1]!, count: Number(parts[2]), properties: [] })
    if (parts[0] === 'property') {
      const element = elements.at(-1)
      if (!element) throw new Error('a property before any element')
      element.properties.push(
        parts[1] === 'list' ? { type: 'list', list: { countType: parts[2]!, itemType: parts[3]! } } : { type: parts[1]! },
      )
    }
  }
  return { format, elements, body: bytes.subarray(end.index + end[0].length) }
}

/** ASCII: one line per element item; a face line starts with its corner count. */
function countAsciiPlyTriangles(body: Uint8Array, elements: readonly PlyElement[], faces: PlyElement): number {
  const lines = new TextDecoder()
    .decode(body)
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '')
  let offset = 0
  for (const element of elements) {
    if (element === faces) {
      let triangles = 0
      for (const line of lines.slice(offset, offset + element.count)) triangles += Math.max(0, Number(line.trim().split(/\s+/)[0]) - 2)
      return triangles
    }
    offset += element.count
  }
  return 0
}

/** Binary: walks every element before the faces by its property sizes, each list by its count. */
function countBinaryPlyTriangles(body: Uint8Array, elements: readonly PlyElement[], faces: PlyElement, little: boolean): number {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength)
  const readCount = (type: string, at: number) => {
    const size = PLY_SIZES[type]
    if (size === 1) return view.getUint8(at)
    if (size === 2) return view.getUint16(at, little)
    if (size === 4) return view.getUint32(at, little)
    throw new Error(`unsupported list count type ${type}`)
  }
  let triangles = 0
  let at = 0
  for (const element of elements) {
    for (let i = 0; i < element.count; i++) {
      for (const property of element.properties) {
        if (property.list) {
          const n = readCount(property.list.countType, at)
          at += PLY_SIZES[property.list.countType]! + n * (PLY_SIZES[property.list.itemType] ?? NaN)
          if (element === faces) triangles += Math.max(0, n - 2)
        } else {
          at += PLY_SIZES[property.type] ?? NaN
        }
        if (!(at <= body.byteLength)) throw new Error(`the ${element.name} data runs past the end of the file`)
      }
    }
    if (element === faces) return triangles
  }
  return triangles
}
