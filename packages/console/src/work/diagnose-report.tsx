import { formatBytes } from '../api.ts'
import type { DiagnosisResult, Issue } from '../types.ts'
import { DataTable } from '../ui/data-table.tsx'

const SEVERITY_ORDER = ['critical', 'high', 'medium', 'low'] as const

/** An issue's severity in words and colour (the word is what a screen reader and a colour-blind reader get). */
function Severity({ level }: { level: Issue['severity'] }) {
  return <span class={`severity severity-${level}`}>{level}</span>
}

function IssueList({ issues }: { issues: Issue[] }) {
  if (issues.length === 0) return <span class="muted">none</span>
  const sorted = [...issues].sort((a, b) => SEVERITY_ORDER.indexOf(a.severity) - SEVERITY_ORDER.indexOf(b.severity))
  return (
    <ul class="issues">
      {sorted.map((issue) => (
        <li key={issue.type}>
          <Severity level={issue.severity} /> {issue.type.replaceAll('_', ' ')} <span class="muted">×{issue.count}</span>
        </li>
      ))}
    </ul>
  )
}

const yes = (value: boolean) => (value ? 'yes' : 'no')

/** A diagnose task's result (docs/diagnose.md) as a report: the file, its meshes, textures, issues and what to run. */
export function DiagnoseReport({ result }: { result: DiagnosisResult }) {
  const fileIssues = result.issues ?? []
  return (
    <section class="report" aria-label="Diagnosis report">
      <h4>Diagnosis</h4>
      <p>
        {result.format.toUpperCase()} {result.version ? `(${result.version})` : ''} · {formatBytes(result.file_size_bytes)} ·{' '}
        <strong data-testid="total-issues">{result.total_issues}</strong> issue{result.total_issues === 1 ? '' : 's'} ·{' '}
        {result.animations.length} animation{result.animations.length === 1 ? '' : 's'}
      </p>
      <h5>Meshes ({result.meshes.length})</h5>
      <DataTable columns={['Name', 'Vertices', 'Triangles', 'Normals', 'UVs', 'Skinned', 'Issues']}>
        {result.meshes.map((mesh, index) => (
          <tr key={index}>
            <th scope="row">{mesh.name || `mesh ${index}`}</th>
            <td>{mesh.vertices.toLocaleString('en')}</td>
            <td>{mesh.triangles.toLocaleString('en')}</td>
            <td>{yes(mesh.has_normals)}</td>
            <td>{yes(mesh.has_texcoords)}</td>
            <td>{yes(mesh.skinned)}</td>
            <td>
              <IssueList issues={mesh.issues} />
            </td>
          </tr>
        ))}
      </DataTable>
      <h5>Textures ({result.textures.length})</h5>
      {result.textures.length === 0 ? (
        <p class="muted">No textures.</p>
      ) : (
        <ul>
          {result.textures.map((texture, index) => (
            <li key={index}>
              {texture.name}: {texture.format}, {texture.width}×{texture.height}, {texture.size_kb} KB
            </li>
          ))}
        </ul>
      )}
      <h5>Issues of the file</h5>
      <IssueList issues={fileIssues} />
      <h5>Recommendations</h5>
      {result.recommendations.length === 0 ? (
        <p class="muted">Nothing to recommend.</p>
      ) : (
        <ul class="recommendations">
          {result.recommendations.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      )}
    </section>
  )
}
