import type { Document } from '@gltf-transform/core'
import { ModelInputError } from '../errors.ts'
import type { Platform } from '../platform.ts'
import { readGlb, readGltf, writeGlb } from './gltf.ts'
import { readFbx } from './fbx.ts'
import { writeFbx } from './fbx-writer.ts'
import { readDae } from './dae.ts'
import { writeDae } from './dae-writer.ts'

/** A model format's reader and writer between bytes and a glTF-Transform Document. */
export interface FormatCodec {
  read?: (platform: Platform, bytes: Uint8Array) => Promise<Document>
  write?: (platform: Platform, doc: Document) => Promise<WrittenModel>
}

export interface WrittenModel {
  bytes: Uint8Array
  /** File extension of what was written (e.g. "zip" for a .gltf bundle). */
  extension: string
}

/** One entry per format; the format layer adds the others here. */
export const FORMAT_CODECS: Record<string, FormatCodec> = {
  glb: {
    read: (platform, bytes) => readGlb(platform.io, bytes),
    write: async (platform, doc) => ({ bytes: await writeGlb(platform.io, doc), extension: 'glb' }),
  },
  gltf: {
    read: (platform, bytes) => readGltf(platform.io, bytes),
  },
  fbx: {
    read: (platform, bytes) => readFbx(platform, bytes),
    write: async (platform, doc) => ({ bytes: await writeFbx(platform, doc), extension: 'fbx' }),
  },
  dae: {
    read: (platform, bytes) => readDae(platform, bytes),
    // COLLADA cannot embed images: with textures the result is a zip of the .dae and its images.
    write: (platform, doc) => writeDae(platform, doc),
  },
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

/** Reads model bytes of the given format into a Document. */
export async function readModel(platform: Platform, bytes: Uint8Array, format: string): Promise<Document> {
  const read = FORMAT_CODECS[format]?.read
  if (!read) throw new ModelInputError(`unsupported input format: ${format}`)
  if (bytes.byteLength === 0) throw new ModelInputError('empty file')
  return read(platform, bytes)
}

/** Writes a Document in the given format. */
export async function writeModel(platform: Platform, doc: Document, format: string): Promise<WrittenModel> {
  const write = FORMAT_CODECS[format]?.write
  if (!write) throw new ModelInputError(`unsupported output format: ${format}`)
  return write(platform, doc)
}
