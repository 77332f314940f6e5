import { type Accessor, type Animation, type Document, type Mesh, Node, type Texture } from '@gltf-transform/core'
import { primitiveTriangles } from '../geometry-stats.ts'
import type {
  AnimationDiagnosis,
  DiagnosisIssue,
  DiagnosisResult,
  IssueSeverity,
  MeshDiagnosis,
  TextureDiagnosis,
} from './diagnosis-types.ts'
import { type GltfValidation, validatorIssues } from './gltf-validation.ts'
import { readImageHeader } from '../io/image-header.ts'
import { countPrimitiveDefects, type PrimitiveDefects } from '../geometry/mesh-defects.ts'
import { countUnusedData } from './unused-data.ts'
import { GEOMETRY_COMPRESSION } from './compression-extensions.ts'

export interface DiagnoseOptions {
  /** Input format name (glb, gltf, obj, ...). */
  format: string
  /** Format version as the file declares it (see formatVersion). */
  version: string
  /** Size of the uploaded file. */
  fileSizeBytes: number
  /** glTF-Validator's findings for glTF input, folded into the issues. */
  validation?: GltfValidation | null
  /** Textures larger than this on either side are reported as oversized. */
  maxTextureSize?: number
  /** Geometry below this size is not worth a compression recommendation. */
  minCompressibleBytes?: number
}

export const DIAGNOSE_DEFAULTS = {
  maxTextureSize: 4096,
  minCompressibleBytes: 16 * 1024,
} as const

/**
 * One severity per issue type (docs/diagnose.md has the table and the reasons). Validator
 * findings (`gltf_*`) take theirs from the validator's level instead.
 */
export const ISSUE_SEVERITIES = {
  out_of_range_indices: 'critical',
  non_finite_values: 'high',
  invalid_normals: 'high',
  missing_normals: 'medium',
  non_manifold_edges: 'medium',
  duplicate_vertices: 'medium',
  degenerate_faces: 'low',
  unused_vertices: 'low',
  oversized_texture: 'medium',
  non_power_of_two_texture: 'low',
  uncompressed_geometry: 'low',
  empty_nodes: 'low',
  unused_data: 'low',
} as const satisfies Record<string, IssueSeverity>

export type IssueType = keyof typeof ISSUE_SEVERITIES

/**
 * Share of raw (decoded) geometry bytes each engine removes at the default level 7, measured on the
 * corpus with the compress job (docs/diagnose.md): the expected savings are this share of the
 * geometry, over the file size.
 */
export const GEOMETRY_SAVINGS = { draco: 0.9, meshopt: 0.83 } as const

const DEFECT_TYPES: [keyof PrimitiveDefects, IssueType][] = [
  ['outOfRangeIndices', 'out_of_range_indices'],
  ['nonFiniteValues', 'non_finite_values'],
  ['invalidNormals', 'invalid_normals'],
  ['missingNormals', 'missing_normals'],
  ['nonManifoldEdges', 'non_manifold_edges'],
  ['duplicateVertices', 'duplicate_vertices'],
  ['degenerateFaces', 'degenerate_faces'],
  ['unusedVertices', 'unused_vertices'],
]

const issue = (type: IssueType, count: number): DiagnosisIssue => ({ type, count, severity: ISSUE_SEVERITIES[type] })

/**
 * Diagnoses a model without changing it: per mesh its content and exact defect counts, per texture
 * its real format and size, per animation its channels and duration, issues of the file, and what
 * to run about them.
 *
 * ```ts
 * const result = diagnose(doc, { format: 'glb', version: '2.0', fileSizeBytes: bytes.byteLength })
 * ```
 */
export function diagnose(doc: Document, options: DiagnoseOptions): DiagnosisResult {
  const o = { ...DIAGNOSE_DEFAULTS, ...options }
  const root = doc.getRoot()
  const meshOfAccessor = meshOfEachAccessor(doc)
  const validator = o.validation ? validatorIssues(o.validation, (i) => meshOfAccessor.get(i)) : null

  const totals: Record<string, number> = {}
  const meshResults = root.listMeshes().map((mesh, m) => {
    const result = diagnoseMesh(mesh, m)
    for (const { type, count } of result.issues) totals[type] = (totals[type] ?? 0) + count
    result.issues.push(...(validator?.byMesh.get(m) ?? []))
    return result
  })

  const textures = root.listTextures().map((texture, i) => diagnoseTexture(texture, i))
  const facts = fileFacts(doc, textures, o.maxTextureSize)
  const fileIssues = [...issuesOfFile(facts), ...(validator?.file ?? [])]
  const recommendations = recommend({
    ...facts,
    totals,
    fileSizeBytes: o.fileSizeBytes,
    minCompressibleBytes: o.minCompressibleBytes,
    textures,
    maxTextureSize: o.maxTextureSize,
  })

  // glTF 1.0 (read through assimp, io/gltf1.ts): first of all, the version today's tools read.
  if ((o.format === 'glb' || o.format === 'gltf') && o.version === '1.0') {
    recommendations.unshift(
      'convert to glb or gltf (glTF 2.0: few viewers and engines read glTF 1.0 today; its techniques become PBR materials)',
    )
  }
  return {
    format: o.format,
    version: o.version,
    file_size_bytes: o.fileSizeBytes,
    meshes: meshResults,
    textures,
    animations: root.listAnimations().map(diagnoseAnimation),
    total_issues: meshResults.reduce((sum, mesh) => sum + mesh.issues.length, 0) + fileIssues.length,
    recommendations,
    issues: fileIssues,
  }
}

/** The index of the first mesh using each accessor, by accessor index: where validator findings belong. */
function meshOfEachAccessor(doc: Document): Map<number, number> {
  const root = doc.getRoot()
  const accessorIndex = new Map(root.listAccessors().map((accessor, i) => [accessor, i]))
  const meshOfAccessor = new Map<number, number>()
  root.listMeshes().forEach((mesh, m) => {
    for (const prim of mesh.listPrimitives()) {
      for (const accessor of [prim.getIndices(), ...prim.listAttributes()]) {
        const index = accessor ? accessorIndex.get(accessor) : undefined
        if (index !== undefined && !meshOfAccessor.has(index)) meshOfAccessor.set(index, m)
      }
    }
  })
  return meshOfAccessor
}

/** What the file shows beyond its meshes' defects: the counts its issues and recommendations rest on. */
interface FileFacts {
  /** Textures larger than the bound on either side. */
  oversized: number
  /** Textures of known size with a side that is not a power of two. */
  nonPowerOfTwo: number
  /** Whether the file already uses Draco or meshopt. */
  compressed: boolean
  /** Meshes with primitives in a file that uses neither. */
  uncompressedMeshes: number
  geometryBytes: number
  textureBytes: number
  emptyNodes: number
  unusedData: number
}

function fileFacts(doc: Document, textures: TextureDiagnosis[], maxTextureSize: number): FileFacts {
  const root = doc.getRoot()
  const compressed = root.listExtensionsUsed().some((e) => GEOMETRY_COMPRESSION.has(e.extensionName))
  return {
    oversized: textures.filter((t) => t.width > maxTextureSize || t.height > maxTextureSize).length,
    nonPowerOfTwo: textures.filter((t) => t.width > 0 && t.height > 0 && !(isPowerOfTwo(t.width) && isPowerOfTwo(t.height))).length,
    compressed,
    uncompressedMeshes: compressed ? 0 : root.listMeshes().filter((mesh) => mesh.listPrimitives().length > 0).length,
    geometryBytes: measureGeometryBytes(doc),
    textureBytes: root.listTextures().reduce((sum, t) => sum + (t.getImage()?.byteLength ?? 0), 0),
    ...countUnusedData(doc),
  }
}

/** The file's own issues (validator findings apart), in the order docs/diagnose.md lists them. */
function issuesOfFile(facts: FileFacts): DiagnosisIssue[] {
  const counts: [IssueType, number][] = [
    ['oversized_texture', facts.oversized],
    ['non_power_of_two_texture', facts.nonPowerOfTwo],
    ['uncompressed_geometry', facts.uncompressedMeshes],
    ['empty_nodes', facts.emptyNodes],
    ['unused_data', facts.unusedData],
  ]
  return counts.filter(([, count]) => count > 0).map(([type, count]) => issue(type, count))
}

function diagnoseMesh(mesh: Mesh, index: number): MeshDiagnosis {
  const prims = mesh.listPrimitives()
  const sum: Record<string, number> = {}
  for (const prim of prims) {
    const defects = countPrimitiveDefects(prim)
    for (const [key, type] of DEFECT_TYPES) sum[type] = (sum[type] ?? 0) + defects[key]
  }
  const semantics = new Set(prims.flatMap((prim) => prim.listSemantics()))
  const skinnedByNode = mesh.listParents().some((parent) => parent instanceof Node && parent.getSkin() !== null)
  return {
    name: mesh.getName() || `mesh_${index}`,
    vertices: prims.reduce((total, prim) => total + (prim.getAttribute('POSITION')?.getCount() ?? 0), 0),
    triangles: prims.reduce((total, prim) => total + primitiveTriangles(prim), 0),
    has_normals: semantics.has('NORMAL'),
    has_texcoords: [...semantics].some((s) => s.startsWith('TEXCOORD_')),
    has_colors: [...semantics].some((s) => s.startsWith('COLOR_')),
    has_tangents: semantics.has('TANGENT'),
    skinned: skinnedByNode || semantics.has('JOINTS_0'),
    morph_targets: Math.max(0, ...prims.map((prim) => prim.listTargets().length)),
    issues: DEFECT_TYPES.filter(([, type]) => sum[type]! > 0).map(([, type]) => issue(type, sum[type]!)),
  }
}

function diagnoseTexture(texture: Texture, index: number): TextureDiagnosis {
  const image = texture.getImage() ?? new Uint8Array(0)
  const header = readImageHeader(image, texture.getMimeType())
  const format = header?.format ?? (texture.getMimeType().replace(/^image\//, '') || 'unknown')
  return {
    name: texture.getName() || texture.getURI() || `texture_${index}`,
    format: format === 'jpg' ? 'jpeg' : format,
    width: header?.width ?? 0,
    height: header?.height ?? 0,
    size_kb: Math.ceil(image.byteLength / 1024),
  }
}

function diagnoseAnimation(animation: Animation, index: number): AnimationDiagnosis {
  let end = 0
  for (const sampler of animation.listSamplers()) {
    const input = sampler.getInput()
    if (!input || input.getCount() === 0) continue
    const last = input.getMax([])[0] ?? 0
    if (Number.isFinite(last)) end = Math.max(end, last)
  }
  return {
    name: animation.getName() || `animation_${index}`,
    channels: animation.listChannels().length,
    duration_seconds: Math.round(end * 1000) / 1000,
  }
}

/** Decoded bytes of every accessor a primitive uses (vertex attributes, indices, morph targets). */
function measureGeometryBytes(doc: Document): number {
  const seen = new Set<Accessor>()
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      const accessors = [prim.getIndices(), ...prim.listAttributes(), ...prim.listTargets().flatMap((t) => t.listAttributes())]
      for (const accessor of accessors) if (accessor) seen.add(accessor)
    }
  }
  let bytes = 0
  for (const accessor of seen) bytes += accessor.getByteLength()
  return bytes
}

interface RecommendInput extends FileFacts {
  totals: Record<string, number>
  fileSizeBytes: number
  minCompressibleBytes: number
  textures: TextureDiagnosis[]
  maxTextureSize: number
}

function recommend(input: RecommendInput): string[] {
  const out: string[] = []
  const t = (type: IssueType) => input.totals[type] ?? 0
  const fixes = [
    [t('out_of_range_indices'), 'drops the faces of out-of-range indices'],
    [t('non_finite_values'), 'fixes non-finite values'],
    [t('invalid_normals') + t('missing_normals'), 'recomputes missing or broken normals'],
    [t('duplicate_vertices'), `merges ${t('duplicate_vertices')} duplicate vertices`],
    [t('degenerate_faces'), `removes ${t('degenerate_faces')} degenerate faces`],
    [t('unused_vertices'), `removes ${t('unused_vertices')} unused vertices`],
    [input.emptyNodes, `removes ${input.emptyNodes} empty nodes`],
    [input.unusedData, `removes ${input.unusedData} unused data blocks`],
  ] as const
  const repairs = fixes.filter(([count]) => count > 0).map(([, what]) => what)
  if (repairs.length > 0) out.push(`repair (${repairs.join(', ')})`)
  if (!input.compressed && input.geometryBytes >= input.minCompressibleBytes && input.fileSizeBytes > 0) {
    const percent = (engine: keyof typeof GEOMETRY_SAVINGS) =>
      Math.min(99, Math.round((100 * input.geometryBytes * GEOMETRY_SAVINGS[engine]) / input.fileSizeBytes))
    const kb = Math.round(input.geometryBytes / 1024)
    out.push(`compress with engine draco (expected savings ~${percent('draco')}%: ${kb} KB of geometry; smallest file)`)
    out.push(`compress with engine meshopt (expected savings ~${percent('meshopt')}%: ${kb} KB of geometry; fastest decoding)`)
  }
  if (t('non_manifold_edges') > 0) {
    out.push(`fix ${t('non_manifold_edges')} non-manifold edges in a modelling tool (repair does not change topology)`)
  }
  if (input.oversized > 0) {
    out.push(`resize ${input.oversized} textures to at most ${input.maxTextureSize} px (most GPUs and viewers cap textures there)`)
  }
  const heavy = input.textures.filter((texture) => texture.format === 'png' || texture.format === 'jpeg')
  if (heavy.length > 0 && input.textureBytes >= 64 * 1024) {
    const share = input.fileSizeBytes > 0 ? Math.round((100 * input.textureBytes) / input.fileSizeBytes) : 0
    out.push(`textures/optimize to webp (${heavy.length} png/jpeg textures, ${share}% of the file)`)
    out.push('textures/ktx2 for textures that stay compressed on the GPU (less video memory)')
  }
  return out
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0
}
