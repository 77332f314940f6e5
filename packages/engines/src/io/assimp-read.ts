import type { Document, GLTF, JSONDocument } from '@gltf-transform/core'
import { weldBitwise } from '../geometry/weld-bitwise.ts'
import { errorMessage, ModelInputError } from '../errors.ts'
import type { Platform } from '../platform.ts'
import { ASSIMP_INPUT_LIMITS, checkDaeInput, checkFbxInput, decodeXmlText, type AssimpInputLimits } from './assimp-input-limits.ts'
import { discardAssimp, loadAssimp, releaseLargeAssimpHeap } from './assimp-module.ts'
import { daeWorkaround } from './dae-workarounds.ts'
import { noteForeignTexture } from './foreign-images.ts'
import { foreignTextureNote, imageStem, readerImage, unusableImageNote } from './image-files.ts'
import { decodeUriSafely, type ResolveFile } from './upload-files.ts'

/** Options of the FBX and COLLADA readers. */
export interface AssimpReadOptions {
  /** Finds the files the model references (its textures) among the upload's other files (a zip's entries). */
  resolve?: ResolveFile
  limits?: AssimpInputLimits
  /** Files assimp must read beside the model (a glTF 1.0 file's buffers), under the names the model gives them. */
  companions?: Record<string, Uint8Array>
}

/** glTF-Transform's resource key for a GLB's binary chunk. */
const GLB_BUFFER = '@glb.bin'

/** Formats read through assimp: the name the model is handed to it under, and the format's name in messages. */
const ASSIMP_FORMATS = {
  fbx: { file: 'model.fbx', label: 'FBX' },
  dae: { file: 'model.dae', label: 'DAE' },
  gltf1: { file: 'model.gltf', label: 'glTF 1.0' },
} as const

/** A format read through assimp. */
export type AssimpFormat = keyof typeof ASSIMP_FORMATS

/**
 * Reads an FBX, COLLADA or glTF 1.0 file into a Document through assimp (WASM): assimp imports the
 * scene (triangulated) and exports it as GLB, which the platform's IO reads back. Afterwards, images
 * glTF cannot hold are converted (TGA and BMP → PNG) or dropped, and vertices are welded (assimp's export
 * unwelds them). A glTF 1.0 file's bounds are checked by its reader (gltf1.ts) before this.
 */
export async function readWithAssimp(
  platform: Platform,
  bytes: Uint8Array,
  format: AssimpFormat,
  options: AssimpReadOptions = {},
): Promise<Document> {
  const limits = options.limits ?? ASSIMP_INPUT_LIMITS
  if (format === 'fbx') checkFbxInput(bytes, limits)
  else if (format === 'dae') checkDaeInput(bytes, limits)
  const label = ASSIMP_FORMATS[format].label
  const notes: string[] = []
  const glb = await convertWithWorkarounds(platform, format === 'dae' ? utf16ToUtf8(bytes) : bytes, format, options.companions ?? {}, notes)
  const jsonDoc = splitGlb(glb)
  // A model uploaded alone (no resolver: not from a zip) cannot have its textures beside it: the note says how to send them.
  const extension = ASSIMP_FORMATS[format].file.split('.').pop()
  const alone = options.resolve ? '' : ` (a .${extension} uploaded alone brings no other file: upload a zip of it and its textures)`
  const { dropped, foreign } = attachImages(jsonDoc, options.resolve ?? (() => undefined), (note) => notes.push(note), alone)
  const doc = await platform.io.readJSON(jsonDoc).catch((error: unknown) => {
    throw new ModelInputError(`could not read the ${label} file (assimp's glTF hand-over is invalid: ${errorMessage(error)})`)
  })
  for (const note of notes) doc.getLogger().warn(`[${format}] ${note}`)
  for (const texture of doc.getRoot().listTextures()) {
    if (dropped.has(texture.getURI())) texture.dispose()
    const kept = foreign.get(texture.getURI())
    // Its GIF, TIFF or AVIF is decoded after the read (decode-foreign-textures.ts), its notes worded as here.
    if (kept) noteForeignTexture(texture, foreignTextureNote(format, kept.name, kept.bytes))
  }
  await doc.transform(weldBitwise())
  return doc
}

/** assimp's own word for why a conversion failed (`import_error`, `export_error`), for the workarounds to act on. */
class AssimpFailure extends ModelInputError {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message)
  }
}

/** Converts, and when assimp fails on a COLLADA file for a reason dae-workarounds.ts knows, tries the changed file. */
async function convertWithWorkarounds(
  platform: Platform,
  bytes: Uint8Array,
  format: AssimpFormat,
  companions: Record<string, Uint8Array>,
  notes: string[],
): Promise<Uint8Array<ArrayBuffer>> {
  let input = bytes
  for (;;) {
    try {
      return await convertToGlb(platform, input, format, companions)
    } catch (error) {
      const retry = format === 'dae' && error instanceof AssimpFailure ? daeWorkaround(input, error.code) : undefined
      if (!retry) throw error
      input = retry.bytes
      if (retry.note) notes.push(retry.note)
    }
  }
}

/**
 * Imports the model with only the companions it cannot do without (a glTF 1.0 file's buffers):
 * assimp only records the paths of external textures (its GLB keeps them as URIs, resolved
 * afterwards by {@link attachImages}), so handing it the other files would only cost their copy
 * into WASM (a few MB/s) and let assimp try each as the model when the first fails.
 */
async function convertToGlb(
  platform: Platform,
  bytes: Uint8Array,
  format: AssimpFormat,
  companions: Record<string, Uint8Array>,
): Promise<Uint8Array<ArrayBuffer>> {
  const { file: name, label } = ASSIMP_FORMATS[format]
  const ajs = await loadAssimp(platform)
  const list = new ajs.FileList()
  try {
    list.AddFile(name, bytes)
    for (const [companion, content] of Object.entries(companions)) list.AddFile(companion, content)
    const result = ajs.ConvertFileList(list, 'glb2')
    try {
      if (!result.IsSuccess() || result.FileCount() === 0) {
        const code = result.GetErrorCode()
        throw new AssimpFailure(`could not read the ${label} file (assimp: ${code.replace(/_/g, ' ')})`, code)
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
    if (error instanceof WebAssembly.RuntimeError || /abort/i.test(errorMessage(error))) {
      // An aborted Emscripten module refuses every later call: load a fresh one next time.
      discardAssimp(platform)
      throw new ModelInputError(`could not read the ${label} file (assimp aborted: ${errorMessage(error)})`)
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
 * assimp's GLB keeps images it cannot embed as URIs (a COLLADA file's textures, an FBX file's
 * external ones) and embeds images in their source format (FBX may hold TGA). Finds external images
 * through `resolve`, turns TGA and BMP into PNG, names each image after its file, and returns the URIs of
 * images that stay unusable; their textures are dropped, with a note naming the file (and, for a
 * file missing, `missingHint`). A GIF, TIFF or AVIF is kept as found, for the pass after the read
 * (decode-foreign-textures.ts); `foreign` holds, by URI, its name for the notes and its bytes.
 */
function attachImages(
  jsonDoc: JSONDocument,
  resolve: ResolveFile,
  note: (text: string) => void,
  missingHint: string,
): { dropped: Set<string>; foreign: Map<string, { name: string; bytes: Uint8Array }> } {
  const dropped = new Set<string>()
  const foreign = new Map<string, { name: string; bytes: Uint8Array }>()
  const usedUris = new Set<string>()
  const { json } = jsonDoc
  json.images?.forEach((image, index) => {
    const reference = image.uri
    const source = imageSource(jsonDoc, image, resolve)
    if (!source) {
      if (reference === undefined) return
      note(`texture "${decodeUriSafely(reference)}" is not in the upload; dropped${missingHint}`)
      image.uri = `missing-${index}`
      jsonDoc.resources[image.uri] = new Uint8Array(0)
      dropped.add(image.uri)
      return
    }
    const label = reference ?? image.name ?? `image ${index}`
    const converted = readerImage(source)
    delete image.bufferView
    if (!converted) {
      note(unusableImageNote(decodeUriSafely(label), source))
      image.uri = `unusable-${index}`
      jsonDoc.resources[image.uri] = new Uint8Array(0)
      dropped.add(image.uri)
      return
    }
    if (converted.note) note(`texture "${decodeUriSafely(label)}" ${converted.note}`)
    // The file's own name, so that written outputs name the image as the author did (duckCM.png).
    const stem = imageStem(reference ?? image.name ?? '') || `image-${index}`
    const extension = converted.extension
    let uri = `${stem}.${extension}`
    if (usedUris.has(uri.toLowerCase())) uri = `${stem}-${index}.${extension}`
    usedUris.add(uri.toLowerCase())
    image.uri = uri
    // A GLB written later keeps no URI: the name carries the file's stem on.
    image.name ??= stem
    image.mimeType = converted.mimeType
    jsonDoc.resources[uri] = new Uint8Array(converted.bytes)
    if (converted.foreign) foreign.set(uri, { name: decodeUriSafely(label), bytes: source })
  })
  return { dropped, foreign }
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

/** An image's bytes: the file its URI names (through `resolve`), or its buffer view's. */
function imageSource(jsonDoc: JSONDocument, image: GLTF.IImage, resolve: ResolveFile): Uint8Array | undefined {
  if (image.uri !== undefined) return resolve(image.uri)
  return image.bufferView !== undefined ? bufferViewBytes(jsonDoc, image.bufferView) : undefined
}

function bufferViewBytes(jsonDoc: JSONDocument, index: number): Uint8Array<ArrayBuffer> | undefined {
  const view = jsonDoc.json.bufferViews?.[index]
  const buffer = view && jsonDoc.json.buffers?.[view.buffer]
  if (!view || !buffer) return undefined
  const data = buffer.uri !== undefined ? jsonDoc.resources[buffer.uri] : jsonDoc.resources[GLB_BUFFER]
  return data?.subarray(view.byteOffset ?? 0, (view.byteOffset ?? 0) + view.byteLength)
}
