import { byteSize } from '../byte-size.ts'
import { IMAGE_EXTENSION_FORMATS } from '../io/image.ts'
import { zipContentBytes } from '../io/zip.ts'
import type { OperationInput, OperationOutput } from './operation.ts'

/**
 * How an operation's output may compare in size with its input: the rule "an operation never
 * returns a file larger than it needs to be for what was asked" (docs/api.md, "Output size"), with
 * each operation's exception stated where the operation is declared (its `outputSize`).
 */
export type OutputSizeRule =
  /**
   * A result in the input's own container that is larger than the input is not returned: the
   * input's bytes are, with a note (re-encoding, whose point is a smaller file). A larger result in
   * another container (gltf → zip, an image asked in another format) is returned, with a note.
   */
  | { kind: 'never-larger' }
  /**
   * A larger result is returned, with a note saying so and why it may be: the input's bytes cannot
   * stand in for it, since they lack what was asked (compress: the requested encoding, where a
   * larger result is a defect to fix in the operation; repair: the repairs).
   */
  | { kind: 'report-larger'; because: string }
  /** The result may be larger by its nature, for the reason given (a format change the user asked for). */
  | { kind: 'may-grow'; because: string }

/** What the rule did, in the task's details (`size_rule`) whenever the result was larger than the input. */
export interface SizeRuleDetails {
  input_bytes: number
  result_bytes: number
  /** True when the input's bytes were returned instead of the result. */
  kept_input: boolean
  /** A zip upload: the bytes its files hold unpacked (`input_bytes` is the deflated archive's). */
  input_unpacked_bytes?: number
  note: string
}

/**
 * Applies an operation's size rule to its output: every operation's output passes through here
 * (the worker's runEngineJob), so the rule lives in one place. A result no larger than its input
 * passes unchanged.
 * @example enforceOutputSize({ kind: 'never-larger' }, input, output) // input's bytes when output is larger
 */
export function enforceOutputSize(rule: OutputSizeRule, input: OperationInput, output: OperationOutput): OperationOutput {
  const inputBytes = input.bytes.byteLength
  const resultBytes = output.bytes.byteLength
  if (resultBytes <= inputBytes || rule.kind === 'may-grow') return output
  const sizes = `the result, ${byteSize(resultBytes)}, is larger than the input, ${byteSize(inputBytes)}`
  const keep = rule.kind === 'never-larger' && sameContainer(input.format, output.extension)
  const unpacked = input.format === 'zip' && !keep ? zipContentBytes(input.bytes) : undefined
  const note = keep
    ? `${sizes}: the input is returned unchanged`
    : unpacked !== undefined
      ? zipUploadNote(resultBytes, inputBytes, unpacked, rule)
      : `${sizes}: returned, ${rule.kind === 'never-larger' ? `since it is a .${output.extension} file, not the input's .${input.format}` : rule.because}`
  const size_rule: SizeRuleDetails = {
    input_bytes: inputBytes,
    result_bytes: resultBytes,
    kept_input: keep,
    ...(unpacked !== undefined ? { input_unpacked_bytes: unpacked } : {}),
    note,
  }
  const details = { ...output.details, size_rule }
  return keep ? { bytes: input.bytes, extension: input.format, details } : { ...output, details }
}

/**
 * The note for a result larger than a zip upload. The archive is deflated, so its size is no
 * measure of the model's: a result is compared with what the files hold unpacked (many-cubes.gltf and
 * its .bin: 1 474 201 B in an 83 559 B zip, compressed by Draco's defaults to 135 584 B, 9.2 % of them). Only a result larger than
 * even those gets the rule's own reason (a compress result larger than its model is a defect).
 */
function zipUploadNote(resultBytes: number, inputBytes: number, unpacked: number, rule: OutputSizeRule): string {
  const upload = `the result, ${byteSize(resultBytes)}, is larger than the upload, ${byteSize(inputBytes)}, a deflated zip whose files hold ${byteSize(unpacked)}`
  if (resultBytes <= unpacked) return `${upload}: the result is ${((resultBytes / unpacked) * 100).toFixed(1)} % of them`
  const because = rule.kind === 'report-larger' ? rule.because : 'since that file type is the result'
  return `${upload}, and larger than those too: returned, ${because}`
}

/** An operation's rule for these options (a rule, or a function of the options). */
export function outputSizeRule<Options>(
  outputSize: OutputSizeRule | ((options: Options) => OutputSizeRule),
  options: Options,
): OutputSizeRule {
  return typeof outputSize === 'function' ? outputSize(options) : outputSize
}

/** Whether an output extension is the input's own format (jpg and jpeg are one). */
function sameContainer(inputFormat: string, outputExtension: string): boolean {
  const image = (extension: string) => IMAGE_EXTENSION_FORMATS[extension] ?? extension
  return image(inputFormat) === image(outputExtension)
}
