import { Document, Logger, NodeIO } from '@gltf-transform/core'
import { ALL_EXTENSIONS } from '@gltf-transform/extensions'
import draco3d from 'draco3dgltf'
import { MeshoptDecoder } from 'meshoptimizer'
import { unzip } from './unzip.ts'

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
export function modelReader(): Promise<NodeIO> {
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
export function documentFacts(doc: Document): ModelFacts {
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
  return documentFacts(await (await modelReader()).readBinary(bytes))
}

/** Opens a .zip bundle holding a .gltf, its .bin and textures. */
export async function inspectGltfZip(bytes: Uint8Array): Promise<ModelFacts & { entries: string[] }> {
  const entries = unzip(bytes)
  const names = [...entries.keys()]
  const gltfName = names.find((name) => name.toLowerCase().endsWith('.gltf'))
  if (!gltfName) throw new Error(`the bundle holds no .gltf (entries: ${names.join(', ') || 'none'})`)
  const dir = gltfName.includes('/') ? gltfName.slice(0, gltfName.lastIndexOf('/') + 1) : ''
  const resources: Record<string, Uint8Array<ArrayBuffer>> = {}
  for (const [name, data] of entries) if (name !== gltfName && name.startsWith(dir)) resources[name.slice(dir.length)] = new Uint8Array(data)
  const json = JSON.parse(new TextDecoder().decode(entries.get(gltfName)))
  const doc = await (await modelReader()).readJSON({ json, resources })
  return { ...documentFacts(doc), entries: names }
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

/** Triangles of a PLY: read from the header's face element and, for ASCII, the face lines. */
export function countPlyTriangles(bytes: Uint8Array): number {
  const text = new TextDecoder('latin1').decode(bytes.subarray(0, Math.min(bytes.byteLength, 4096)))
  if (!text.startsWith('ply')) throw new Error('does not start with "ply"')
  const headerEnd = text.indexOf('end_header')
  if (headerEnd < 0) throw new Error('no end_header')
  const faces = /element\s+face\s+(\d+)/.exec(text.slice(0, headerEnd))
  if (!faces) throw new Error('no face element')
  const count = Number(faces[1])
  if (/format\s+ascii/.test(text)) {
    const body = new TextDecoder().decode(bytes).slice(headerEnd).split(/\r?\n/).slice(1)
    const vertexCount = Number(/element\s+vertex\s+(\d+)/.exec(text)?.[1] ?? 0)
    return body
      .slice(vertexCount, vertexCount + count)
      .reduce((sum, line) => sum + Math.max(0, Number(line.trim().split(/\s+/)[0]) - 2), 0)
  }
  return count
}
