import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** What `assimp info` (Debian's reader, one we did not write) reports, summed per node instance. */
export interface AssimpCounts {
  triangles: number
  lines: number
  points: number
  /** Faces with more than three corners (raw imports only). */
  polygons: number
  /** Faces of meshes mixing primitive types (raw imports only), which cannot be told apart. */
  mixed: number
  /** Triangle faces with each mesh counted once, however often nodes instance it. */
  meshTriangles: number
  /** Line faces with each mesh counted once. */
  meshLines: number
  meshes: number
  nodes: number
  /** Bones that weight vertices, summed over meshes (assimp omits joints without weights). */
  bones: number
  animations: number
  /** Node channels over all animations. */
  animationChannels: number
  embeddedTextures: number
  textureRefs: string[]
  min: [number, number, number]
  max: [number, number, number]
}

/** True when the `assimp` command is installed. */
export function hasAssimpCli(): boolean {
  return ['/usr/bin/assimp', '/usr/local/bin/assimp'].some((path) => existsSync(path))
}

/**
 * Runs `assimp info` on a file and counts faces by primitive type, each mesh counted once per node
 * that references it. `raw` skips assimp's post-processing (which triangulates polygons and turns
 * degenerate triangles into lines and points), so a file of triangles is counted as written.
 * Rejects with assimp's error when it cannot open the file.
 */
export async function assimpInfo(file: string, options: { raw?: boolean } = {}): Promise<AssimpCounts> {
  const { stdout } = await run('assimp', ['info', file, ...(options.raw ? ['--raw'] : [])], {
    maxBuffer: 64 * 1024 * 1024,
    timeout: 120_000,
  }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(`assimp info failed: ${(error.stdout ?? '').match(/ERROR:.*/)?.[0] ?? error.stderr ?? error.message}`)
  })
  if (/ERROR:/.test(stdout)) throw new Error(`assimp info failed: ${stdout.match(/ERROR:.*/)![0]}`)
  return parseAssimpInfo(stdout)
}

/** Parses `assimp info` output: the Meshes table and the node hierarchy's mesh references. */
function parseAssimpInfo(stdout: string): AssimpCounts {
  const meshes: { faces: number; types: string }[] = []
  const lines = stdout.split('\n')
  let section = ''
  const uses = new Map<number, number>()
  for (const line of lines) {
    if (line.startsWith('Meshes:  (name)')) section = 'meshes'
    else if (line.startsWith('Named Materials') || line.startsWith('Named Animations') || line.startsWith('Named Textures')) section = ''
    else if (line.startsWith('Node hierarchy')) section = 'nodes'
    else if (section === 'meshes') {
      const m = /^\s+(\d+) \(.*\): \[(\d+) \/ (\d+) \/ (\d+) \| ([a-z -]+)\]/.exec(line)
      if (m) meshes[Number(m[1])] = { faces: Number(m[4]), types: m[5]! }
    } else if (section === 'nodes') {
      const m = /\(mesh ([\d, ]+)\)\s*$/.exec(line)
      if (m) for (const id of m[1]!.split(',').map((s) => Number(s.trim()))) uses.set(id, (uses.get(id) ?? 0) + 1)
    }
  }
  const field = (name: string) => Number(new RegExp(`^${name}:?\\s+(\\d+)`, 'm').exec(stdout)?.[1] ?? Number.NaN)
  const point = (name: string) =>
    (/\(([-\d.e+]+) ([-\d.e+]+) ([-\d.e+]+)\)/
      .exec(new RegExp(`^${name} point.*$`, 'm').exec(stdout)?.[0] ?? '')
      ?.slice(1)
      .map(Number) ?? [NaN, NaN, NaN]) as [number, number, number]
  const refs = /Texture Refs:\n((?:\s+'.*'\n)*)/.exec(stdout)?.[1] ?? ''
  const counts: AssimpCounts = {
    triangles: 0,
    lines: 0,
    points: 0,
    polygons: 0,
    mixed: 0,
    meshTriangles: meshes.reduce((n, m) => n + (m?.types === 'triangle' ? m.faces : 0), 0),
    meshLines: meshes.reduce((n, m) => n + (m?.types === 'line' ? m.faces : 0), 0),
    meshes: field('Meshes'),
    nodes: field('Nodes'),
    bones: field('Bones'),
    animations: field('Animations'),
    animationChannels: field('Animation Channels'),
    embeddedTextures: Number(/Textures \(embed\.\):\s+(\d+)/.exec(stdout)?.[1] ?? 0),
    textureRefs: [...refs.matchAll(/'(.*)'/g)].map((m) => m[1]!),
    min: point('Minimum'),
    max: point('Maximum'),
  }
  meshes.forEach((mesh, id) => {
    const instances = uses.get(id) ?? 0
    const faces = mesh.faces * instances
    if (mesh.types === 'triangle') counts.triangles += faces
    else if (mesh.types === 'line') counts.lines += faces
    else if (mesh.types === 'point') counts.points += faces
    else if (mesh.types === 'polygon') counts.polygons += faces
    else counts.mixed += faces
  })
  return counts
}

/** Extracts a zip with the system's `unzip` into `dir`. */
export async function unzipTo(zipPath: string, dir: string): Promise<void> {
  await run('unzip', ['-o', '-q', zipPath, '-d', dir])
}
