import { diagnosisResultSchema } from '@mos/sdk/contract'
import { expect, expectSchema } from '../assert.ts'
import type { Check } from '../check.ts'
import { inspectGlb } from '../inspect/model.ts'
import { finished, wrap } from './finished-task.ts'

/** Section 4.5: repair of a GLB with known defects. */
export const repairChecks: Check[] = [
  {
    id: 'repair.output',
    group: 'repair',
    title: 'Repair of a GLB with duplicate vertices and degenerate faces: a GLB without degenerate faces, with fewer vertices',
    profile: 'core',
    variants: ['A', 'B'],
    needs: { feature: 'repair' },
    async run(ctx) {
      const { defects } = await ctx.fixtures()
      const run = await finished(ctx, 'repair defects', 'repair', '/repair', {}, 'defects')
      const facts = await wrap('the result is not a readable GLB', inspectGlb(run.output))
      expect(facts.degenerate === 0, `the repaired mesh still has ${facts.degenerate} degenerate faces`)
      expect(
        facts.vertices < defects.vertices!,
        `the repaired mesh has ${facts.vertices} vertices, the input ${defects.vertices} of which many are duplicates`,
      )
      const valid = defects.triangles! - defects.degenerate
      expect(facts.triangles === valid, `the repaired mesh has ${facts.triangles} triangles, expected the ${valid} valid ones`)
    },
  },
]

/** Sections 2.3 and 4.6: diagnosis of the same file. */
export const diagnoseChecks: Check[] = [
  {
    id: 'diagnose.result',
    group: 'diagnose',
    title: 'Diagnose of a GLB with known defects: the result object (2.3) reports its mesh, duplicate_vertices and degenerate_faces',
    profile: 'core',
    variants: ['A'],
    needs: { feature: 'diagnose' },
    async run(ctx) {
      const { defects } = await ctx.fixtures()
      const run = await finished(ctx, 'diagnose defects', 'diagnose', '/diagnose', {}, 'defects')
      expect(run.final.result !== undefined, 'the completed diagnose record has no result object')
      const result = expectSchema(diagnosisResultSchema, run.final.result, 'the diagnosis result')
      expect(
        result.file_size_bytes === defects.bytes.byteLength,
        `file_size_bytes is ${result.file_size_bytes}, the upload ${defects.bytes.byteLength}`,
      )
      expect(result.meshes.length === 1, `${result.meshes.length} meshes reported, the file has 1`)
      const mesh = result.meshes[0]!
      const valid = defects.triangles! - defects.degenerate
      expect(
        mesh.triangles >= valid && mesh.triangles <= defects.triangles!,
        `the mesh reports ${mesh.triangles} triangles, the file has ${defects.triangles} (${defects.degenerate} degenerate)`,
      )
      expect(mesh.vertices === defects.vertices, `the mesh reports ${mesh.vertices} vertices, the file has ${defects.vertices}`)
      expect(
        mesh.has_normals && mesh.has_texcoords && !mesh.skinned,
        'has_normals/has_texcoords/skinned do not describe the file (normals and texcoords, no skin)',
      )
      for (const type of ['duplicate_vertices', 'degenerate_faces']) {
        const issue = mesh.issues.find((i) => i.type === type)
        expect(issue && issue.count > 0, `no ${type} issue reported (issues: ${JSON.stringify(mesh.issues)})`)
      }
      expect(result.total_issues >= 2, `total_issues is ${result.total_issues}`)
    },
  },
]
