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
}

/** The message to put on a failed task for any thrown value. */
export function failureMessage(error: unknown): string {
  if (error instanceof ModelInputError) return error.message
  if (error instanceof Error) return error.message || error.name
  return String(error)
}
