import type { Document, JSONDocument } from '@gltf-transform/core'
import { weldBitwise } from '../geometry/weld-bitwise.ts'
import { ModelInputError } from '../errors.ts'
import type { Platform } from '../platform.ts'
import { ASSIMP_INPUT_LIMITS, checkDaeInput, checkFbxInput, decodeXmlText, type AssimpInputLimits } from './assimp-input-limits.ts'
import { discardAssimp, loadAssimp, releaseLargeAssimpHeap } from './assimp-module.ts'
import { encodePng } from './png-encode.ts'
import { decodeTga } from './tga.ts'

/** Options of the FBX and COLLADA readers. */
export interface AssimpReadOptions {
  /**
   * Files beside the model (textures it references, e.g. the other entries of an uploaded zip), by
   * name; matched to the model's texture paths by base name, case-insensitively.
   */
  resources?: Record<string, Uint8Array>
  limits?: AssimpInputLimits
}

/** glTF-Transform's resource key for a GLB's binary chunk. */
const GLB_BUFFER = '@glb.bin'

/** Formats read through assimp, with the name the model is handed to it under. */
const MAIN_FILE: Record<'fbx' | 'dae', string> = { fbx: 'model.fbx', dae: 'model.dae' }

/**
 * Reads an FBX or COLLADA file into a Document through assimp (WASM): assimp imports the scene
 * (triangulated) and exports it as GLB, which the platform's IO reads back. Afterwards, images
 * glTF cannot hold are converted (TGA → PNG) or dropped, and vertices are welded (assimp's export
 * unwelds them).
 */
export async function readWithAssimp(
  platform: Platform,
  bytes: Uint8Array,
  format: 'fbx' | 'dae',
  options: AssimpReadOptions = {},
): Promise<Document> {
  const limits = options.limits ?? ASSIMP_INPUT_LIMITS
  if (format === 'fbx') checkFbxInput(bytes, limits)
  else checkDaeInput(bytes, limits)
  const resources = options.resources ?? {}
  const glb = await convertToGlb(platform, format === 'dae' ? utf16ToUtf8(bytes) : bytes, format)
  const jsonDoc = splitGlb(glb)
  const notes: string[] = []
  const dropped = attachImages(jsonDoc, resources, (note) => notes.push(note))
  const doc = await platform.io.readJSON(jsonDoc).catch((error: unknown) => {
    throw new ModelInputError(`could not read the ${format.toUpperCase()} file (assimp's glTF hand-over is invalid: ${messageOf(error)})`)
  })
  for (const note of notes) doc.getLogger().warn(`[${format}] ${note}`)
  for (const texture of doc.getRoot().listTextures()) {
    if (dropped.has(texture.getURI())) texture.dispose()
  }
  await doc.transform(weldBitwise())
  return doc
}

/**
 * Imports the model alone: assimp only records the paths of external textures (its GLB keeps them
 * as URIs, resolved afterwards by {@link attachImages}), so handing it the other files would only
 * cost their copy into WASM (a few MB/s) and let assimp try each as the model when the first fails.
 */
async function convertToGlb(platform: Platform, bytes: Uint8Array, format: 'fbx' | 'dae'): Promise<Uint8Array<ArrayBuffer>> {
  const ajs = await loadAssimp(platform)
  const list = new ajs.FileList()
  try {
    list.AddFile(MAIN_FILE[format], bytes)
    const result = ajs.ConvertFileList(list, 'glb2')
    try {
      if (!result.IsSuccess() || result.FileCount() === 0) {
        throw new ModelInputError(`could not read the ${format.toUpperCase()} file (assimp: ${result.GetErrorCode().replace(/_/g, ' ')})`)
      }
      const file = result.GetFile(0)
      // Copy out of the WASM heap before the result is freed.
      const glb = new Uint8Array(file.GetContent())
      file.delete()
      return glb
    } finally {
      result.delete()
    }
  } catch (error) {
    if (error instanceof WebAssembly.RuntimeError || /abort/i.test(messageOf(error))) {
      // An aborted Emscripten module refuses every later call: load a fresh one next time.
      discardAssimp(platform)
      throw new ModelInputError(`could not read the ${format.toUpperCase()} file (assimp aborted: ${messageOf(error)})`)
    }
    throw error
  } finally {
    try {
      list.delete()
    } catch {
      // the module aborted; its objects are gone with it
    }
    releaseLargeAssimpHeap(platform, ajs)
  }
}

/**
 * assimp's GLB keeps images it cannot embed as URIs (a COLLADA file's textures) and embeds images
 * in their source format (FBX may hold TGA). Supplies external images from `resources`, turns TGA
 * into PNG, and returns the URIs of images that stay unusable; their textures are dropped.
 */
function attachImages(jsonDoc: JSONDocument, resources: Record<string, Uint8Array>, note: (text: string) => void): Set<string> {
  const byName = new Map(Object.entries(resources).map(([name, content]) => [baseName(name).toLowerCase(), new Uint8Array(content)]))
  const dropped = new Set<string>()
  const { json } = jsonDoc
  json.images?.forEach((image, index) => {
    let bytes: Uint8Array<ArrayBuffer> | undefined
    if (image.uri !== undefined) {
      const uri = decodeURIComponentSafe(image.uri)
      bytes = byName.get(baseName(uri).toLowerCase())
      if (!bytes) {
        note(`texture "${uri}" is not in the upload; dropped`)
        image.uri = `missing-${index}`
        jsonDoc.resources[image.uri] = new Uint8Array(0)
        dropped.add(image.uri)
        return
      }
    } else if (image.bufferView !== undefined) {
      bytes = bufferViewBytes(jsonDoc, image.bufferView)
    }
    if (!bytes) return
    const mimeType = sniffImage(bytes)
    if (mimeType) {
      if (image.uri !== undefined) {
        image.uri = `image-${index}.${mimeType.split('/')[1]}`
        jsonDoc.resources[image.uri] = bytes
      }
      image.mimeType = mimeType
      return
    }
    const tga = decodeTga(bytes)
    const name = image.uri ?? image.name ?? `image ${index}`
    image.uri = `image-${index}.png`
    delete image.bufferView
    if (tga) {
      jsonDoc.resources[image.uri] = encodePng(tga)
      image.mimeType = 'image/png'
      return
    }
    note(`texture "${name}" is in a format glTF cannot hold; dropped`)
    jsonDoc.resources[image.uri] = new Uint8Array(0)
    dropped.add(image.uri)
  })
  return dropped
}

/**
 * assimp 5.2's XML reader fails on UTF-16 COLLADA (Debian's CLI too); SketchUp and some Windows
 * tools write it. Re-encoded as UTF-8, with the declaration changed to match, it reads.
 */
function utf16ToUtf8(bytes: Uint8Array): Uint8Array {
  const utf16 = (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)
  if (!utf16) return bytes
  const text = decodeXmlText(bytes)
    .replace(/^\uFEFF/, '')
    .replace(/^(<\?xml[^>]*encoding\s*=\s*["'])utf-16(?:le|be)?(["'])/i, '$1UTF-8$2')
  return new TextEncoder().encode(text)
}

/**
 * Splits assimp's GLB into JSON and binary chunk by hand: glTF-Transform's binaryToJSON refuses
 * GLBs with external image URIs, which assimp writes for a COLLADA file's textures.
 */
function splitGlb(glb: Uint8Array<ArrayBuffer>): JSONDocument {
  const view = new DataView(glb.buffer, glb.byteOffset, glb.byteLength)
  const resources: JSONDocument['resources'] = {}
  let json: JSONDocument['json'] | undefined
  for (let offset = 12; offset + 8 <= glb.byteLength; ) {
    const length = view.getUint32(offset, true)
    const type = view.getUint32(offset + 4, true)
    const chunk = glb.subarray(offset + 8, offset + 8 + length)
    if (type === 0x4e4f534a) json = JSON.parse(new TextDecoder().decode(chunk)) as JSONDocument['json']
    else if (type === 0x004e4942) resources[GLB_BUFFER] = chunk
    offset += 8 + length
  }
  if (!json) throw new Error('assimp produced a GLB without JSON')
  // assimp declares FB_ngon_encoding (a hint that faces were triangulated) that nothing reads.
  json.extensionsUsed = json.extensionsUsed?.filter((name) => name !== 'FB_ngon_encoding')
  if (json.extensionsUsed?.length === 0) delete json.extensionsUsed
  return { json, resources }
}

function bufferViewBytes(jsonDoc: JSONDocument, index: number): Uint8Array<ArrayBuffer> | undefined {
  const view = jsonDoc.json.bufferViews?.[index]
  const buffer = view && jsonDoc.json.buffers?.[view.buffer]
  if (!view || !buffer) return undefined
  const data = buffer.uri !== undefined ? jsonDoc.resources[buffer.uri] : jsonDoc.resources[GLB_BUFFER]
  return data?.subarray(view.byteOffset ?? 0, (view.byteOffset ?? 0) + view.byteLength)
}

/** The glTF image type of the bytes, from their magic numbers. */
export function sniffImage(bytes: Uint8Array): 'image/png' | 'image/jpeg' | 'image/webp' | 'image/ktx2' | undefined {
  if (bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47) return 'image/png'
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg'
  if (bytes.byteLength > 12 && String.fromCharCode(...bytes.subarray(8, 12)) === 'WEBP') return 'image/webp'
  if (bytes.byteLength > 12 && bytes[1] === 0x4b && bytes[2] === 0x54 && bytes[3] === 0x58 && bytes[5] === 0x32) return 'image/ktx2'
  return undefined
}

function baseName(path: string): string {
  return path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1)
}

function decodeURIComponentSafe(uri: string): string {
  try {
    return decodeURIComponent(uri)
  } catch {
    return uri
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
