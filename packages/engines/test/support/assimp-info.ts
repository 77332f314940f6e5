import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** What Debian's `assimp info` reports about a file: the reader we did not write. */
export interface AssimpInfo {
  /** Faces of the meshes whose primitive type is triangle, each mesh counted once. */
  triangles: number
  /** Faces of line meshes. */
  lines: number
  meshes: number
  nodes: number
  embeddedTextures: number
  textureRefs: string[]
  min: [number, number, number]
  max: [number, number, number]
}

/** Runs `assimp info` (with `-r`: no post-processing, when `raw`) and parses its report. */
export async function assimpInfo(path: string, options: { raw?: boolean } = {}): Promise<AssimpInfo> {
  const { stdout } = await run('assimp', ['info', path, ...(options.raw ? ['-r'] : [])], { maxBuffer: 64 * 1024 * 1024 })
  const field = (name: string) => Number(new RegExp(`^${name}:?\\s+(\\d+)`, 'm').exec(stdout)?.[1] ?? Number.NaN)
  const point = (name: string) =>
    (/\(([-\d.e+]+) ([-\d.e+]+) ([-\d.e+]+)\)/.exec(new RegExp(`^${name} point.*$`, 'm').exec(stdout)?.[0] ?? '')?.slice(1).map(Number) ?? [NaN, NaN, NaN]) as [
      number,
      number,
      number,
    ]
  let triangles = 0
  let lines = 0
  for (const match of stdout.matchAll(/\[(\d+) \/ (\d+) \/ (\d+) \| ([a-z-]+)\]/g)) {
    if (match[4] === 'triangle') triangles += Number(match[3])
    else if (match[4] === 'line') lines += Number(match[3])
  }
  const refs = /Texture Refs:\n((?:\s+'.*'\n)*)/.exec(stdout)?.[1] ?? ''
  return {
    triangles,
    lines,
    meshes: field('Meshes'),
    nodes: field('Nodes'),
    embeddedTextures: Number(/Textures \(embed\.\):\s+(\d+)/.exec(stdout)?.[1] ?? 0),
    textureRefs: [...refs.matchAll(/'(.*)'/g)].map((m) => m[1]!),
    min: point('Minimum'),
    max: point('Maximum'),
  }
}

/** Extracts a zip with the system's `unzip` into `dir` and returns the entries' bytes by name. */
export async function unzipTo(zipPath: string, dir: string): Promise<void> {
  await run('unzip', ['-o', '-q', zipPath, '-d', dir])
}
