/**
 * The diagnosis result of contract section 2.3, engine side (engines does not import the sdk;
 * a test parses these with the contract's zod schema). Fields beyond 2.3 (`issues` of the file,
 * `animations` element shape) are extras the contract allows; docs/diagnose.md documents them.
 */

export type IssueSeverity = 'low' | 'medium' | 'high' | 'critical'

export interface DiagnosisIssue {
  type: string
  count: number
  severity: IssueSeverity
}

export interface MeshDiagnosis {
  name: string
  vertices: number
  triangles: number
  has_normals: boolean
  has_texcoords: boolean
  has_colors: boolean
  has_tangents: boolean
  skinned: boolean
  morph_targets: number
  issues: DiagnosisIssue[]
}

export interface TextureDiagnosis {
  name: string
  format: string
  width: number
  height: number
  size_kb: number
}

export interface AnimationDiagnosis {
  name: string
  channels: number
  duration_seconds: number
}

export interface DiagnosisResult {
  format: string
  version: string
  file_size_bytes: number
  meshes: MeshDiagnosis[]
  textures: TextureDiagnosis[]
  animations: AnimationDiagnosis[]
  /** Issue entries in `meshes[].issues` and `issues` (kinds of defect, not their counts). */
  total_issues: number
  recommendations: string[]
  /** Issues of the file rather than of one mesh (textures, nodes, unused data, validator findings). */
  issues: DiagnosisIssue[]
}
