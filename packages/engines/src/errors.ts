/**
 * A problem with the user's input (malformed, truncated, unsupported content). Operations throw it;
 * the worker turns every error into a failed result, but this one's message is shown as is.
 */
export class ModelInputError extends Error {
  override name = 'ModelInputError'
}

/**
 * Malformed input that a library reader tripped over: the message is the library's, about its own
 * internals. Callers that have a better description (glTF-Validator's) should prefer it.
 */
export class ReaderFaultError extends ModelInputError {
  override name = 'ReaderFaultError'

  /**
   * @param gltf the glTF the library was reading, with the files it references, when that is not the
   *   upload itself (a zip's .gltf): what glTF-Validator should be given to describe the fault.
   */
  constructor(
    message: string,
    readonly gltf?: GltfSource,
  ) {
    super(message)
  }
}

/** A .gltf or .glb's bytes and the files its URIs name (a zip's other entries). */
export interface GltfSource {
  bytes: Uint8Array
  resources?: Record<string, Uint8Array>
}

/** The message of any thrown value (libraries throw strings too). */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** A stack overflow while reading or walking an input: some structure in it nests too deeply. */
export const stackOverflowMessage = 'the input is nested too deeply to process'

/**
 * The message to put on a failed task for any thrown value. ModelInputErrors are written for the
 * user and pass as they are; anything else is a library or engine error the input provoked, so it
 * is said to be about the input, its first line only (no stack), with file paths cut to their
 * last part (a worker knows where the service keeps its data; a client must not learn it).
 */
export function failureMessage(error: unknown): string {
  if (error instanceof ModelInputError) return error.message
  if (error instanceof RangeError && /call stack/i.test(error.message)) return stackOverflowMessage
  const code = systemErrorCode(error)
  // Errors of the system (disk full, a file gone) are about the service's state, not the input.
  if (code === 'ENOSPC' || code === 'EDQUOT') return 'internal error: insufficient disk space'
  if (code) return `internal error: ${code}`
  const text = error instanceof Error ? error.message || error.name : String(error)
  return `the input could not be processed: ${withoutPaths(text.split('\n')[0]!.trim())}`
}

/** The system error code (`ENOSPC`, …) of `error` or of an error it wraps (streams and fetch wrap theirs in `cause`). */
function systemErrorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 8; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/** Absolute paths (POSIX, Windows, file URLs) cut to their base name. */
export function withoutPaths(text: string): string {
  return text.replace(/(?:file:\/\/)?(?:[A-Za-z]:)?(?:[\\/][^\s'"`:,()\\/]+){2,}[\\/]?/g, (path) => path.replace(/^.*[\\/](?=[^\\/])/, ''))
}
