import { useState } from 'preact/hooks'
import { LoadState, useJson } from './use-json.tsx'
import { DataTable } from '../ui/data-table.tsx'
import { Toggle } from '../ui/toggle.tsx'

interface Setting {
  name: string
  value: unknown
  default: unknown
  changed: boolean
  secret: boolean
  doc?: string
}

const shown = (value: unknown) =>
  value === undefined || value === null || value === '' ? '—' : Array.isArray(value) ? value.join(', ') || '—' : String(value)

/** GET /admin/config: every setting in force (secrets arrive masked), the changed ones first to the eye. */
export function ConfigPanel() {
  const loaded = useJson<{ settings: Setting[] }>('/admin/config')
  const [onlyChanged, setOnlyChanged] = useState(false)
  const settings = (loaded.data?.settings ?? []).filter((setting) => !onlyChanged || setting.changed)
  return (
    <section class="card" aria-labelledby="config-title" data-testid="config">
      <h2 id="config-title">Configuration</h2>
      <LoadState loaded={loaded} what="the configuration" />
      <Toggle id="only-changed" label="Only settings changed from their defaults" checked={onlyChanged} onChange={setOnlyChanged} />
      <DataTable columns={['Setting', 'Value', 'Default']}>
        {settings.map((setting) => (
          <tr key={setting.name} class={setting.changed ? 'changed' : ''}>
            <th scope="row">
              <code>{setting.name}</code>
              {setting.doc ? <small class="muted doc">{setting.doc}</small> : null}
            </th>
            <td>
              {shown(setting.value)}
              {setting.secret ? <span class="muted"> (secret)</span> : null}
              {setting.changed ? <strong class="tag">changed</strong> : null}
            </td>
            <td>{shown(setting.default)}</td>
          </tr>
        ))}
      </DataTable>
    </section>
  )
}
