import { readFileSync } from 'node:fs'

/**
 * The `asset.generator` of every glTF Mos writes: Mos and the engines' version, so that a file found
 * later says which Mos made it. glTF-Transform, which writes the bytes, would put its own name there,
 * and its reader drops the input's (the input's copyright is kept).
 */
export const GENERATOR = `Mos ${(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version}`
