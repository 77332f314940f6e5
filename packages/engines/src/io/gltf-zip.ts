import type { Document, NodeIO } from '@gltf-transform/core'
import { errorMessage, ModelInputError } from '../errors.ts'
import { compactGltfJson } from './compact-json.ts'
import { readGltf } from './gltf.ts'
import { isGltf1Json } from './gltf1.ts'
import type { ReadOptions } from './limits.ts'
import { asInputError, checkGltfAllocation } from './gltf-limits.ts'
import { gltfJsonText, uploadedFormat } from './gltf-text.ts'
import { createUploadResolver, decodeUriSafely, type ResolveFile } from './upload-files.ts'
import { unzipSafely, zipFiles, zipLimits, type ZipLevel } from './zip.ts'

/**
 * Reads a model of another format found inside the zip, finding the files it references through
 * `resolve` (registry lookup, passed in to avoid an import cycle).
 */
export type ReadInner = (format: string, bytes: Uint8Array, resolve: ResolveFile) => Promise<Document>

/** Model files looked for in an uploaded zip, in order of preference. */
const MODEL_EXTENSIONS = ['gltf', 'glb', 'obj', 'fbx', 'dae', 'ply', 'stl']

/** The file of a container that holds the model: its path there, its format (the extension) and its bytes. */
export interface ModelFile {
  path: string
  format: string
  bytes: Uint8Array
}

/**
 * Reads a `.zip` upload: a `.gltf` with its `.bin` and textures, an `.obj` with its `.mtl` and
 * textures, a `.dae` or `.fbx` with the textures it references, or any other single model file the
 * registry reads. Entries are unpacked through `unzipSafely` (confined, size-capped); every reader
 * finds the files its model references through one `createUploadResolver`. `onModelFile` is told
 * which entry is the model before it is read.
 */
export async function readZip(
  io: NodeIO,
  bytes: Uint8Array,
  options: ReadOptions,
  readInner: ReadInner,
  onModelFile?: (file: ModelFile) => void,
): Promise<Document> {
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
  // A GLB named .gltf is read as the GLB it is, as on its own (uploadedFormat); readInner's reader says so.
  const named = extensionOf(model)
  // Every model's textures are found through the files; a GIF, TIFF or AVIF among them is decoded after
  // the read, from the model's textures (decode-foreign-textures.ts): the zip's other files never are.
  const resolve = createUploadResolver(files, model)
  const format = uploadedFormat(named, files.get(model)!)
  onModelFile?.({ path: model, format, bytes: files.get(model)! })
  if (format === 'gltf') {
    const json = parseJson(files.get(model)!)
    // glTF 1.0 finds its buffers and images through the resolver, as assimp's other formats do.
    if (isGltf1Json(json)) return readInner(format, files.get(model)!, resolve)
    checkGltfAllocation(json, options)
    const resources: Record<string, Uint8Array> = {}
    for (const item of [...(json.buffers ?? []), ...(json.images ?? [])]) {
      const uri = item.uri
      if (typeof uri !== 'string' || uri.startsWith('data:')) continue
      const found = resolve(uri)
      if (found) resources[uri] = found
    }
    const gltf = files.get(model)!
    return asInputError(() => readGltf(io, gltf, resources), { bytes: gltf, resources })
  }
  return readInner(named, files.get(model)!, resolve)
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
    return JSON.parse(gltfJsonText(bytes, 'glTF JSON in zip')) as GltfJsonLike
  } catch (error) {
    if (error instanceof ModelInputError) throw error
    throw new ModelInputError(`invalid glTF JSON in zip: ${errorMessage(error)}`)
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
  compactGltfJson(json)
  const entries: Record<string, { bytes: Uint8Array; level: ZipLevel }> = {
    'model.gltf': { bytes: new TextEncoder().encode(JSON.stringify(json, null, 2)), level: 6 },
  }
  for (const [uri, bytes] of Object.entries(resources)) {
    const name = decodeUriSafely(uri)
    // Binary geometry deflates ~10-20% at level 1 and barely more at 6 for several times the time.
    entries[name] = { bytes, level: /\.bin$/i.test(name) ? 1 : 0 }
  }
  return zipFiles(entries)
}
