import { EXTMeshoptCompression, KHRDracoMeshCompression } from '@gltf-transform/extensions'
import { KHRMeshoptCompression } from './khr-meshopt-compression.ts'

/**
 * The geometry compression extensions Mos reads: the reader decodes their data, so a document holds
 * plain geometry with the extension still registered. Whoever writes decides again what to declare
 * (compress its engine's, convert none), so these are disposed before writing.
 */
export const GEOMETRY_COMPRESSION: ReadonlySet<string> = new Set([
  KHRDracoMeshCompression.EXTENSION_NAME,
  EXTMeshoptCompression.EXTENSION_NAME,
  KHRMeshoptCompression.EXTENSION_NAME,
])
