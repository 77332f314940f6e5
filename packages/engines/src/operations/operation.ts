import type { Document } from '@gltf-transform/core'
import { z } from 'zod'
import type { BasisModule } from '../basis-encoder.ts'
import type { WrittenModel } from '../io/index.ts'
import type { ReadOptions } from '../io/limits.ts'
import type { GltfValidator } from '../ops/gltf-validation.ts'
import type { SharpEncoder } from '../ops/texture-optimize.ts'
import type { Platform } from '../platform.ts'
import type { OutputSizeRule } from './output-size.ts'

/**
 * What an operation runs with: the thread's platform resources, passed in (as glTF-Transform passes
 * encoders in), never imported inside an operation, so operations stay pure and testable.
 */
export interface OperationContext {
  platform: Platform
  /** Reads the job's model with the job's read bounds; a glTF the library trips over fails with the validator's reason. */
  readModel(bytes: Uint8Array): Promise<Document>
  /** Bounds for reading the input (the server's allocation limit). */
  readOptions: ReadOptions
  gltfValidator: GltfValidator
  /** sharp, with its thread count set for this pool's share of the cores. */
  sharp: SharpEncoder
  /** Textures of one model encoded at once. */
  imageThreads: number
  /** The Basis Universal encoder, loaded on first use and kept for the thread. */
  loadBasis(): Promise<BasisModule>
  /** Reports progress (0–100) on the job's port. */
  report(progress: number): void
}

/** The input of one job: its bytes and format (lower-case extension). */
export interface OperationInput {
  bytes: Uint8Array
  format: string
  /** Original file name, for operations that look at sibling names (zip bundles). */
  filename?: string
}

/** What an operation produces: the output file and the facts for the task record. */
export interface OperationOutput {
  bytes: Uint8Array
  /** Extension of the output file (glb, zip, png, ktx2, json, ...). */
  extension: string
  details?: Record<string, unknown>
}

/**
 * An operation's output from a written model and the operation's own details: `notes` (what the
 * target could not hold, what was changed to make it valid) go to `details.notes` when there are any.
 */
export function modelOutput(written: WrittenModel, details: Record<string, unknown> = {}, notes: string[] = []): OperationOutput {
  const all = [...notes, ...(written.notes ?? [])]
  const merged = all.length > 0 ? { ...details, notes: all } : details
  return { bytes: written.bytes, extension: written.extension, ...(Object.keys(merged).length > 0 ? { details: merged } : {}) }
}

/** Which inputs an operation takes: models only, or models and standalone images. */
export type OperationInputs = 'models' | 'models-and-images'

/**
 * One operation: its name (the contract's task type), its option schema (parsed where the options
 * cross into the engine thread), its defaults, its inputs and its `run`.
 */
export interface Operation<Name extends string = string, Schema extends z.ZodType<object> = z.ZodType<object>> {
  name: Name
  options: Schema
  defaults: Partial<z.output<Schema>>
  inputs: OperationInputs
  /**
   * How its output may compare in size with its input (output-size.ts): a rule, or one per
   * options when they change it (compress level 0 asks for no compression).
   */
  outputSize: OutputSizeRule | ((options: z.output<Schema>) => OutputSizeRule)
  run(context: OperationContext, input: OperationInput, options: z.output<Schema>): Promise<OperationOutput>
}

/**
 * Declares an operation; the identity, typed, so each module's `run` sees its own parsed options.
 *
 * ```ts
 * export const repairOperation = defineOperation({ name: 'repair', options: z.object({}), defaults: {}, inputs: 'models', outputSize, run })
 * ```
 */
export function defineOperation<Name extends string, Schema extends z.ZodType<object>>(
  operation: Operation<Name, Schema>,
): Operation<Name, Schema> {
  return operation
}

/** Options the server adds to every job: the bound on what reading the input may allocate. */
export const JOB_LIMITS = z.object({ maxAllocationBytes: z.number().optional() })

/** Per-image limits the texture operations take (the licence tier's texture size, a pixel cap). */
export const TEXTURE_LIMITS = {
  maxTextureBytes: z.number().optional(),
  maxPixels: z.number().int().positive().optional(),
}
