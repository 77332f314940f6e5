/**
 * What assimp 5.2 fails on in COLLADA files real tools write, and the change that gets each read.
 * Tried only once assimp has failed on a file, each at most once (applied, it no longer changes the
 * text), so a file assimp reads costs nothing more.
 *
 * - `import_error`: a colour or float whose text starts with whitespace (`<color>  0.0 0.0 0.0 1.0
 *   </color>`, library_animation_clips.dae): assimp's number reader does not skip it. The whitespace
 *   goes; the values are the same.
 * - `export_error`: animations its glTF writer cannot write (box_nested_animation.dae's bone keys,
 *   which it reads): the file is read without them, and a note says so.
 */
export function daeWorkaround(bytes: Uint8Array, assimpError: string): { bytes: Uint8Array; note?: string } | undefined {
  // latin1 both ways keeps every byte of a UTF-8 file as it was.
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')
  if (assimpError === 'import_error') {
    const trimmed = text.replace(/(<(?:color|float)\b[^>]*>)\s+/g, '$1')
    return trimmed === text ? undefined : { bytes: Buffer.from(trimmed, 'latin1') }
  }
  if (assimpError === 'export_error') {
    const still = text
      .replace(/<library_animations\b[\s\S]*?<\/library_animations>/g, '')
      .replace(/<library_animation_clips\b[\s\S]*?<\/library_animation_clips>/g, '')
    if (still === text) return undefined
    return {
      bytes: Buffer.from(still, 'latin1'),
      note: 'animations not carried: assimp reads them, but its glTF writer fails on them (the file is read without them)',
    }
  }
  return undefined
}
