import type { Document } from '@gltf-transform/core'
import { ModelInputError } from '../errors.ts'
import { FORMAT_CODECS, writableFormats, writeModel, type WrittenModel } from '../io/index.ts'
import { checkTargetCanHold } from '../io/target-holds.ts'
import type { Platform } from '../platform.ts'
import { checkFiniteAttributes, unitNormals } from '../geometry/unit-normals.ts'
import { GEOMETRY_COMPRESSION } from './compression-extensions.ts'

export interface ConvertOptions {
  /** Output format: glb, gltf (written as a zip), obj, stl, ply, or any other writer the registry holds. */
  target_format: string
  /** Allocation bound for reading the input (see `ReadOptions.maxAllocationBytes`). */
  maxAllocationBytes?: number
}

/** Geometry compression extensions convert decodes and does not re-encode (compress is the operation for that). */
/** Validates convert options against the writers registered now; throws a ModelInputError with the reason. */
export function parseConvertOptions(options: Record<string, unknown>): ConvertOptions {
  const target = options.target_format
  if (typeof target !== 'string' || target === '') throw new ModelInputError('convert needs a target_format')
  const format = target.toLowerCase().replace(/^\./, '')
  if (!FORMAT_CODECS[format]?.write) {
    throw new ModelInputError(`unsupported target format: ${target} (writable: ${writableFormats().join(', ')})`)
  }
  const limit = options.maxAllocationBytes
  return { target_format: format, ...(typeof limit === 'number' ? { maxAllocationBytes: limit } : {}) }
}

/** Writes a read Document in the target format: `checkConvertible`, then `writeConverted`. */
export async function convertDocument(platform: Platform, doc: Document, target: string): Promise<WrittenModel> {
  checkConvertible(doc, target)
  return writeConverted(platform, doc, target)
}

/**
 * Refuses what convert will not write: input whose indices or attribute lengths do not fit its
 * vertex count, or whose positions are not finite (every target would carry the damage on, and
 * repair is the operation that fixes it), and a model of which the target holds nothing. Steps that
 * change the model before it is written (compress's scene steps) run after this.
 */
export function checkConvertible(doc: Document, target: string): void {
  checkGeometry(doc)
  checkFiniteAttributes(doc)
  checkTargetCanHold(doc, target)
}

/**
 * Writes a checked Document in the target format. Geometry is written uncompressed (re-encoding
 * Draco would quantize again and drop degenerate triangles: convert keeps every vertex as read);
 * buffers are merged for GLB (which holds one); names become strings and UV sets are renumbered in
 * every write (writeModel); normals are made unit length (glTF requires it; OBJ and PLY files often break it). The notes name
 * everything the target drops, and what was made valid.
 */
export async function writeConverted(platform: Platform, doc: Document, target: string): Promise<WrittenModel> {
  await doc.transform(unitNormals())
  for (const extension of doc.getRoot().listExtensionsUsed()) {
    if (GEOMETRY_COMPRESSION.has(extension.extensionName)) extension.dispose()
  }
  return writeModel(platform, doc, target)
}

function checkGeometry(doc: Document): void {
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const [p, prim] of mesh.listPrimitives().entries()) {
      const where = `mesh "${mesh.getName() || doc.getRoot().listMeshes().indexOf(mesh)}" primitive ${p}`
      const counts = prim.listSemantics().map((semantic) => [semantic, prim.getAttribute(semantic)!.getCount()] as const)
      const vertices = prim.getAttribute('POSITION')?.getCount() ?? 0
      const short = counts.find(([, count]) => count !== vertices)
      if (short) throw new ModelInputError(`invalid input: ${where} has ${vertices} positions but ${short[1]} ${short[0]} values`)
      const indices = prim.getIndices()?.getArray()
      if (!indices) continue
      let max = 0
      for (let i = 0; i < indices.length; i++) if (indices[i]! > max) max = indices[i]!
      if (indices.length > 0 && max >= vertices) {
        throw new ModelInputError(
          `invalid input: ${where} references vertex ${max} of ${vertices} (out-of-range indices; repair drops them)`,
        )
      }
    }
  }
}
