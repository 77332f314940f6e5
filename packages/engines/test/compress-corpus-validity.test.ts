import { readdirSync, readFileSync } from 'node:fs'
import { extname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ASSIMP_MODELS, SHARED_CORPUS, corpusFiles } from '../../../test/support/corpus.ts'
import { createEnginePool, loadPlatform } from '../src/index.ts'
import { validateGlb } from './texture-fixtures.ts'
import { glbOf } from './support/compress-file.ts'

const ASSIMP_GLTF = join(ASSIMP_MODELS, 'glTF2')
const { available } = corpusFiles({ assimp: ASSIMP_GLTF, shared: SHARED_CORPUS })

/** Every model file of the shared corpus, and every glTF of the assimp corpus (the bench's corpus section). */
function corpusModels(): string[] {
  if (!available) return []
  const files = (dir: string, extensions: string[]) =>
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && extensions.includes(extname(entry.name)))
      .map((entry) => join(entry.parentPath, entry.name))
      .sort()
  return [...files(SHARED_CORPUS, ['.glb', '.gltf', '.obj']), ...files(ASSIMP_GLTF, ['.glb', '.gltf'])]
}

/** Every job that writes a glTF: compress with each engine and with merge, convert to GLB, repair. */
const JOBS = [
  ['compress', { engine: 'meshopt' }],
  ['compress', { engine: 'meshopt', merge: true }],
  ['compress', { engine: 'draco' }],
  ['convert', { target_format: 'glb' }],
  ['repair', {}],
] as const

/** What a job that fails may say: the input's problem, never Mos's own. */
const INPUT_PROBLEM = /^(?!internal error)/

// "Every glTF we write validates with 0 errors in glTF-Validator", on the whole corpus, the deliberately broken files
// included: each result of every job writing a glTF either validates or the task fails naming the input.
describe.skipIf(!available)(
  'compress, convert and repair on the whole corpus: every result passes glTF-Validator, or the task says what is wrong with the input',
  async () => {
    const pool = createEnginePool({ threads: 2 })
    const platform = await loadPlatform()
    afterAll(() => pool.destroy())

    for (const path of corpusModels()) {
      const name = path.slice(path.indexOf('/corpus/') >= 0 ? path.indexOf('/corpus/') + 8 : ASSIMP_GLTF.length + 1)
      it(name, async () => {
        const extension = extname(path).slice(1)
        // A .gltf goes in packed into a GLB, as the bench gives it; one glTF-Transform cannot pack (its side
        // files missing or broken) goes in as it is, as a user would upload it alone.
        const packed = extension === 'gltf' ? await glbOf(platform, path).catch(() => null) : null
        const bytes = packed ?? new Uint8Array(readFileSync(path))
        const format = packed ? 'glb' : extension
        for (const [name, options] of JOBS) {
          const result = await pool.run({ name, input: { bytes: bytes.slice() }, format, options })
          if (!result.ok) {
            expect(result.message, `${name} ${JSON.stringify(options)}`).toMatch(INPUT_PROBLEM)
            continue
          }
          // Repair writes an OBJ, STL or PLY back as what it was.
          if (result.extension !== 'glb') continue
          expect((await validateGlb(result.bytes!)).errors, `${name} ${JSON.stringify(options)}`).toEqual([])
        }
      })
    }
  },
)
