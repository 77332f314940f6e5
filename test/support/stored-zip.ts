import { zipSync } from 'fflate'

/** A fixed entry time: fflate stamps the current time otherwise, and generated inputs must not change between runs. */
const ENTRY_TIME = new Date(2000, 0, 1)

/**
 * A zip of the files, stored (not deflated): enough to hand a model and its textures over as one
 * upload, and mutations of it land in the files' own bytes (the fuzz corpus).
 */
export function storedZip(files: Record<string, Uint8Array>): Uint8Array {
  return zipSync(files, { level: 0, mtime: ENTRY_TIME })
}
