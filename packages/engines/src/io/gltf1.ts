import type { Document } from '@gltf-transform/core'
import { errorMessage, ModelInputError } from '../errors.ts'
import type { Platform } from '../platform.ts'
import { ASSIMP_INPUT_LIMITS, type AssimpInputLimits } from './assimp-input-limits.ts'
import { readWithAssimp } from './assimp-read.ts'
import { decodeDataUri, type Entry, entries } from './gltf1-json.ts'
import { defaultSceneId } from './gltf1-nodes.ts'
import { type Gltf1Scene, restoreGltf1Scene } from './gltf1-scene.ts'
import { COMPONENT_BYTES, TYPE_COMPONENTS } from './gltf-ranges.ts'
import { isGlb } from './gltf.ts'
import { gltfJsonText } from './gltf-text.ts'
import type { ResolveFile } from './upload-files.ts'

/**
 * glTF 1.0 (2015–2017: collada2gltf, Cesium, early Sketchfab and Blender exports) as input. Its
 * collections are objects keyed by id, materials are GLSL techniques, and the binary form is the
 * KHR_binary_glTF container; glTF-Transform, gltfpack and glTF-Validator read 2.0 only. assimp's
 * glTF 1.0 importer reads it, so Mos reads it through assimp as it reads FBX and COLLADA, and every
 * operation then writes glTF 2.0 (or the target asked for).
 */

const GLB_MAGIC = 0x46546c67
const BINARY_HEADER_BYTES = 20
/** The id KHR_binary_glTF gives the buffer that is the container's body. */
const BODY_BUFFER = 'binary_glTF'

/** The parts of a glTF 1.0 JSON the reader reads, the scene's (gltf1-scene.ts) among them. */
interface Gltf1Json extends Gltf1Scene {
  asset?: { version?: unknown }
  buffers?: Record<string, Entry>
  images?: Record<string, Entry>
  shaders?: Record<string, Entry>
  extensionsUsed?: unknown
}

/** Top-level collections: objects keyed by id in 1.0, arrays in 2.0. */
const COLLECTIONS = ['meshes', 'accessors', 'bufferViews', 'buffers', 'nodes', 'materials']

/** True for binary glTF 1.0 (KHR_binary_glTF): the GLB magic with container version 1. */
export function isBinaryGltf1(bytes: Uint8Array): boolean {
  if (bytes.byteLength < 8) return false
  const view = new DataView(bytes.buffer, bytes.byteOffset, 8)
  return view.getUint32(0, true) === GLB_MAGIC && view.getUint32(4, true) === 1
}

/**
 * True when a parsed .gltf is glTF 1.0: none of its collections is an array (2.0's layout), and its
 * `asset.version` says 1 (collada2gltf wrote the number 1 as well as "1.0") or, without one, its
 * collections are objects keyed by id.
 */
export function isGltf1Json(json: unknown): boolean {
  if (typeof json !== 'object' || json === null) return false
  const collections = COLLECTIONS.map((key) => (json as Record<string, unknown>)[key])
  // A file laid out as 2.0 (arrays) is read as 2.0 whatever its version says; the validator says the rest.
  if (collections.some((value) => Array.isArray(value))) return false
  const version = (json as Gltf1Json).asset?.version
  if (version !== undefined) return /^1(\.|$)/.test(String(version))
  return collections.some((value) => typeof value === 'object' && value !== null)
}

/** True when glb or gltf bytes hold glTF 1.0 (what glTF-Validator, a 2.0 validator, has nothing to say about). */
export function isGltf1(bytes: Uint8Array): boolean {
  if (isBinaryGltf1(bytes)) return true
  // A 2.0 GLB is not decoded as text: only a .gltf's JSON says its version.
  if (isGlb(bytes)) return false
  try {
    return isGltf1Json(parseJson(bytes, 'glTF JSON'))
  } catch {
    return false
  }
}

/** Options of the glTF 1.0 reader. */
export interface Gltf1ReadOptions {
  /** Finds the files the model references (its .bin buffers and images) among the upload's other files. */
  resolve?: ResolveFile
  limits?: AssimpInputLimits
}

/**
 * Reads a glTF 1.0 file, JSON (.gltf) or binary (KHR_binary_glTF), into a Document. Its buffers and
 * images come embedded, from the binary body, or from `options.resolve` (a zip's entries); one that
 * is nowhere is refused, as for glTF 2.0. Node transforms, names and animations are restored from
 * the JSON (gltf1-scene.ts), and cameras and skins made there; what glTF 2.0 or assimp's importer does not carry (techniques
 * and their shaders) is said in the document's log, which the task's warnings take.
 *
 * ```ts
 * const doc = await readGltf1(platform, bytes, { resolve })
 * ```
 */
export async function readGltf1(platform: Platform, bytes: Uint8Array, options: Gltf1ReadOptions = {}): Promise<Document> {
  const limits = options.limits ?? ASSIMP_INPUT_LIMITS
  const { json, files } = isBinaryGltf1(bytes)
    ? unpackBinary(bytes)
    : { json: parseJson(bytes, 'glTF 1.0 JSON'), files: new Map<string, Uint8Array>() }
  if (!isGltf1Json(json)) throw new ModelInputError('invalid glTF 1.0: its JSON holds no glTF 1.0 asset')
  const resolve: ResolveFile = (uri) => files.get(uri) ?? options.resolve?.(uri)
  const { companions, buffers } = gatherBuffers(json, resolve)
  for (const [, image] of entries(json.images)) {
    if (typeof image.uri === 'string' && !image.uri.startsWith('data:') && !resolve(image.uri)) missingResource(image.uri)
  }
  // 1.0 leaves `scene` optional, and assimp's importer reads out of bounds without one (its WASM
  // aborts): it is given the scene Mos reads as the default, the first.
  const sceneId = defaultSceneId(json)
  if (sceneId !== undefined) json.scene = sceneId
  // A node naming the same mesh twice has assimp drop every mesh of the file; it draws it once.
  for (const [, node] of entries(json.nodes)) if (Array.isArray(node.meshes)) node.meshes = [...new Set(node.meshes)]
  // Without its cameras (gltf1-scene.ts makes them): assimp fails on a whole file with an orthographic one.
  const text = new TextEncoder().encode(JSON.stringify(json, (key, value) => (key === 'cameras' || key === 'camera' ? undefined : value)))
  const total = [...buffers.values()].reduce((sum, file) => sum + file.byteLength, text.byteLength)
  if (total > limits.maxInputBytes) {
    throw new ModelInputError(`glTF 1.0 file and buffers of ${total} bytes exceed the limit of ${limits.maxInputBytes} bytes`)
  }
  checkAccessors(json, buffers)
  const doc = await readWithAssimp(platform, text, 'gltf1', { resolve, limits, companions })
  const notes = restoreGltf1Scene(doc, json, buffers, resolve)
  for (const note of [...notes, ...notCarried(json, doc)]) doc.getLogger().warn(`[gltf 1.0] ${note}`)
  return doc
}

/** The JSON object of a .gltf or of a binary container's content. */
function parseJson(bytes: Uint8Array, what: string): Gltf1Json {
  const text = gltfJsonText(bytes, what)
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new ModelInputError(`invalid ${what}: ${errorMessage(error)}`)
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new ModelInputError(`invalid ${what}: not an object`)
  return json as Gltf1Json
}

/**
 * Opens a KHR_binary_glTF container into its JSON and the files it embeds: the body becomes the
 * buffer it stands for, and each image given by a buffer view becomes a file of its own, referenced
 * by URI (assimp's glTF 1.0 importer reads the JSON form only). Shaders are left out: nothing reads them.
 */
function unpackBinary(bytes: Uint8Array): { json: Gltf1Json; files: Map<string, Uint8Array> } {
  if (bytes.byteLength < BINARY_HEADER_BYTES)
    throw new ModelInputError(`truncated binary glTF 1.0: ${bytes.byteLength} bytes, less than its header`)
  const view = new DataView(bytes.buffer, bytes.byteOffset, BINARY_HEADER_BYTES)
  const length = view.getUint32(8, true)
  const contentLength = view.getUint32(12, true)
  const contentFormat = view.getUint32(16, true)
  if (length > bytes.byteLength)
    throw new ModelInputError(`truncated binary glTF 1.0: header declares ${length} bytes, file has ${bytes.byteLength}`)
  if (contentFormat !== 0) throw new ModelInputError(`invalid binary glTF 1.0: content format ${contentFormat} (0, JSON, is the only one)`)
  if (BINARY_HEADER_BYTES + contentLength > length) {
    throw new ModelInputError(`invalid binary glTF 1.0: header declares ${contentLength} bytes of JSON in a file of ${length}`)
  }
  const json = parseJson(bytes.subarray(BINARY_HEADER_BYTES, BINARY_HEADER_BYTES + contentLength), 'binary glTF 1.0 JSON')
  const body = bytes.subarray(BINARY_HEADER_BYTES + contentLength, length)
  const files = new Map<string, Uint8Array>()
  const bodyBuffer = json.buffers?.[BODY_BUFFER]
  if (bodyBuffer) {
    const name = `${BODY_BUFFER}.bin`
    bodyBuffer.uri = name
    files.set(name, body)
  }
  let index = 0
  for (const [id, image] of entries(json.images)) {
    const embedded = (image.extensions as Record<string, Entry> | undefined)?.KHR_binary_glTF
    if (!embedded) continue
    const source = json.bufferViews?.[String(embedded.bufferView)]
    if (!source || source.buffer !== BODY_BUFFER)
      throw new ModelInputError(`invalid binary glTF 1.0: image "${id}" names no buffer view of the body`)
    const start = Number(source.byteOffset ?? 0)
    const end = start + Number(source.byteLength)
    if (!(start >= 0 && end <= body.byteLength)) {
      throw new ModelInputError(`invalid binary glTF 1.0: image "${id}" lies past the body's ${body.byteLength} bytes`)
    }
    const name = `image-${index++}.${embedded.mimeType === 'image/jpeg' ? 'jpg' : 'png'}`
    image.uri = name
    files.set(name, body.subarray(start, end))
    delete (image.extensions as Record<string, Entry>).KHR_binary_glTF
  }
  delete json.shaders
  if (Array.isArray(json.extensionsUsed)) json.extensionsUsed = json.extensionsUsed.filter((name) => name !== 'KHR_binary_glTF')
  return { json, files }
}

/**
 * Each buffer's bytes by id (data URIs decoded), and the external ones as files for assimp, renamed
 * `buffer-<n>.bin` in the JSON (an author's relative path means nothing inside assimp's file list).
 */
function gatherBuffers(
  json: Gltf1Json,
  resolve: ResolveFile,
): { companions: Record<string, Uint8Array>; buffers: Map<string, Uint8Array> } {
  const companions: Record<string, Uint8Array> = {}
  const buffers = new Map<string, Uint8Array>()
  for (const [id, buffer] of entries(json.buffers)) {
    const uri = buffer.uri
    if (typeof uri !== 'string') throw new ModelInputError(`invalid glTF 1.0: buffer "${id}" has no uri`)
    if (uri.startsWith('data:')) {
      buffers.set(id, decodeDataUri(uri))
      continue
    }
    const found = resolve(uri) ?? missingResource(uri)
    const name = `buffer-${Object.keys(companions).length}.bin`
    buffer.uri = name
    companions[name] = found
    buffers.set(id, found)
  }
  return { companions, buffers }
}

function missingResource(uri: string): never {
  throw new ModelInputError(`external resource not available: "${uri}" (embed it, or upload a .glb or a .zip holding it)`)
}

/**
 * Each accessor must lie inside its buffer view, and each view inside its buffer's bytes: assimp
 * sizes its arrays from the declared counts before reading, so a count past the data would have it
 * allocate what the file does not hold (and a failed WASM allocation aborts the module).
 */
function checkAccessors(json: Gltf1Json, buffers: Map<string, Uint8Array>): void {
  for (const [id, view] of entries(json.bufferViews)) {
    const available = buffers.get(String(view.buffer))?.byteLength
    const end = offset(view.byteOffset, `buffer view "${id}"`) + Number(view.byteLength ?? 0)
    if (available === undefined) {
      throw new ModelInputError(`invalid glTF 1.0: buffer view "${id}" names buffer "${String(view.buffer)}", which does not exist`)
    }
    if (!(end <= available))
      throw new ModelInputError(`invalid glTF 1.0: buffer view "${id}" ends at byte ${end}, past the ${available} bytes of its buffer`)
  }
  for (const [id, accessor] of entries(json.accessors)) {
    const view = json.bufferViews?.[String(accessor.bufferView)]
    if (!view)
      throw new ModelInputError(
        `invalid glTF 1.0: accessor "${id}" names buffer view "${String(accessor.bufferView)}", which does not exist`,
      )
    const element = (COMPONENT_BYTES[Number(accessor.componentType)] ?? 4) * (TYPE_COMPONENTS[String(accessor.type)] ?? 1)
    const count = Number(accessor.count)
    const stride = offset(accessor.byteStride, `accessor "${id}"`) || element
    const end = count > 0 ? offset(accessor.byteOffset, `accessor "${id}"`) + stride * (count - 1) + element : 0
    if (!(count >= 0 && end <= Number(view.byteLength))) {
      throw new ModelInputError(
        `invalid glTF 1.0: accessor "${id}" reads ${String(accessor.count)} elements, past the ${String(view.byteLength)} bytes of its buffer view`,
      )
    }
  }
}

/** A byte offset or stride as declared (absent is 0); a negative or fractional one is refused. */
function offset(value: unknown, what: string): number {
  const n = value === undefined ? 0 : Number(value)
  if (!(Number.isInteger(n) && n >= 0))
    throw new ModelInputError(`invalid glTF 1.0: ${what} declares a byte offset or stride of ${String(value)}`)
  return n
}

/** The 1.0 extensions Mos reads: the binary container (unpacked before) and the common materials and lights. */
const READ_EXTENSIONS = new Set(['KHR_binary_glTF', 'KHR_materials_common'])

/** What the file holds that the document read through assimp does not, one note each. */
function notCarried(json: Gltf1Json, doc: Document): string[] {
  const root = doc.getRoot()
  const notes: string[] = []
  const unread = (Array.isArray(json.extensionsUsed) ? json.extensionsUsed : []).filter(
    (name): name is string => typeof name === 'string' && !READ_EXTENSIONS.has(name),
  )
  if (unread.length > 0) {
    notes.push(
      `extension(s) ${unread.map((name) => `"${name}"`).join(', ')} not read: what they add (an RTC centre, quantized vertices, technique data…) is not carried, and the model is read as if they were absent`,
    )
  }
  const techniques = Object.keys(json.techniques ?? {}).length
  if (techniques > 0) {
    notes.push(
      `${count(techniques, 'technique')} (GLSL shaders) not carried: glTF 2.0 has none; materials became PBR from their values (diffuse colour or texture → base colour, shininess → roughness; emission, blending and culling kept)`,
    )
  }
  const animations = Object.keys(json.animations ?? {}).length - root.listAnimations().length
  if (animations > 0)
    notes.push(`${count(animations, 'animation')} not carried: no channel of theirs targets a node and path glTF 2.0 animates`)
  const scenes = entries(json.scenes)
    .map(([id]) => id)
    .filter((id) => id !== defaultSceneId(json))
  if (scenes.length > 0) {
    notes.push(
      `${count(scenes.length, 'scene')} besides the default one not carried (${scenes.map((id) => `"${id}"`).join(', ')}): assimp's glTF 1.0 importer, which Mos reads glTF 1.0 through, reads the default scene only`,
    )
  }
  const cameras = Object.keys(json.cameras ?? {}).length - root.listCameras().length
  if (cameras > 0) notes.push(`${count(cameras, 'camera')} not carried: no node carries it, or its numbers describe no camera`)
  return notes
}

function count(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`
}
