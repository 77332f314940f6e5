/** The text of anything thrown: an Error's message (its name when the message is empty), anything else as a string. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message || error.name : String(error)
}
