// The fidelity run (issue #20, "what must be shown"): real inputs from the assimp corpus converted
// in-process to every writable target, each output read back with the `assimp` CLI (assjson
// export) and, for glb/gltf, with glTF-Validator. Per case and kind of content the outcome is
// "kept" (the reader finds it), "noted" (a note on the task names it as dropped) or "lost"
// (neither: a defect). Shared by test/fidelity.test.ts and scripts/fidelity-matrix.ts, which
// prints the matrix in docs/formats.md from the same run.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, dirname, extname, join } from 'node:path'
import type { Document, Primitive, Texture } from '@gltf-transform/core'
import { cloneDocument } from '@gltf-transform/functions'
import { unzipSync, zipSync } from 'fflate'
import { assimp } from '../../../../test/support/corpus.ts'
import { convertDocument, type Platform, readModel } from '../../src/index.ts'
import { assimpReadBack, openable, validatorReport } from './fidelity-readback.ts'

/** Kinds of content compared, in the matrix's row order. */
export const KINDS = [
  'triangles',
  'lines',
  'points',
  'point clouds',
  'materials',
  'base colour maps',
  'other maps',
  'texture transforms',
  'UVs',
  'second UV sets',
  'normals',
  'point normals',
  'colours',
  'skins',
  'animations',
  'morph targets',
] as const
export type Kind = (typeof KINDS)[number]
export type Outcome = 'kept' | 'noted' | 'lost'

/** Targets in the matrix's column order. */
export const TARGETS = ['glb', 'gltf', 'obj', 'stl', 'ply', 'fbx', 'dae'] as const
export type Target = (typeof TARGETS)[number]

const all = (outcome: Outcome): Record<Kind, Outcome> => Object.fromEntries(KINDS.map((kind) => [kind, outcome])) as Record<Kind, Outcome>

/**
 * What each target is expected to do with each kind the input has: the one table to update when a
 * writer learns to keep something (then its cells flip from "noted" to "kept").
 */
export const EXPECTED: Record<Target, Record<Kind, Outcome>> = {
  glb: all('kept'),
  gltf: all('kept'),
  obj: {
    ...all('noted'),
    triangles: 'kept',
    lines: 'kept',
    points: 'kept',
    'point clouds': 'kept',
    UVs: 'kept',
    normals: 'kept',
    colours: 'kept',
    // With materials beyond names, the .obj comes zipped with its .mtl and images.
    materials: 'kept',
    'base colour maps': 'kept',
    'other maps': 'kept',
  },
  stl: { ...all('noted'), triangles: 'kept' },
  // Base colour maps as MeshLab writes them (comment TextureFile), the .ply zipped with its images.
  ply: {
    ...all('noted'),
    triangles: 'kept',
    'point clouds': 'kept',
    UVs: 'kept',
    normals: 'kept',
    'point normals': 'kept',
    colours: 'kept',
    'base colour maps': 'kept',
  },
  fbx: {
    ...all('noted'),
    triangles: 'kept',
    materials: 'kept',
    'base colour maps': 'kept',
    'other maps': 'kept',
    UVs: 'kept',
    normals: 'kept',
    colours: 'kept',
  },
  dae: {
    ...all('noted'),
    triangles: 'kept',
    lines: 'kept',
    materials: 'kept',
    'base colour maps': 'kept',
    'other maps': 'kept',
    UVs: 'kept',
    'second UV sets': 'kept',
    normals: 'kept',
    colours: 'kept',
    skins: 'kept',
    animations: 'kept',
  },
}

/**
 * Inputs whose content a target holds in general but not in this file, each with its reason: the
 * case expects the note instead. Keyed by input name, then target.
 */
const EXCEPTIONS: Record<string, Partial<Record<Target, Partial<Record<Kind, Outcome>>>>> = {
  // Its one animation drives morph weights only, which go with the morph targets COLLADA output drops.
  'glTF2/glTF-Sample-Models/AnimatedMorphCube-glTF/AnimatedMorphCube.gltf': { dae: { animations: 'noted' } },
}

/** What a case must give for a kind: the target's rule, unless the input is a listed exception. */
export function expectedOutcome(input: string, target: Target, kind: Kind): Outcome {
  return EXCEPTIONS[input]?.[target]?.[kind] ?? EXPECTED[target][kind]
}

/** One input: a path under the assimp corpus. */
export interface FidelityInput {
  name: string
}

/** ≥ 40 small real files of every readable format, chosen for the kinds they hold (skins, morphs, lines, points, UV sets, colours, textures). */
export const FIDELITY_INPUTS: FidelityInput[] = [
  ...['box.obj', 'testline.obj', 'testpoints.obj', 'testmixed.obj', 'point_cloud.obj', 'cube_with_vertexcolors.obj'].map((f) => ({
    name: `OBJ/${f}`,
  })),
  ...['concave_polygon.obj', 'number_formats.obj', 'regr_3429812.obj'].map((f) => ({ name: `OBJ/${f}` })),
  { name: 'OBJ/cube_usemtl.obj' },
  ...['triangle.stl', 'triangle_with_two_solids.stl', 'sphereWithHole.stl', 'Spider_binary.stl', '3DSMaxExport.STL'].map((f) => ({
    name: `STL/${f}`,
  })),
  ...['cube.ply', 'cube_binary.ply', 'float-color.ply', 'cube_uv.ply', 'points.ply'].map((f) => ({ name: `PLY/${f}` })),
  { name: 'glTF2/BoxTextured-glTF-Binary/BoxTextured.glb' },
  { name: 'glTF2/BoxTextured-glTF-Embedded/BoxTextured.gltf' },
  { name: 'glTF2/BoxBadNormals-glTF-Binary/BoxBadNormals.glb' },
  { name: 'glTF2/simple_skin/simple_skin.gltf' },
  { name: 'glTF2/glTF-Sample-Models/AnimatedMorphCube-glTF/AnimatedMorphCube.gltf' },
  { name: 'glTF2/BoxTexcoords-glTF/boxTexcoords.gltf' },
  { name: 'glTF2/textureTransform/TextureTransformTest.gltf' },
  { name: 'glTF2/cameras/Cameras.gltf' },
  ...['00', '01', '04', '06'].map((n) => ({ name: `glTF2/glTF-Asset-Generator/Mesh_PrimitiveMode/Mesh_PrimitiveMode_${n}.gltf` })),
  ...[
    'box.fbx',
    'phong_cube.fbx',
    'huesitos.fbx',
    'animation_with_skeleton.fbx',
    'maxPbrMaterial_metalRough.fbx',
    'box_orphant_embedded_texture.fbx',
    'cubes_with_names.fbx',
    'global_settings.fbx',
    'boxWithCompressedCTypeArray.FBX',
  ].map((f) => ({ name: `FBX/${f}` })),
  ...[
    'cube_with_2UVs.DAE',
    'cameras.dae',
    'lights.dae',
    'kwxport_test_vcolors.dae',
    'regr01.dae',
    'cube_tristrips.dae',
    'ConcavePolygon.dae',
    'sphere.dae',
    'cube_UTF8BOM.dae',
    'teapot_instancenodes.DAE',
  ].map((f) => ({ name: `Collada/${f}` })),
]

/**
 * The material assimp makes for meshes that have none: its readers add it to FBX and COLLADA
 * inputs (so our reader carries it) and to its reading of any output; counted on neither side.
 */
export const ASSIMP_DEFAULT_MATERIAL = 'DefaultMaterial'

/** What one model holds, per kind (counts; for UV sets the most any part has). */
export type Contents = Record<Kind, number>

/** One conversion's result. */
export interface FidelityCase {
  input: string
  target: Target
  /** The failed task's message when convert refused the model. */
  refused?: string
  notes: string[]
  /** What the input holds, as our reader sees it. */
  has: Contents
  /** What assimp (and the validator for glTF) reads back from the output. */
  readBack: Contents
  /** glTF-Validator's error codes (glb/gltf only). */
  validatorErrors: string[]
  outcomes: Partial<Record<Kind, Outcome>>
}

/** Counts a Document's content the way the matrix compares it: geometry per drawn node instance. */
export function documentContents(doc: Document): Contents {
  const root = doc.getRoot()
  const counts = noContents()
  const prims = new Set<Primitive>()
  for (const scene of root.listScenes()) {
    scene.traverse((node) => {
      for (const prim of node.getMesh()?.listPrimitives() ?? []) {
        const vertices = prim.getAttribute('POSITION')?.getCount() ?? 0
        if (vertices === 0) continue
        prims.add(prim)
        const n = prim.getIndices()?.getCount() ?? vertices
        const mode = prim.getMode()
        if (mode === 4) counts.triangles += Math.floor(n / 3)
        else if (mode > 4) counts.triangles += Math.max(0, n - 2)
        else if (mode === 1) counts.lines += Math.floor(n / 2)
        else if (mode === 2) counts.lines += n
        else if (mode === 3) counts.lines += Math.max(0, n - 1)
        else counts.points += n
      }
    })
  }
  // Points alone are a point cloud, which some targets hold when they hold no points beside faces.
  if (counts.triangles + counts.lines === 0) [counts['point clouds'], counts.points] = [counts.points, 0]
  const list = [...prims]
  const faces = list.filter((p) => p.getMode() >= 4)
  const loose = list.filter((p) => p.getMode() < 4)
  counts.materials = new Set(list.map((p) => p.getMaterial()).filter((m) => m && m.getName() !== ASSIMP_DEFAULT_MATERIAL)).size
  const slots = (texture: Texture) =>
    doc
      .getGraph()
      .listParentEdges(texture)
      .map((edge) => edge.getName())
  const textures = root.listTextures().filter((t) => slots(t).some((slot) => slot.endsWith('Texture')))
  counts['base colour maps'] = textures.filter((t) => slots(t).includes('baseColorTexture')).length
  counts['other maps'] = textures.length - counts['base colour maps']
  const infos = root.listMaterials().flatMap((m) => [m.getBaseColorTextureInfo(), m.getNormalTextureInfo(), m.getEmissiveTextureInfo()])
  counts['texture transforms'] = infos.filter((info) => info?.getExtension('KHR_texture_transform')).length
  const uvSets = (p: Primitive) => p.listSemantics().filter((s) => s.startsWith('TEXCOORD_')).length
  counts.UVs = list.filter((p) => uvSets(p) > 0).length
  counts['second UV sets'] = Math.max(0, ...list.map((p) => uvSets(p) - 1))
  counts.normals = faces.filter((p) => p.getAttribute('NORMAL')).length
  counts['point normals'] = loose.filter((p) => p.getAttribute('NORMAL')).length
  counts.colours = list.filter((p) => p.getAttribute('COLOR_0')).length
  counts.skins = root.listSkins().length
  counts.animations = root.listAnimations().length
  counts['morph targets'] = list.reduce((n, p) => n + p.listTargets().length, 0)
  return counts
}

/** Zero of every kind. */
export function noContents(): Contents {
  return Object.fromEntries(KINDS.map((kind) => [kind, 0])) as Contents
}

/** Runs at most `limit` tasks at once (assimp children: the machine has 2 cores). */
function createLimiter(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0
  const waiting: (() => void)[] = []
  return async (task) => {
    if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve))
    active++
    try {
      return await task()
    } finally {
      active--
      waiting.shift()?.()
    }
  }
}

/** Whether a note says this kind was dropped (notes about values made valid name no drop). */
function namesDrop(kind: Kind, note: string): boolean {
  if (!/dropped|replaced/.test(note)) return false
  const slots = [...(/\(([^)]*)\)$/.exec(note)?.[1] ?? '').matchAll(/(\w+) \d+/g)].map((m) => m[1])
  switch (kind) {
    case 'points':
      return /cannot hold points/.test(note)
    case 'point clouds':
      return false
    case 'base colour maps':
      return slots.includes('baseColor')
    case 'other maps':
      return slots.some((slot) => slot !== 'baseColor')
    case 'texture transforms':
      return /texture transforms|cannot hold textures/.test(note)
    case 'UVs':
      return /cannot hold UVs|holds UVs only|UVs of [1-9]/.test(note)
    case 'second UV sets':
      return /cannot hold UVs|holds UVs only|more UV set/.test(note)
    case 'normals':
      return /facet normals|holds normals only where/.test(note)
    case 'point normals':
      return /normals of [1-9]\d* and UVs of \d+ point or line/.test(note)
    default:
      return new RegExp(`\\b${kind}\\b`).test(note)
  }
}

function outcomeOf(kind: Kind, input: number, output: number, notes: string[]): Outcome {
  if (notes.some((note) => namesDrop(kind, note))) return 'noted'
  if (kind === 'triangles' || kind === 'lines' || kind === 'points' || kind === 'point clouds') return output === input ? 'kept' : 'lost'
  // Present or not: assimp splits and merges meshes, so their counts are not the input's.
  if (kind === 'UVs' || kind === 'normals' || kind === 'point normals' || kind === 'colours' || kind === 'skins')
    return output > 0 ? 'kept' : 'lost'
  return output >= input ? 'kept' : 'lost'
}

/** How many images a PLY zip's model.ply names in `comment TextureFile` lines. */
function plyTextureFiles(zip: Uint8Array): number {
  const head = new TextDecoder('latin1').decode(unzipSync(zip)['model.ply']!.subarray(0, 8192)).split('end_header')[0]!
  return head.match(/^comment TextureFile /gm)?.length ?? 0
}

/**
 * An input's bytes as a user would upload them: a .gltf naming side files, or an .obj with an
 * `mtllib`, as a zip of its folder's other files (models left out: a zip holds one).
 */
export function inputBytes(input: FidelityInput): { bytes: Uint8Array; format: string } {
  const path = assimp(input.name)
  const bytes = new Uint8Array(readFileSync(path))
  const format = extname(path).slice(1).toLowerCase()
  const text = new TextDecoder().decode(bytes)
  const namesFiles = format === 'gltf' ? /"uri"\s*:\s*"(?!data:)/.test(text) : format === 'obj' && /^\s*mtllib\s/m.test(text)
  if (!namesFiles) return { bytes, format }
  const files: Record<string, Uint8Array> = { [basename(path)]: bytes }
  for (const entry of readdirSync(dirname(path))) {
    const full = join(dirname(path), entry)
    if (!/\.(gltf|glb|obj)$/i.test(entry) && statSync(full).isFile()) files[entry] = new Uint8Array(readFileSync(full))
  }
  return { bytes: zipSync(files, { level: 1 }), format: 'zip' }
}

/**
 * Converts one read input to one target and reads the output back. `assimpSlot` runs the assimp
 * child (limited by the caller).
 */
async function runCase(
  platform: Platform,
  source: Document,
  input: string,
  target: Target,
  assimpSlot: <T>(task: () => Promise<T>) => Promise<T>,
): Promise<FidelityCase> {
  const inputContents = documentContents(source)
  const empty = noContents()
  const base = { input, target, has: inputContents, readBack: empty, validatorErrors: [], outcomes: {} }
  let written: Awaited<ReturnType<typeof convertDocument>>
  try {
    written = await convertDocument(platform, cloneDocument(source), target)
  } catch (error) {
    return { ...base, refused: error instanceof Error ? error.message : String(error), notes: [] }
  }
  const notes = written.notes ?? []
  const dir = await mkdtemp(join(tmpdir(), 'mos-fidelity-'))
  try {
    const file = await openable(dir, written.bytes, written.extension, target)
    const output = await assimpSlot(() => assimpReadBack(file, dir)).catch((error: Error) => {
      throw new Error(`${input} → ${target}: ${error.message}`)
    })
    // assimp reads no vertex of a PLY without faces: a point cloud is counted by our reader.
    if (target === 'ply' && output.triangles === 0) {
      output['point clouds'] = documentContents(await readModel(platform, written.bytes, 'ply'))['point clouds']
    }
    // assimp's PLY reader takes one `comment TextureFile`: the faces' texnumber choice among several
    // (MeshLab's) is counted by our reader.
    if (target === 'ply' && written.extension === 'zip' && plyTextureFiles(written.bytes) > 1) {
      output['base colour maps'] = documentContents(await readModel(platform, written.bytes, 'zip'))['base colour maps']
    }
    let validatorErrors: string[] = []
    if (target === 'glb' || target === 'gltf') {
      const report = await validatorReport(written.bytes, written.extension)
      validatorErrors = report.errors
      output['morph targets'] = report.morphTargets ? inputContents['morph targets'] : 0
    }
    const outcomes: Partial<Record<Kind, Outcome>> = {}
    for (const kind of KINDS) {
      if (inputContents[kind] > 0) outcomes[kind] = outcomeOf(kind, inputContents[kind], output[kind], notes)
    }
    return { ...base, notes, readBack: output, validatorErrors, outcomes }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** Runs every input to every target: inputs read once, conversions in this thread, at most two assimp children. */
export async function runFidelity(platform: Platform, inputs: FidelityInput[] = FIDELITY_INPUTS): Promise<FidelityCase[]> {
  const slot = createLimiter(2)
  const pending: Promise<FidelityCase>[] = []
  for (const input of inputs) {
    const { bytes, format } = inputBytes(input)
    const source = await readModel(platform, bytes, format)
    for (const target of TARGETS) {
      pending.push(runCase(platform, source, input.name, target, slot))
      // Let the previous case's assimp child start before the next conversion takes the thread.
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
  return Promise.all(pending)
}

/** The matrix for docs/formats.md: per kind and target, how many inputs holding it kept it, had it noted, or lost it. */
export function renderMatrix(cases: FidelityCase[]): string {
  const inputs = new Set(cases.map((c) => c.input)).size
  const cell = (kind: Kind, target: Target) => {
    const counts = { kept: 0, noted: 0, lost: 0 }
    for (const c of cases) if (c.target === target && c.outcomes[kind]) counts[c.outcomes[kind]]++
    const parts = (['kept', 'noted', 'lost'] as const).filter((o) => counts[o] > 0).map((o) => `${o} ${counts[o]}`)
    return parts.length > 0 ? parts.join(', ') : '–'
  }
  const refused = (target: Target) => cases.filter((c) => c.target === target && c.refused).length
  const gltfOutputs = cases.filter((c) => (c.target === 'glb' || c.target === 'gltf') && !c.refused)
  const lines = [
    '## Fidelity matrix (generated)',
    '',
    `Generated by \`npm run fidelity-matrix -w @mos/engines\` from the run of \`packages/engines/test/fidelity.test.ts\` (which fails when this section is not what the run gives): ${inputs} files of the assimp corpus × ${TARGETS.length} targets, converted in-process, each output read back by \`assimp export -fassjson\` (morph targets, which assimp's dump leaves out, by glTF-Validator on glb/gltf). A cell counts the inputs holding that kind whose output **kept** it (assimp reads back the same triangles, lines and points; at least as many materials, textures, UV sets and animations; normals, colours and bones present), had it **noted** (a note on the task names it as dropped) or **lost** it (neither). The expectation per target and kind is one table, \`EXPECTED\` in \`packages/engines/test/support/fidelity.ts\`.`,
    '',
    `| kind | ${TARGETS.join(' | ')} |`,
    `| --- | ${TARGETS.map(() => '---').join(' | ')} |`,
    ...KINDS.map((kind) => `| ${kind} | ${TARGETS.map((target) => cell(kind, target)).join(' | ')} |`),
    `| refused (holds none of the model's geometry) | ${TARGETS.map((target) => String(refused(target) || '–')).join(' | ')} |`,
    '',
    `glTF-Validator errors over the ${gltfOutputs.length} glb/gltf outputs: ${gltfOutputs.reduce((n, c) => n + c.validatorErrors.length, 0)}.`,
    '',
  ]
  return lines.join('\n')
}

export const MATRIX_START = '<!-- fidelity-matrix:start -->'
export const MATRIX_END = '<!-- fidelity-matrix:end -->'

/** The generated section as it stands in a page (between the markers, exclusive). */
export function matrixSection(page: string): string | undefined {
  const start = page.indexOf(MATRIX_START)
  const end = page.indexOf(MATRIX_END)
  return start >= 0 && end > start ? page.slice(start + MATRIX_START.length, end).trim() : undefined
}

/** Inputs not installed (the corpus is a Debian package: assimp-testmodels). */
export function missingInputs(inputs: FidelityInput[] = FIDELITY_INPUTS): string[] {
  return inputs.filter((input) => !statSync(assimp(input.name), { throwIfNoEntry: false })).map((input) => input.name)
}
