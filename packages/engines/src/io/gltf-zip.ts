import type { Document, NodeIO } from '@gltf-transform/core'
import { ModelInputError } from '../errors.ts'
import { readGltf } from './gltf.ts'
import type { ReadOptions } from './limits.ts'
import { asInputError, checkGltfAllocation } from './gltf-limits.ts'
import { assertJsonDepth } from './json-depth.ts'
import { readObj } from './obj.ts'
import { unzipSafely, zipFiles, zipLimits, type ZipLevel } from './zip.ts'

/** Reads a model of another format found inside the zip (registry lookup, passed in to avoid an import cycle). */
export type ReadInner = (format: string, bytes: Uint8Array) => Promise<Document>

/** Model files looked for in an uploaded zip, in order of preference. */
const MODEL_EXTENSIONS = ['gltf', 'glb', 'obj', 'fbx', 'dae', 'ply', 'stl']

/**
 * Reads a `.zip` upload: a `.gltf` with its `.bin` and textures, an `.obj` with its `.mtl` and
 * textures, or any other single model file the registry reads. Entries are unpacked through
 * `unzipSafely` (confined, size-capped). File references resolve relative to the model's folder,
 * then by name anywhere in the archive (case-insensitive), since exporters disagree on both.
 */
export async function readZip(io: NodeIO, bytes: Uint8Array, options: ReadOptions, readInner: ReadInner): Promise<Document> {
  const files = unzipSafely(bytes, zipLimits(options))
  const models = [...files.keys()].filter((path) => MODEL_EXTENSIONS.includes(extensionOf(path)))
  models.sort((a, b) => MODEL_EXTENSIONS.indexOf(extensionOf(a)) - MODEL_EXTENSIONS.indexOf(extensionOf(b)) || depth(a) - depth(b))
  const model = models[0]
  if (!model) throw new ModelInputError(`zip holds no model file (looked for ${MODEL_EXTENSIONS.map((e) => `.${e}`).join(', ')})`)
  const rivals = models.filter((path) => extensionOf(path) === extensionOf(model) && depth(path) === depth(model))
  if (rivals.length > 1) {
    throw new ModelInputError(
      `zip holds ${rivals.length} .${extensionOf(model)} models (${rivals.slice(0, 3).join(', ')}${rivals.length > 3 ? ', ...' : ''}): upload one model per zip`,
    )
  }
  const resolve = resolver(files, model)
  const format = extensionOf(model)
  if (format === 'gltf') {
    const json = parseJson(files.get(model)!)
    checkGltfAllocation(json, options)
    const resources: Record<string, Uint8Array> = {}
    for (const item of [...(json.buffers ?? []), ...(json.images ?? [])]) {
      const uri = item.uri
      if (typeof uri !== 'string' || uri.startsWith('data:')) continue
      const found = resolve(uri)
      if (found) resources[uri] = found
    }
    return asInputError(() => readGltf(io, files.get(model)!, resources))
  }
  if (format === 'obj') return readObj(files.get(model)!, { ...options, resolve })
  return readInner(format, files.get(model)!)
}

/** Looks files up relative to the model's folder, then by base name anywhere, ignoring case. */
function resolver(files: Map<string, Uint8Array>, model: string) {
  const folder = model.includes('/') ? model.slice(0, model.lastIndexOf('/') + 1) : ''
  const byLowerPath = new Map<string, Uint8Array>()
  const byLowerName = new Map<string, Uint8Array>()
  for (const [path, bytes] of files) {
    byLowerPath.set(path.toLowerCase(), bytes)
    byLowerName.set(path.slice(path.lastIndexOf('/') + 1).toLowerCase(), bytes)
  }
  return (reference: string): Uint8Array | undefined => {
    const name = safeDecode(reference.replace(/\\/g, '/').replace(/^(\.\/)+/, ''))
    const joined = normalize(folder + name)
    return (
      files.get(joined) ?? byLowerPath.get(joined.toLowerCase()) ?? byLowerName.get(name.slice(name.lastIndexOf('/') + 1).toLowerCase())
    )
  }
}

function safeDecode(uri: string): string {
  try {
    return decodeURIComponent(uri)
  } catch {
    return uri
  }
}

function normalize(path: string): string {
  const out: string[] = []
  for (const part of path.split('/')) {
    if (part === '..') out.pop()
    else if (part !== '.' && part !== '') out.push(part)
  }
  return out.join('/')
}

function extensionOf(path: string): string {
  const dot = path.lastIndexOf('.')
  return dot < 0 ? '' : path.slice(dot + 1).toLowerCase()
}

function depth(path: string): number {
  return path.split('/').length
}

interface GltfJsonLike {
  buffers?: { uri?: unknown }[]
  images?: { uri?: unknown }[]
  accessors?: unknown[]
}

function parseJson(bytes: Uint8Array): GltfJsonLike {
  try {
    const text = new TextDecoder().decode(bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes)
    assertJsonDepth(text, 'glTF JSON in zip')
    return JSON.parse(text) as GltfJsonLike
  } catch (error) {
    if (error instanceof ModelInputError) throw error
    throw new ModelInputError(`invalid glTF JSON in zip: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/**
 * Writes `.gltf` output as a zip: `model.gltf`, `model.bin` and the textures beside them, the
 * layout every glTF tool opens after unpacking. Images are stored (already compressed); JSON and
 * binary are deflated (the binary at level 1: geometry gains little from more).
 */
export async function writeGltfZip(io: NodeIO, doc: Document): Promise<Uint8Array> {
  // URIs kept from the input could point outside the archive ("../tex.png"): keep base names only.
  for (const item of [...doc.getRoot().listTextures(), ...doc.getRoot().listBuffers()]) {
    const uri = item.getURI()
    if (uri && !uri.startsWith('data:')) item.setURI(uri.replace(/^.*[\\/]/, '').replace(/^\.+/, '') || '')
  }
  const { json, resources } = await io.writeJSON(doc, { basename: 'model' })
  const entries: Record<string, { bytes: Uint8Array; level: ZipLevel }> = {
    'model.gltf': { bytes: new TextEncoder().encode(JSON.stringify(json, null, 2)), level: 6 },
  }
  for (const [uri, bytes] of Object.entries(resources)) {
    const name = safeDecode(uri)
    // Binary geometry deflates ~10-20% at level 1 and barely more at 6 for several times the time.
    entries[name] = { bytes, level: /\.bin$/i.test(name) ? 1 : 0 }
  }
  return zipFiles(entries)
}
