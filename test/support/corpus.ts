import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Debian's assimp test corpus (`apt-get install assimp-testmodels`). */
export const ASSIMP_MODELS = '/usr/share/assimp/models'

/** The project's shared corpus, beside the repository (never copied into it). */
export const SHARED_CORPUS = resolve(dirname(fileURLToPath(import.meta.url)), '../../../shared/corpus')

const required = process.env.REQUIRE_CORPUS === '1'

/**
 * Resolves corpus files. When any is missing, tests skip (the returned `available` is false) with a
 * message, except under REQUIRE_CORPUS=1 (CI), where a missing file is an error.
 */
export function corpusFiles<T extends Record<string, string>>(files: T): { available: boolean; paths: T } {
  const missing = Object.values(files).filter((path) => !existsSync(path))
  if (missing.length > 0) {
    const message = `corpus files missing: ${missing.join(', ')} (install assimp-testmodels; see ../shared/corpus.md)`
    if (required) throw new Error(message)
    console.warn(`[skip] ${message}`)
  }
  return { available: missing.length === 0, paths: files }
}

/** A file of the assimp corpus. */
export const assimp = (...parts: string[]) => join(ASSIMP_MODELS, ...parts)

/** A file of ../shared/corpus. */
export const shared = (...parts: string[]) => join(SHARED_CORPUS, ...parts)
