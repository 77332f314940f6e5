import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

/** gltfpack, pinned in the root's devDependencies, as the bench runs it. */
const GLTFPACK = new URL('../../node_modules/.bin/gltfpack', import.meta.url).pathname

/** gltfpack's output for an input file (a GLB or an OBJ, as the bench gives it). */
export async function gltfpack(input: Uint8Array, extension: 'glb' | 'obj', args: string[]): Promise<Uint8Array> {
  const dir = await mkdtemp(join(tmpdir(), 'mos-gltfpack-'))
  try {
    await writeFile(join(dir, `in.${extension}`), input)
    await promisify(execFile)(GLTFPACK, ['-i', join(dir, `in.${extension}`), '-o', join(dir, 'out.glb'), ...args])
    return new Uint8Array(await readFile(join(dir, 'out.glb')))
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
