/**
 * What the page can tell of the files chosen before sending them, in words under the drop zone: a
 * format the operation does not take, and a file of 0 bytes. Start still sends them (the service's
 * refusal is the rule), but the service refuses an empty file part as `missing required field: file`,
 * which read as if no file had been chosen; the note says what is wrong with the file itself.
 */
export function chosenProblems(
  files: File[],
  operation: { type: string; input_formats: string[] },
  extensionOf: (name: string) => string,
): string {
  const unsupported = files.filter((file) => !operation.input_formats.includes(extensionOf(file.name)))
  const empty = files.filter((file) => file.size === 0 && !unsupported.includes(file))
  const lines: string[] = []
  if (unsupported.length > 0)
    lines.push(`${unsupported.map((file) => file.name).join(', ')}: ${operation.type} takes ${operation.input_formats.join(', ')} files`)
  if (empty.length > 0)
    lines.push(
      `${empty.map((file) => file.name).join(', ')}: ${empty.length === 1 ? 'the file is' : 'the files are'} empty (0 bytes), which the service refuses`,
    )
  return lines.join('. ')
}
