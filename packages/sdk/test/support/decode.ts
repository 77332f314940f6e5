/// <reference path="./draco3dgltf.d.ts" />
import { NodeIO, type Document } from '@gltf-transform/core'
import { ALL_EXTENSIONS } from '@gltf-transform/extensions'
import draco3d from 'draco3dgltf'
import { MeshoptDecoder } from 'meshoptimizer'

let io: Promise<NodeIO> | undefined

/** A glTF-Transform reader with the Draco and meshopt decoders: an independent check of results. */
export function gltfReader(): Promise<NodeIO> {
  io ??= (async () => {
    const [decoder] = await Promise.all([draco3d.createDecoderModule(), MeshoptDecoder.ready])
    return new NodeIO()
      .registerExtensions(ALL_EXTENSIONS)
      .registerDependencies({ 'draco3d.decoder': decoder, 'meshopt.decoder': MeshoptDecoder })
  })()
  return io
}

/** Triangles of every triangle-list primitive (mode 4). */
export function countTriangles(doc: Document): number {
  let triangles = 0
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const primitive of mesh.listPrimitives()) {
      if (primitive.getMode() !== 4) continue
      const count = primitive.getIndices()?.getCount() ?? primitive.getAttribute('POSITION')?.getCount() ?? 0
      triangles += count / 3
    }
  }
  return triangles
}

/** The extensions a document declares as used. */
export function extensionsUsed(doc: Document): string[] {
  return doc
    .getRoot()
    .listExtensionsUsed()
    .map((extension) => extension.extensionName)
}
