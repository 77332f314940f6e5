/// <reference path="../gltf-validator.d.ts" />
import { createRequire } from 'node:module'
import type { ValidationMessage, ValidationReport } from 'gltf-validator'
import { isGlb } from '../io/gltf.ts'
import { isGltf1 } from '../io/gltf1.ts'
import type { DiagnosisIssue, IssueSeverity } from './diagnosis-types.ts'

/** Khronos glTF-Validator's entry points (the npm build: pure JS, no install script, no network). */
export type GltfValidator = typeof import('gltf-validator')

const require = createRequire(import.meta.url)

/** Loads the validator (about 2 MB of JS); call once per worker thread and pass it down. */
export function loadGltfValidator(): GltfValidator {
  return require('gltf-validator') as GltfValidator
}

/**
 * Validator codes Mos already counts exactly by its own checks (docs/diagnose.md); folding them
 * in too would count one defect twice.
 */
const COVERED_CODES = new Set([
  'ACCESSOR_INVALID_FLOAT', // non_finite_values, invalid_normals
  'ACCESSOR_INDEX_OOB', // out_of_range_indices
  'ACCESSOR_INDEX_TRIANGLE_DEGENERATE', // degenerate_faces
  'NODE_EMPTY', // empty_nodes
  'UNUSED_OBJECT', // unused_data
])

/**
 * Errors after which the document glTF-Transform reads is not the file's content (a view or an
 * accessor reaching past its buffer reads whatever memory follows), so no diagnosis is given.
 */
const FATAL_CODES = new Set([
  'BUFFER_VIEW_TOO_LONG',
  'ACCESSOR_TOO_LONG',
  'BUFFER_MISSING_GLB_DATA',
  'BUFFER_GLB_CHUNK_TOO_BIG',
  'GLB_CHUNK_TOO_BIG',
  'GLB_LENGTH_TOO_SMALL',
  'GLB_UNEXPECTED_END_OF_CHUNK_DATA',
  'GLB_UNEXPECTED_END_OF_CHUNK_HEADER',
  'GLB_UNEXPECTED_END_OF_HEADER',
])

const SEVERITY_BY_LEVEL: Record<number, IssueSeverity | undefined> = { 0: 'high', 1: 'medium', 2: 'low' }

export interface GltfValidation {
  report: ValidationReport
  /** The first error that makes the file unreadable, if any. */
  fatal?: ValidationMessage
  /** First error of any kind, to explain a file glTF-Transform could not read. */
  firstError?: ValidationMessage
}

/**
 * Validates glTF or GLB bytes with Khronos glTF-Validator, at most `maxIssues` messages. Returns
 * null for bytes that are neither (a zip bundle, another format). External resources come from
 * `resources` (a zip's other entries) or not at all: Mos reads none from its own disk.
 */
export async function validateGltf(
  validator: GltfValidator,
  bytes: Uint8Array,
  maxIssues: number,
  resources: Record<string, Uint8Array> = {},
): Promise<GltfValidation | null> {
  const format = isGlb(bytes) ? 'glb' : looksLikeJson(bytes) ? 'gltf' : null
  // glTF-Validator knows 2.0 only: a 1.0 file would get "unknown version" and nothing about its content.
  if (!format || isGltf1(bytes)) return null
  const report = await validator.validateBytes(bytes, {
    format,
    maxIssues,
    writeTimestamp: false,
    externalResourceFunction: (uri: string) =>
      Object.hasOwn(resources, uri)
        ? Promise.resolve(resources[uri]!)
        : Promise.reject(new Error(`external resource not available: ${uri}`)),
  })
  const errors = report.issues.messages.filter((m) => m.severity === 0)
  const fatal = errors.find((m) => FATAL_CODES.has(m.code))
  return { report, ...(fatal ? { fatal } : {}), ...(errors[0] ? { firstError: errors[0] } : {}) }
}

/** One line for a validator message, as put on a failed task. */
export function describeValidatorMessage(message: ValidationMessage): string {
  // Messages may quote a whole data URI; a task's error stays one readable line.
  const text = message.message.length > 300 ? `${message.message.slice(0, 300)}…` : message.message
  return `${text.replace(/\s+/g, ' ')}${message.pointer ? ` (${message.pointer})` : ''}`
}

/**
 * Groups the validator's messages into issues (`gltf_<code>`, count = messages with that code):
 * those pointing into a mesh or an accessor a mesh uses go to that mesh, the others to the file.
 * Hints and codes Mos counts itself are left out.
 */
export function validatorIssues(
  validation: GltfValidation,
  meshOfAccessor: (accessorIndex: number) => number | undefined,
): { byMesh: Map<number, DiagnosisIssue[]>; file: DiagnosisIssue[] } {
  const byMesh = new Map<number, Map<string, DiagnosisIssue>>()
  const file = new Map<string, DiagnosisIssue>()
  for (const message of validation.report.issues.messages) {
    const severity = SEVERITY_BY_LEVEL[message.severity]
    if (!severity || COVERED_CODES.has(message.code) || message.code === 'IO_ERROR') continue
    const mesh = meshIndexOf(message.pointer, meshOfAccessor)
    let group = file
    if (mesh !== undefined) {
      group = byMesh.get(mesh) ?? new Map()
      byMesh.set(mesh, group)
    }
    const type = `gltf_${message.code.toLowerCase()}`
    const issue = group.get(type) ?? { type, count: 0, severity }
    issue.count++
    group.set(type, issue)
  }
  if (validation.report.issues.truncated) {
    file.set('gltf_validator_truncated', { type: 'gltf_validator_truncated', count: 1, severity: 'low' })
  }
  return {
    byMesh: new Map([...byMesh].map(([mesh, issues]) => [mesh, [...issues.values()]])),
    file: [...file.values()],
  }
}

function meshIndexOf(pointer: string | undefined, meshOfAccessor: (accessorIndex: number) => number | undefined): number | undefined {
  const match = /^\/(meshes|accessors)\/(\d+)/.exec(pointer ?? '')
  if (!match) return undefined
  const index = Number(match[2])
  return match[1] === 'meshes' ? index : meshOfAccessor(index)
}

function looksLikeJson(bytes: Uint8Array): boolean {
  for (let i = 0; i < Math.min(bytes.byteLength, 64); i++) {
    const byte = bytes[i]!
    if (byte === 0xef || byte === 0xbb || byte === 0xbf || byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue
    return byte === 0x7b // '{'
  }
  return false
}
