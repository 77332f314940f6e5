import type { ILogger } from '@gltf-transform/core'
import { ModelInputError } from '../errors.ts'
import { isGlb } from './glb-header.ts'
import { assertJsonDepth } from './json-depth.ts'

/**
 * The format to read an upload named `format` as. Decision (docs/formats.md): a `.gltf` whose bytes
 * start with the GLB magic is a binary glTF under the wrong name (a renamed export, a tool writing
 * binary glTF under the JSON extension), and it is read as the GLB it is, with a warning saying so,
 * rather than refused: nothing in it is ambiguous. Every other name is taken at its word.
 * @example uploadedFormat('gltf', glbBytes, logger) // 'glb', and a warning
 */
export function uploadedFormat(format: string, bytes: Uint8Array, logger?: ILogger): string {
  if (format !== 'gltf' || !isGlb(bytes)) return format
  logger?.warn('[gltf] the .gltf file is a binary glTF (GLB): read as the .glb it is')
  return 'glb'
}

/**
 * The text of a `.gltf`'s JSON (a UTF-8 BOM skipped), once it is known to be JSON text: a binary GLB,
 * bytes that are not UTF-8 and text that does not open a JSON object are refused saying so, before
 * the nesting of `[` and `{` is counted (which counted those bytes of a binary file, and refused a GLB
 * named .gltf as "nested too deeply").
 * @example gltfJsonText(strToU8('{"asset":{"version":"2.0"}}')) // '{"asset":{"version":"2.0"}}'
 */
export function gltfJsonText(bytes: Uint8Array, what = 'glTF JSON'): string {
  if (isGlb(bytes)) throw new ModelInputError(`invalid ${what}: the file is a binary glTF (GLB), not JSON (upload it as .glb)`)
  const body = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body)
  } catch {
    throw new ModelInputError(`invalid ${what}: the file is not UTF-8 text (a .gltf holds JSON; binary glTF is a .glb)`)
  }
  if (!/^[\t\n\r ]*\{/.test(text))
    throw new ModelInputError(`invalid ${what}: a .gltf holds one JSON object, and the file does not start with "{"`)
  assertJsonDepth(text, what)
  return text
}
