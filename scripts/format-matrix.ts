// Format matrix: every corpus model → glb → every writable format, each output reopened by
// `assimp info` (a reader we did not write) and compared by triangle count with the input as our
// reader sees it. Writes the generated section of docs/formats.md. Slow: a script, not a test.
//
//   node --import tsx scripts/format-matrix.ts
//   FORMAT_MATRIX_FILTER=ClearCoat node --import tsx scripts/format-matrix.ts   (matching files only, no doc)
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, dirname, extname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { unzipSync, zipSync } from 'fflate'
import {
  convertDocument,
  countSceneTriangles,
  failureMessage,
  loadGltfValidator,
  loadPlatform,
  readableFormats,
  readModel,
  writableFormats,
} from '../packages/engines/src/index.ts'
import { explainedReadFailure } from '../packages/engines/src/ops/diagnose-file.ts'
import { assimpInfo } from '../test/support/assimp-info.ts'
import { ASSIMP_MODELS, SHARED_CORPUS } from '../test/support/corpus.ts'
import type { Document } from '@gltf-transform/core'
import { createRequire } from 'node:module'

interface ValidatorReport {
  issues: { numErrors: number; messages: { code: string; message: string; pointer?: string; severity: number }[] }
}
/** Khronos glTF-Validator (dart2js build, untyped). */
const validator = createRequire(import.meta.url)('gltf-validator') as {
  validateBytes(
    data: Uint8Array,
    options?: { uri?: string; maxIssues?: number; externalResourceFunction?: (uri: string) => Promise<Uint8Array> },
  ): Promise<ValidatorReport>
}

/** glTF-Validator's errors for a glb, or for the .gltf of a zip bundle with its files; empty when valid. */
async function validatorErrors(bytes: Uint8Array, extension: string): Promise<string[]> {
  let report: ValidatorReport
  if (extension === 'zip') {
    const files = unzipSync(bytes)
    report = await validator.validateBytes(files['model.gltf']!, {
      uri: 'model.gltf',
      maxIssues: 0,
      externalResourceFunction: async (uri) => {
        const file = files[decodeURIComponent(uri)]
        if (!file) throw new Error(`missing ${uri}`)
        return file
      },
    })
  } else report = await validator.validateBytes(bytes, { maxIssues: 0 })
  return report.issues.messages.filter((m) => m.severity === 0).map((m) => `${m.code} at ${m.pointer ?? '?'}`)
}

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)))
const DOC = join(ROOT, 'docs', 'formats.md')
const START = '<!-- format-matrix:start -->'
const END = '<!-- format-matrix:end -->'

/** Corpus folders and the formats read from each (FBX and Collada only when a reader is registered). */
const FOLDERS: { dir: string; label: string; formats: string[] }[] = [
  { dir: join(ASSIMP_MODELS, 'OBJ'), label: 'OBJ', formats: ['obj'] },
  { dir: join(ASSIMP_MODELS, 'STL'), label: 'STL', formats: ['stl', ''] },
  { dir: join(ASSIMP_MODELS, 'PLY'), label: 'PLY', formats: ['ply'] },
  { dir: join(ASSIMP_MODELS, 'glTF2'), label: 'glTF2', formats: ['glb', 'gltf'] },
  // glTF 1.0 (read through assimp, io/gltf1.ts).
  { dir: join(ASSIMP_MODELS, 'glTF'), label: 'glTF', formats: ['glb', 'gltf'] },
  { dir: join(ASSIMP_MODELS, 'FBX'), label: 'FBX', formats: ['fbx'] },
  { dir: join(ASSIMP_MODELS, 'Collada'), label: 'Collada', formats: ['dae'] },
  { dir: SHARED_CORPUS, label: 'shared', formats: ['glb', 'gltf', 'obj'] },
]

interface Input {
  path: string
  /** Display name, relative to the corpus root. */
  name: string
  /** Format of the bytes handed to the reader (zip when the model's side files are bundled). */
  format: string
  /** Format of the model itself, for grouping. */
  modelFormat: string
  bytes: () => Uint8Array
}

function walk(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry)
    return statSync(path).isDirectory() ? walk(path) : [path]
  })
}

/** A .gltf pointing at files, or an .obj with an .mtl, is uploaded as a zip of its folder's files. */
function bundle(path: string, sideFiles: (name: string) => boolean): Uint8Array {
  const files: Record<string, Uint8Array> = { [basename(path)]: new Uint8Array(readFileSync(path)) }
  for (const entry of readdirSync(dirname(path))) {
    const full = join(dirname(path), entry)
    if (entry !== basename(path) && statSync(full).isFile() && sideFiles(entry)) files[entry] = new Uint8Array(readFileSync(full))
  }
  return zipSync(files, { level: 1 })
}

function collectInputs(): Input[] {
  const readable = new Set(readableFormats())
  const inputs: Input[] = []
  for (const folder of FOLDERS) {
    for (const path of walk(folder.dir).sort()) {
      const ext = extname(path).slice(1).toLowerCase()
      if (!folder.formats.includes(ext)) continue
      const modelFormat = ext === '' ? folder.formats[0]! : ext
      if (!readable.has(modelFormat)) continue
      const name = relative(folder.dir === SHARED_CORPUS ? dirname(SHARED_CORPUS) : ASSIMP_MODELS, path)
      let format = modelFormat
      let bytes: () => Uint8Array = () => new Uint8Array(readFileSync(path))
      if (modelFormat === 'gltf') {
        const text = readFileSync(path, 'utf8')
        if (/"uri"\s*:\s*"(?!data:)/.test(text)) {
          format = 'zip'
          bytes = () => bundle(path, (entry) => !/\.(gltf|glb)$/i.test(entry))
        }
      } else if (modelFormat === 'obj' && /^\s*mtllib\s/m.test(readFileSync(path, 'latin1'))) {
        format = 'zip'
        bytes = () => bundle(path, (entry) => /\.(mtl|jpe?g|png)$/i.test(entry))
      }
      inputs.push({ path, name, format, modelFormat, bytes })
    }
  }
  return inputs
}

/** What `assimp info --raw` reads from written bytes; a zip is unpacked and its model.gltf (or model.obj) opened. */
async function assimpCounts(bytes: Uint8Array, extension: string, format: string): Promise<Counts> {
  const dir = await mkdtemp(join(tmpdir(), 'mos-matrix-'))
  try {
    let file = join(dir, `model.${extension}`)
    if (extension === 'zip') {
      const entries = unzipSync(bytes)
      for (const [name, content] of Object.entries(entries)) {
        await mkdir(dirname(join(dir, name)), { recursive: true })
        await writeFile(join(dir, name), content)
      }
      // A zip holds the target's model file beside its side files: model.gltf and model.bin, model.obj
      // with model.mtl and its images, model.dae with its images.
      file = join(dir, `model.${format}`)
    } else await writeFile(file, bytes)
    const counts = await assimpInfo(file, { raw: true })
    return { triangles: counts.triangles, lines: counts.lines, points: counts.points }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

type Outcome = { ok: true } | { ok: false; reason: string } | { ok: 'skip'; reason: string }
type Counts = { triangles: number; lines: number; points: number }

/** What each target holds besides triangles (lines and points are compared only where held). */
const HOLDS: Record<string, { lines: boolean; points: boolean }> = {
  stl: { lines: false, points: false },
  // As io/target-holds.ts says: the FBX writer writes triangles only, the COLLADA writer triangles and lines.
  fbx: { lines: false, points: false },
  dae: { lines: true, points: false },
}

/** Triangles, line segments and points the scenes draw, each mesh counted per instance. */
function sceneCounts(doc: Document): Counts {
  const counts = { triangles: countSceneTriangles(doc), lines: 0, points: 0 }
  for (const scene of doc.getRoot().listScenes()) {
    scene.traverse((node) => {
      for (const prim of node.getMesh()?.listPrimitives() ?? []) {
        const n = prim.getIndices()?.getCount() ?? prim.getAttribute('POSITION')?.getCount() ?? 0
        const mode = prim.getMode()
        if (mode === 0) counts.points += n
        else if (mode === 1) counts.lines += Math.floor(n / 2)
        else if (mode === 2) counts.lines += n
        else if (mode === 3) counts.lines += Math.max(0, n - 1)
      }
    })
  }
  return counts
}

function describe(c: Counts, keys: (keyof Counts)[]): string {
  return keys.map((k) => `${c[k]} ${k}`).join(', ')
}

/** PLY holds points only as a point cloud: beside faces they would read back as unused vertices. */
function holdsOf(format: string, expected: Counts) {
  if (format === 'ply') return { lines: false, points: expected.triangles === 0 }
  return HOLDS[format] ?? { lines: true, points: true }
}

async function check(
  platform: Awaited<ReturnType<typeof loadPlatform>>,
  bytes: Uint8Array,
  extension: string,
  format: string,
  expected: Counts,
): Promise<Outcome> {
  const holds = holdsOf(format, expected)
  const keys: (keyof Counts)[] = ['triangles', ...(holds.lines ? ['lines' as const] : []), ...(holds.points ? ['points' as const] : [])]
  const same = (c: Counts) => keys.every((k) => c[k] === expected[k])
  try {
    const ours = sceneCounts(await readModel(platform, bytes, extension))
    if (!same(ours)) return { ok: false, reason: `our reader reopens ${describe(ours, keys)}; expected ${describe(expected, keys)}` }
  } catch (error) {
    return { ok: false, reason: `our reader cannot reopen it: ${failureMessage(error)}` }
  }
  // assimp refuses meshes without faces from PLY ("Mesh contains no faces"): a point cloud is checked by our reader only.
  if (format === 'ply' && expected.triangles === 0) return { ok: true }
  try {
    const theirs = await assimpCounts(bytes, extension, format)
    if (!same(theirs)) return { ok: false, reason: `assimp reads ${describe(theirs, keys)}; expected ${describe(expected, keys)}` }
  } catch (error) {
    return { ok: false, reason: failureMessage(error).slice(0, 160) }
  }
  if (format === 'glb' || format === 'gltf') {
    const errors = await validatorErrors(bytes, extension)
    if (errors.length > 0) return { ok: false, reason: `glTF-Validator: ${errors.slice(0, 3).join('; ')}` }
  }
  return { ok: true }
}

const platform = await loadPlatform()
const gltfValidator = loadGltfValidator()
const targets = writableFormats().filter((f) => f !== 'glb')
// FORMAT_MATRIX_FILTER=substring runs only matching files and prints failures instead of writing the doc.
const filter = process.env.FORMAT_MATRIX_FILTER
const inputs = collectInputs().filter((input) => !filter || input.name.includes(filter))
const columns = ['glb', ...targets]
/** per model format → column → [passed, checked] */
const table = new Map<string, { files: number; read: number; cells: Map<string, [number, number]> }>()
const failures: string[] = []
const refused: string[] = []
const skipped = new Set<string>()
const started = Date.now()

for (const input of inputs) {
  const row = table.get(input.modelFormat) ?? { files: 0, read: 0, cells: new Map(columns.map((c) => [c, [0, 0] as [number, number]])) }
  table.set(input.modelFormat, row)
  row.files++
  let expected: Counts
  let glb: Uint8Array
  try {
    const doc = await readModel(platform, input.bytes(), input.format)
    expected = sceneCounts(doc)
    glb = (await convertDocument(platform, doc, 'glb')).bytes
  } catch (error) {
    // As a convert task says it: a glTF the library trips over is described by glTF-Validator.
    const explained = await explainedReadFailure(gltfValidator, input.bytes(), input.format, error)
    refused.push(`\`${input.name}\`: ${failureMessage(explained).slice(0, 200)}`)
    continue
  }
  row.read++
  const record = (column: string, outcome: Outcome) => {
    const cell = row.cells.get(column)!
    if (outcome.ok === 'skip') {
      skipped.add(`\`${input.name}\`: ${outcome.reason}`)
      return
    }
    cell[1]++
    if (outcome.ok) cell[0]++
    else failures.push(`${input.modelFormat} → ${column === 'glb' ? 'glb' : `glb → ${column}`}: \`${input.name}\`: ${outcome.reason}`)
  }
  record('glb', await check(platform, glb, 'glb', 'glb', expected))
  for (const target of targets) {
    const holds = holdsOf(target, expected)
    if (expected.triangles === 0 && !(holds.lines && expected.lines > 0) && !(holds.points && expected.points > 0)) {
      record(target, { ok: 'skip', reason: `${target} holds none of its ${describe(expected, ['lines', 'points'])}` })
      continue
    }
    try {
      const doc = await readModel(platform, glb, 'glb')
      const written = await convertDocument(platform, doc, target)
      record(target, await check(platform, written.bytes, written.extension, target, expected))
    } catch (error) {
      record(target, { ok: false, reason: `writer failed: ${failureMessage(error).slice(0, 160)}` })
    }
  }
  process.stdout.write('.')
}
process.stdout.write('\n')

const header = `| input | files | read | ${columns.map((c) => (c === 'glb' ? '→ glb' : `glb → ${c}`)).join(' | ')} |`
const rule = `|${' --- |'.repeat(3 + columns.length)}`
const rows = [...table].map(
  ([format, row]) =>
    `| ${format} | ${row.files} | ${row.read} | ${columns
      .map((c) => {
        const [passed, total] = row.cells.get(c)!
        return total === 0 ? '–' : `${passed}/${total}${passed === total ? '' : ' ✗'}`
      })
      .join(' | ')} |`,
)
const section = [
  START,
  '## Format matrix (generated)',
  '',
  `Generated by \`node --import tsx scripts/format-matrix.ts\` on ${new Date().toISOString().slice(0, 10)} ` +
    `(${inputs.length} corpus files, ${((Date.now() - started) / 1000).toFixed(0)} s). A cell counts the files whose output ` +
    '`assimp info --raw` opens with exactly the triangles, line segments and points our reader found in the input ' +
    '(lines and points only where the target holds them: not STL or FBX, lines but not points in COLLADA; PLY holds points only as a point cloud), and our own reader reopens with the ' +
    'same counts; glb and gltf outputs must also pass Khronos glTF-Validator with no error. "→ glb" is the input converted to glb, "glb → X" that glb converted to X by the convert job\'s code. ' +
    '`gltf` output is the zip bundle, unpacked before assimp opens it. Point clouds written as PLY are checked by our ' +
    'reader only (assimp refuses PLY meshes without faces). A glTF whose `.gltf` names side files, and an `.obj` with ' +
    '`mtllib`, are uploaded as a zip of their folder, as a user would.',
  '',
  header,
  rule,
  ...rows,
  '',
  `### Failing conversions (${failures.length})`,
  '',
  ...(failures.length > 0 ? failures.map((f) => `- ${f}`) : ['None.']),
  '',
  `### Inputs refused with a reason (${refused.length})`,
  '',
  'Each would end as a failed convert task with this message. Deliberately broken corpus files belong here.',
  '',
  ...(refused.length > 0 ? refused.map((f) => `- ${f}`) : ['None.']),
  '',
  `### Not compared (${skipped.size})`,
  '',
  ...(skipped.size > 0 ? [...skipped].map((f) => `- ${f}`) : ['None.']),
  END,
].join('\n')

if (filter) {
  console.log([...failures, ...refused].join('\n') || 'no failures')
  process.exit(0)
}
const doc = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '# Formats\n'
const next = doc.includes(START)
  ? doc.slice(0, doc.indexOf(START)) + section + doc.slice(doc.indexOf(END) + END.length)
  : `${doc.trimEnd()}\n\n${section}\n`
writeFileSync(DOC, next)
console.log(`${inputs.length} files, ${failures.length} failing conversions, ${refused.length} refused inputs → ${relative(ROOT, DOC)}`)
