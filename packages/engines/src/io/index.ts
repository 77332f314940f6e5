import type { Document, NodeIO } from '@gltf-transform/core'
import type sharpModule from 'sharp'
import { ModelInputError } from '../errors.ts'
import { GENERATOR } from '../generator.ts'
import type { Platform } from '../platform.ts'
import { readGlb, readGltf, writeGlb } from './gltf.ts'
import { isBinaryGltf1, isGltf1Json, readGltf1 } from './gltf1.ts'
import { readFbx } from './fbx.ts'
import { writeFbx } from './fbx-writer.ts'
import { readDae } from './dae.ts'
import { writeDae } from './dae-writer.ts'
import { asInputError, checkGltfAllocation, glbJson, gltfJson, type LimitsJson } from './gltf-limits.ts'
import { uploadedFormat } from './gltf-text.ts'
import { makeGltfValid, renumberAttributeSets, stringifyNames } from './gltf-validity.ts'
import { droppedByTarget } from './target-holds.ts'
import { type ModelFile, readZip, writeGltfZip } from './gltf-zip.ts'
import type { ReadOptions } from './limits.ts'
import { decodeForeignTextures } from './decode-foreign-textures.ts'
import { readObj, writeObj } from './obj.ts'
import { givePlainMaterial, rememberSourceFormat } from './plain-material.ts'
import { readPly, writePly } from './ply.ts'
import { readStl, writeStl } from './stl.ts'
import type { ResolveFile } from './upload-files.ts'

/** What a reader is given besides the bytes: the read bounds and the upload's other files. */
export interface ModelReadOptions extends ReadOptions {
  /** Finds the files the model references (.mtl, textures, .bin) among the upload's other files (a zip's entries). */
  resolve?: ResolveFile
  /**
   * Told which file of a container (a zip) holds the model, before it is read: the format and version
   * a diagnosis reports are that file's, not the container's.
   */
  onModelFile?: (file: ModelFile) => void
  /** sharp, to turn the GIF, TIFF and AVIF textures a model references or embeds into PNGs; without it they are dropped with a note. */
  sharp?: typeof sharpModule
}

/** A model format's reader and writer between bytes and a glTF-Transform Document. */
export interface FormatCodec {
  read?: (platform: Platform, bytes: Uint8Array, options?: ModelReadOptions) => Promise<Document>
  write?: (platform: Platform, doc: Document) => Promise<WrittenModel>
}

export interface WrittenModel {
  bytes: Uint8Array
  /** File extension of what was written (e.g. "zip" for a .gltf bundle). */
  extension: string
  /**
   * For the task record: what the format cannot hold of the model (`droppedByTarget`), and what
   * the writer changed to make the output valid (glTF's renormalised weights, clamped factors).
   */
  notes?: string[]
}

/** One entry per format; the format layer adds the others here. */
export const FORMAT_CODECS: Record<string, FormatCodec> = {
  glb: gltfCodec(glbJson, readGlb, writeGlb, 'glb'),
  // .gltf output is a zip of the .gltf, its .bin and textures
  gltf: gltfCodec(gltfJson, readGltf, writeGltfZip, 'zip'),
  obj: {
    read: async (platform, bytes, options) => readObj(bytes, { ...options, logger: platform.logger }),
    // With materials or textures the result is a zip of the .obj, its .mtl and the images.
    write: async (_platform, doc) => writeObj(doc),
  },
  stl: {
    read: async (_platform, bytes, options) => readStl(bytes, options),
    write: async (_platform, doc) => ({ bytes: writeStl(doc), extension: 'stl' }),
  },
  ply: {
    read: async (platform, bytes, options) => readPly(bytes, { ...options, logger: platform.logger }),
    write: async (_platform, doc) => writePly(doc),
  },
  zip: {
    read: (platform, bytes, options = {}) =>
      readZip(
        platform.io,
        bytes,
        options,
        (format, inner, resolve) => readOnce(platform, inner, format, { ...options, resolve }),
        options.onModelFile,
      ),
  },
  fbx: {
    read: (platform, bytes, options) => readFbx(platform, bytes, { resolve: options?.resolve }),
    write: async (_platform, doc) => writeFbx(doc),
  },
  dae: {
    read: (platform, bytes, options) => readDae(platform, bytes, { resolve: options?.resolve }),
    // COLLADA cannot embed images: with textures the result is a zip of the .dae and its images.
    write: async (_platform, doc) => writeDae(doc),
  },
}

/**
 * The codec of a glTF container: glTF 1.0 goes to its own reader (gltf1.ts); for 2.0 the sizes its
 * JSON declares are checked before the library reads it, and what it writes is made valid glTF first, with Mos named as its generator (generator.ts).
 */
function gltfCodec(
  jsonOf: (bytes: Uint8Array) => LimitsJson | undefined,
  read: (io: NodeIO, bytes: Uint8Array) => Promise<Document>,
  write: (io: NodeIO, doc: Document) => Promise<Uint8Array>,
  extension: string,
): FormatCodec {
  return {
    read: async (platform, bytes, options) => {
      const json = jsonOf(bytes)
      if (isBinaryGltf1(bytes) || isGltf1Json(json)) return readGltf1(platform, bytes, { resolve: options?.resolve })
      checkGltfAllocation(json ?? {}, options)
      return asInputError(() => read(platform.io, bytes), { bytes })
    },
    write: async (platform, doc) => {
      const notes = await makeGltfValid(doc)
      doc.getRoot().getAsset().generator = GENERATOR
      return { bytes: await write(platform.io, doc), extension, notes }
    },
  }
}

/** Formats that can be read as input. */
export function readableFormats(): string[] {
  return Object.entries(FORMAT_CODECS)
    .filter(([, codec]) => codec.read)
    .map(([format]) => format)
}

/** Formats that can be written as output. */
export function writableFormats(): string[] {
  return Object.entries(FORMAT_CODECS)
    .filter(([, codec]) => codec.write)
    .map(([format]) => format)
}

/**
 * Reads model bytes of the given format (a `.gltf` that is a GLB: as the GLB, `uploadedFormat`) into a Document.
 * Readers keep the GIF, TIFF and AVIF images a model references or embeds as found (the OBJ and PLY
 * readers are synchronous, sharp is not); then, before anything else sees the Document, one pass
 * makes them PNGs with `options.sharp`, or drops them with a note without it (decode-foreign-textures.ts).
 *
 * @example
 * const doc = await readModel(platform, zipBytes, 'zip', { sharp })
 */
export async function readModel(platform: Platform, bytes: Uint8Array, named: string, options: ModelReadOptions = {}): Promise<Document> {
  // Notes of a texture no reader named say the reader of the file that holds the model (a zip's .gltf).
  let reader = uploadedFormat(named, bytes)
  const onModelFile = (file: ModelFile) => {
    reader = file.format
    options.onModelFile?.(file)
  }
  const doc = await readOnce(platform, bytes, named, { ...options, onModelFile })
  await decodeForeignTextures(doc, { ...(options.sharp ? { sharp: options.sharp } : {}), reader })
  return doc
}

/** Reads the model (or a zip's model, through its codec) with the reader of its format. */
async function readOnce(platform: Platform, bytes: Uint8Array, named: string, options: ModelReadOptions): Promise<Document> {
  const format = uploadedFormat(named, bytes, platform.logger)
  const read = FORMAT_CODECS[format]?.read
  if (!read) throw new ModelInputError(`unsupported input format: ${format}`)
  if (bytes.byteLength === 0) throw new ModelInputError('empty file')
  // Every reader's document logs where the platform says (the job's logger in a worker).
  // A zip's model is remembered under its own format, by the inner read.
  return rememberSourceFormat((await read(platform, bytes, options)).setLogger(platform.logger), format)
}

/**
 * Writes a Document in the given format. Its notes name what the format cannot hold of this model
 * (read off the scene before the writer flattens or drops it), then what the writer changed.
 */
export async function writeModel(platform: Platform, doc: Document, format: string): Promise<WrittenModel> {
  const write = FORMAT_CODECS[format]?.write
  if (!write) throw new ModelInputError(`unsupported output format: ${format}`)
  // Every writer needs these, glTF's validator and assimp (which refuses a lone TEXCOORD_1) alike;
  // first, so what follows reads the sets under their new numbers.
  stringifyNames(doc)
  renumberAttributeSets(doc)
  const dropped = droppedByTarget(doc, format)
  // Only glTF draws a primitive without a material with its own default (plain-material.ts); the other writers keep none.
  const plain = format === 'glb' || format === 'gltf' ? givePlainMaterial(doc) : undefined
  const written = await write(platform, doc)
  const notes = [...(plain ? [plain] : []), ...dropped, ...(written.notes ?? [])]
  return { ...written, ...(notes.length > 0 ? { notes } : {}) }
}
