import { access } from 'node:fs/promises'
import { basename, dirname, extname, join, resolve } from 'node:path'
import { UsageError } from './args.ts'

/** Where one input's result is saved: the folder, and the stem its file name starts with. */
export interface OutputPlace {
  dir: string
  stem: string
}

/**
 * Places every input's result before anything is uploaded, so that no two results of one run share
 * a file. Inputs whose results would land in one folder under one stem (`bunny.glb` and `bunny.obj`)
 * keep their extension in the stem (`bunny.glb.meshopt.glb`, `bunny.obj.meshopt.glb`); inputs that
 * would still collide (one file given twice, or one name from two folders into one `--out`) are a
 * usage error, since any name the CLI made up for them would not say which result is which.
 * @example planOutputs(['m/bunny.glb', 'm/bunny.obj'], undefined) // [{ dir: 'm', stem: 'bunny.glb' }, { dir: 'm', stem: 'bunny.obj' }]
 */
export function planOutputs(files: string[], outDir: string | undefined): OutputPlace[] {
  const place = (file: string, keepExtension: boolean): OutputPlace => ({
    dir: outDir ?? dirname(file),
    stem: keepExtension ? basename(file) : basename(file, extname(file)),
  })
  // Case-insensitive: on the default file systems of macOS and Windows `Bunny` and `bunny` are one file.
  const keyOf = (p: OutputPlace) => join(resolve(p.dir), p.stem).toLowerCase()
  const shared = duplicates(files.map((file) => keyOf(place(file, false))))
  const places = files.map((file) => place(file, shared.has(keyOf(place(file, false)))))
  const seen = new Map<string, string>()
  for (const [index, p] of places.entries()) {
    const file = files[index]!
    const other = seen.get(keyOf(p))
    if (other === undefined) seen.set(keyOf(p), file)
    else if (resolve(other) === resolve(file)) throw new UsageError(`${file} is given twice`)
    else throw new UsageError(`${other} and ${file} would be saved under one name in ${p.dir}: run them with different --out folders`)
  }
  return places
}

function duplicates(keys: string[]): Set<string> {
  return new Set(keys.filter((key, index) => keys.indexOf(key) !== index))
}

/**
 * The output's extension when it is known before the task runs: compress always answers GLB, and
 * convert the target's file (gltf as a zip). Other commands answer in the input's container, which
 * the server decides.
 */
export function knownOutputExtension(command: string, to: string | undefined): string | undefined {
  if (command === 'compress') return '.glb'
  if (command === 'convert' && to) return to === 'gltf' ? '.zip' : `.${to}`
  return undefined
}

/**
 * Refuses to save a result where a file exists unless `force` is set (a result never replaces a
 * file silently), and over one of the run's inputs even then (docs/sdk.md).
 */
export async function assertFreeTarget(target: string, inputs: readonly string[], force: boolean): Promise<void> {
  const input = inputs.find((file) => resolve(file) === resolve(target))
  if (input !== undefined) throw new UsageError(`the result would replace the input ${input}: use --out`)
  if (force || !(await exists(target))) return
  throw new UsageError(`${target} exists: not replaced (--force replaces it)`)
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  )
}
