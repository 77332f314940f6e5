/** What happened to one texture, for the job's details (sizes feed compression_ratio). */
export interface TextureReport {
  name: string
  slots?: string[]
  /** MIME type before and after. */
  from: string
  to: string
  /** Encoded bytes before and after. */
  before: number
  after: number
  /** Why the texture was left as it was. */
  skipped?: string
  /** A deliberate deviation from the requested format (normal map kept lossless, alpha kept). */
  note?: string
  /** KTX2 only: the mode and transfer function chosen, and a resize forced by the encoder's limit. */
  mode?: 'etc1s' | 'uastc'
  colorSpace?: 'srgb' | 'linear'
  resizedFrom?: [number, number]
  /** A JPEG re-coded as progressive (compress's texture_progressive_jpeg). */
  progressive?: boolean
  /** Width and height written, where the texture was resized (KTX2's limit, compress's texture_max_size). */
  size?: [number, number]
}

/**
 * The task note for a texture a step left as it was: its name and why, so a texture the user asked to
 * change is never left unchanged without a word in `details.notes` (the per-texture report has it too).
 */
export function leftAsItWasNote(name: string, why: string): string {
  return `${name} left as it was: ${why}`
}

/** Totals over the texture reports: the bytes the job's compression ratio is about. */
export function summarizeTextures(reports: TextureReport[]): {
  textures: TextureReport[]
  texture_bytes_before: number
  texture_bytes_after: number
} {
  return {
    textures: reports,
    texture_bytes_before: reports.reduce((sum, r) => sum + r.before, 0),
    texture_bytes_after: reports.reduce((sum, r) => sum + r.after, 0),
  }
}

/**
 * Gives a URI a new file extension, avoiding names already taken ("wood.png" and "wood.jpg" would
 * otherwise both become "wood.webp").
 */
export function renameUri(uri: string, extension: string, taken: Set<string>): string {
  const stem = uri.replace(/\.[^./]*$/, '')
  let candidate = `${stem}.${extension}`
  for (let i = 1; taken.has(candidate); i++) candidate = `${stem}-${i}.${extension}`
  return candidate
}
