// Runs every engine operation, with a few option sets, over a representative subset of the corpus
// through the engines pool, and writes (or checks) a manifest of sha256 per output. A refactor of the
// engines must leave the manifest unchanged. Zip outputs are hashed entry by entry (name and bytes):
// their timestamps vary from run to run.
//
//   npx tsx scripts/compare-outputs.ts --write /tmp/before.json
//   npx tsx scripts/compare-outputs.ts --check /tmp/before.json
//
// Options are given in the contract's names and, for compress, also in the engine's former names,
// so the same script runs on a checkout from before the operation registry (which took those).
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { basename, extname, join } from 'node:path'
import { unzipSync } from 'fflate'
import { createEnginePool } from '../packages/engines/src/index.ts'
import type { JobName, JobResult } from '../packages/engines/src/jobs.ts'
import { ASSIMP_MODELS, SHARED_CORPUS } from '../test/support/corpus.ts'

const MODELS = [
  ...['DenseSphere', 'chr_knight', 'pirate-meshopt', 'ShapeCollection'].map((name) => join(SHARED_CORPUS, 'glb', `${name}.glb`)),
  ...['cow', 'suzanne', 'teapot', 'fandisk', 'spot', 'beast'].map((name) => join(SHARED_CORPUS, 'obj', `${name}.obj`)),
  ...[
    'glTF2/BoxTextured-glTF-Binary/BoxTextured.glb',
    'glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb',
    'glTF2/BoxBadNormals-glTF-Binary/BoxBadNormals.glb',
    'glTF2/BoxTextured-glTF-Embedded/BoxTextured.gltf',
    'OBJ/box.obj',
    'OBJ/spider.obj',
    'OBJ/cube_with_vertexcolors.obj',
    'OBJ/concave_polygon.obj',
    'OBJ/testpoints.obj',
    'STL/Spider_binary.stl',
    'STL/Wuson.stl',
    'STL/sphereWithHole.stl',
    'PLY/cube.ply',
    'PLY/Wuson.ply',
    'PLY/float-color.ply',
    'PLY/points.ply',
    'Collada/duck.dae',
    'Collada/cube_with_2UVs.DAE',
    'Collada/teapots.DAE',
    'Collada/kwxport_test_vcolors.dae',
    'FBX/box.fbx',
    'FBX/spider.fbx',
    'FBX/phong_cube.fbx',
    'FBX/cubes_with_names.fbx',
  ].map((path) => join(ASSIMP_MODELS, path)),
]

/** Models with textures, and standalone images, for the texture operations. */
const TEXTURED = [
  join(SHARED_CORPUS, 'glb', 'chr_knight.glb'),
  join(ASSIMP_MODELS, 'glTF2/BoxTextured-glTF-Binary/BoxTextured.glb'),
  join(ASSIMP_MODELS, 'glTF2/BoxTextured-glTF-Embedded/BoxTextured.gltf'),
  join(ASSIMP_MODELS, 'Collada/Collada_Sample.jpg'),
  join(ASSIMP_MODELS, 'OBJ/wal67ar_small.jpg'),
  join(ASSIMP_MODELS, 'Collada/teapots_reference.png'),
]

type OptionSet = { label: string; options: Record<string, unknown> }

/** The compress options in both naming schemes (see the note at the top). */
function compressSet(label: string, o: Record<string, string | number>): OptionSet {
  const former: Record<string, string> = {
    position_quantization_bits: 'positionBits',
    normal_quantization_bits: 'normalBits',
    texcoord_quantization_bits: 'texcoordBits',
    color_quantization_bits: 'colorBits',
    generic_quantization_bits: 'genericBits',
    meshopt_compression_level: 'meshoptLevel',
  }
  const options: Record<string, unknown> = { ...o }
  for (const [key, value] of Object.entries(o)) if (former[key]) options[former[key]] = value
  return { label, options }
}

const RUNS: { name: JobName; files: string[]; sets: OptionSet[] }[] = [
  {
    name: 'compress',
    files: MODELS,
    sets: [
      compressSet('draco-7', { engine: 'draco', level: 7 }),
      compressSet('draco-10-bits', { engine: 'draco', level: 10, position_quantization_bits: 12, normal_quantization_bits: 8 }),
      compressSet('meshopt-high', { engine: 'meshopt', level: 7, meshopt_compression_level: 'high' }),
      compressSet('meshopt-medium-9', { engine: 'meshopt', level: 9, meshopt_compression_level: 'medium' }),
      compressSet('meshopt-low', { engine: 'meshopt', level: 7, meshopt_compression_level: 'low' }),
      compressSet('raw-0', { engine: 'draco', level: 0 }),
    ],
  },
  {
    name: 'convert',
    files: MODELS,
    sets: ['glb', 'gltf', 'obj', 'stl', 'ply'].map((target) => ({ label: target, options: { target_format: target } })),
  },
  { name: 'repair', files: MODELS, sets: [{ label: 'default', options: {} }] },
  { name: 'diagnose', files: MODELS, sets: [{ label: 'default', options: {} }] },
  {
    name: 'texture_optimize',
    files: TEXTURED,
    sets: [
      { label: 'webp', options: { format: 'webp', quality: 82 } },
      { label: 'jpeg-60', options: { format: 'jpeg', quality: 60 } },
      { label: 'png', options: { format: 'png', quality: 6 } },
    ],
  },
  {
    name: 'texture_ktx2',
    files: TEXTURED.filter((path) => !path.endsWith('chr_knight.glb')),
    sets: [
      { label: 'etc1s', options: { uastc: false, quality: 128 } },
      { label: 'uastc', options: { uastc: true, quality: 2 } },
    ],
  },
]

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

/** The fingerprint of one result: its hash, its zip entries' hashes, or its failure. */
function fingerprint(result: JobResult): string {
  if (!result.ok) return `failed: ${result.message}`
  const bytes = result.bytes ?? new Uint8Array()
  const details = result.details ? ` details:${sha256(new TextEncoder().encode(JSON.stringify(result.details)))}` : ''
  if (result.extension !== 'zip') return `${result.extension} ${sha256(bytes)}${details}`
  const entries = Object.entries(unzipSync(bytes)).sort(([a], [b]) => a.localeCompare(b))
  return `zip ${entries.map(([name, entry]) => `${name}=${sha256(entry)}`).join(' ')}${details}`
}

async function main(): Promise<void> {
  const [mode, file] = process.argv.slice(2)
  if ((mode !== '--write' && mode !== '--check') || !file) {
    console.error('usage: tsx scripts/compare-outputs.ts --write FILE | --check FILE')
    process.exit(2)
  }
  const pool = createEnginePool({ threads: 2, prestart: true })
  const manifest: Record<string, string> = {}
  const started = Date.now()
  const jobs: Promise<void>[] = []
  for (const run of RUNS) {
    for (const path of run.files.filter((path) => existsSync(path))) {
      const format = extname(path).slice(1).toLowerCase()
      const bytes = await readFile(path)
      for (const set of run.sets) {
        const key = `${run.name} ${set.label} ${path.replace(SHARED_CORPUS, 'corpus').replace(ASSIMP_MODELS, 'assimp')}`
        jobs.push(
          pool
            .run({ name: run.name, input: { bytes: new Uint8Array(bytes) }, format, filename: basename(path), options: set.options })
            .then((result) => {
              manifest[key] = fingerprint(result)
            }),
        )
      }
    }
  }
  await Promise.all(jobs)
  await pool.destroy()
  const sorted = Object.fromEntries(Object.entries(manifest).sort(([a], [b]) => a.localeCompare(b)))
  console.log(`${Object.keys(sorted).length} outputs in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  if (mode === '--write') {
    await writeFile(file, `${JSON.stringify(sorted, null, 1)}\n`)
    return
  }
  const expected = JSON.parse(await readFile(file, 'utf8')) as Record<string, string>
  const keys = [...new Set([...Object.keys(expected), ...Object.keys(sorted)])].sort()
  const differing = keys.filter((key) => expected[key] !== sorted[key])
  for (const key of differing) console.log(`DIFFERS ${key}\n  expected ${expected[key] ?? '(none)'}\n  actual   ${sorted[key] ?? '(none)'}`)
  console.log(differing.length === 0 ? `identical: ${keys.length} outputs` : `${differing.length} of ${keys.length} outputs differ`)
  if (differing.length > 0) process.exitCode = 1
}

await main()
