import type { z } from 'zod'
import { IMAGE_EXTENSION_FORMATS } from '../io/image.ts'
import { readableFormats } from '../io/index.ts'
import { compressOperation } from './compress.ts'
import { convertOperation } from './convert.ts'
import { diagnoseOperation } from './diagnose.ts'
import type { Operation } from './operation.ts'
import { repairOperation } from './repair.ts'
import { textureKtx2Operation } from './texture-ktx2.ts'
import { textureOptimizeOperation } from './texture-optimize.ts'

/**
 * The registry: every operation the engines run, one module each. The worker dispatches from it,
 * the job names are its names, and the server takes each operation's inputs from it.
 */
export const OPERATIONS = [
  compressOperation,
  convertOperation,
  repairOperation,
  diagnoseOperation,
  textureOptimizeOperation,
  textureKtx2Operation,
] as const

/** An operation's name: the contract's task type. */
export type OperationName = (typeof OPERATIONS)[number]['name']

/** The names of every registered operation, in registry order. */
export const OPERATION_NAMES: readonly OperationName[] = OPERATIONS.map((operation) => operation.name)

/** The operation registered under a name, or undefined. */
export function findOperation(name: string): Operation<OperationName, z.ZodType<object>> | undefined {
  return (OPERATIONS as readonly Operation<OperationName, z.ZodType<object>>[]).find((operation) => operation.name === name)
}

/**
 * The input formats (lower-case extensions) an operation takes now: every format a reader is
 * registered for, plus standalone images for the texture operations.
 */
export function operationFormats(name: OperationName): string[] {
  const operation = findOperation(name)
  if (!operation) return []
  const models = readableFormats()
  return operation.inputs === 'models-and-images' ? [...models, ...Object.keys(IMAGE_EXTENSION_FORMATS)] : models
}

/**
 * Parses a job's options with its operation's schema: the options cross the thread boundary as
 * plain data, so the engine checks them itself instead of trusting a cast. A failure names the option.
 */
export function parseOperationOptions(
  name: string,
  options: Record<string, unknown>,
): { ok: true; operation: Operation<OperationName, z.ZodType<object>>; options: object } | { ok: false; message: string } {
  const operation = findOperation(name)
  if (!operation) return { ok: false, message: `unknown operation: ${name}` }
  const parsed = operation.options.safeParse(options)
  if (parsed.success) return { ok: true, operation, options: parsed.data }
  const issue = parsed.error.issues[0]
  const option = issue?.path.join('.') || '(options)'
  const text = issue?.message ?? 'invalid'
  // A schema's own message that names its option is written for the user and shown as is; zod's
  // generic ones ("expected number, received string") get the operation and the option.
  return { ok: false, message: text.includes(option) ? text : `invalid ${name} option ${option}: ${text}` }
}
