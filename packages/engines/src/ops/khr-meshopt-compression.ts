import type { GLTF, PropertyType, ReaderContext, WriterContext } from '@gltf-transform/core'
import { EXTMeshoptCompression } from '@gltf-transform/extensions'
import type { MeshoptEncoder } from 'meshoptimizer'
import { MeshoptFileLayout } from './meshopt-file-layout.ts'

const EXT = EXTMeshoptCompression.EXTENSION_NAME
const KHR = 'KHR_meshopt_compression'
/** A name no file uses, holding a file's EXT objects aside while the KHR ones are read. */
const ASIDE = '__mos_meshopt_aside'

/** Version 1 of meshopt's vertex codec, which KHR_meshopt_compression allows and EXT_ does not. */
const VERTEX_CODEC_V1 = 1

type Encoder = typeof MeshoptEncoder

/**
 * KHR_meshopt_compression (Khronos, release candidate): EXT_meshopt_compression's JSON and codecs
 * under the Khronos name, with version 1 of the vertex codec (and a colour filter) allowed. gltfpack
 * writes it with `-cz` or `-ce khr`, three.js reads it; with the v1 codec the same model's file is
 * 2–14% smaller than with EXT (cow.obj 1.9%, beast.obj 7.8%, chr_knight.glb 14%, measured).
 *
 * - Read, so such files open: the meshopt decoder takes either codec version and every filter.
 * - Written when a compress asks for it (`meshopt_extension=khr`), in gltfpack's file layout
 *   (MeshoptFileLayout), every vertex stream with the v1 codec.
 *
 * glTF-Transform (4.5) knows only the EXT extension, and its code reads and writes the objects under
 * that name: this class runs that code with the two names exchanged in the file's JSON while it
 * reads (so the EXT objects a file may also have are left to the EXT extension), and renames the
 * objects once written.
 */
export class KHRMeshoptCompression extends MeshoptFileLayout {
  // Typed as EXT's name: glTF-Transform declares the EXT class's name as that one literal.
  static override readonly EXTENSION_NAME = KHR as typeof EXT
  override readonly extensionName = KHR as typeof EXT

  override install(key: string, dependency: unknown): this {
    return super.install(key, key === 'meshopt.encoder' && dependency ? withVertexCodecV1(dependency as Encoder) : dependency)
  }

  override preread(context: ReaderContext, propertyType: PropertyType): this {
    return withNamesExchanged(context.jsonDoc.json, () => super.preread(context, propertyType))
  }

  /**
   * A file may declare some views with each name. A document is written with one meshopt extension
   * (each claims every accessor it can): this one, which such a file requires anyway. The reader
   * runs the extensions by name, so the EXT extension has read its views by now.
   */
  override read(context: ReaderContext): this {
    super.read(context)
    for (const other of this.document.getRoot().listExtensionsUsed()) if (other.extensionName === EXT) other.dispose()
    return this
  }

  override write(context: WriterContext): this {
    super.write(context)
    const json = context.jsonDoc.json
    for (const def of [...(json.bufferViews ?? []), ...(json.buffers ?? [])]) rename(def, EXT, KHR)
    return this
  }
}

/** The encoder, coding vertex streams with the v1 codec (glTF-Transform asks for the default, v0). */
function withVertexCodecV1(encoder: Encoder): Encoder {
  return Object.assign(Object.create(encoder) as Encoder, {
    encodeGltfBuffer: (source: Uint8Array, count: number, size: number, mode: string) =>
      encoder.encodeGltfBuffer(source, count, size, mode, VERTEX_CODEC_V1),
  })
}

/** Runs `read` with each buffer's and buffer view's KHR object under the EXT name, and its EXT object aside. */
function withNamesExchanged<T>(json: GLTF.IGLTF, read: () => T): T {
  const defs = [...(json.bufferViews ?? []), ...(json.buffers ?? [])]
  for (const def of defs) {
    rename(def, EXT, ASIDE)
    rename(def, KHR, EXT)
  }
  try {
    return read()
  } finally {
    for (const def of defs) {
      rename(def, EXT, KHR)
      rename(def, ASIDE, EXT)
    }
  }
}

function rename(def: { extensions?: Record<string, unknown> }, from: string, to: string): void {
  const extensions = def.extensions
  if (!extensions || !Object.hasOwn(extensions, from)) return
  extensions[to] = extensions[from]
  delete extensions[from]
}
