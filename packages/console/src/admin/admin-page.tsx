import { useState } from 'preact/hooks'
import { postJson, request } from '../api.ts'
import { ConfigPanel } from './config-panel.tsx'
import { KeyValues } from './key-values.tsx'
import { MetricsPanel } from './metrics-panel.tsx'
import { TasksPanel } from './tasks-panel.tsx'
import { LoadState, useJson } from './use-json.tsx'

interface Queue {
  pending: number
  processing: number
  engine_threads: { busy: number; total: number } | null
}

function QueuePanel() {
  const queue = useJson<Queue>('/admin/queue', 3000)
  return (
    <section class="card" aria-labelledby="queue-title" data-testid="queue">
      <h2 id="queue-title">Queue</h2>
      <LoadState loaded={queue} what="the queue" />
      {queue.data ? (
        <dl class="kv">
          <div class="kv-row">
            <dt>Waiting</dt>
            <dd data-testid="queue-pending">{queue.data.pending}</dd>
          </div>
          <div class="kv-row">
            <dt>Active</dt>
            <dd data-testid="queue-processing">{queue.data.processing}</dd>
          </div>
          <div class="kv-row">
            <dt>Engine threads</dt>
            <dd>
              {queue.data.engine_threads
                ? `${queue.data.engine_threads.busy} busy of ${queue.data.engine_threads.total}`
                : 'in other processes'}
            </dd>
          </div>
        </dl>
      ) : null}
    </section>
  )
}

function LicensePanel() {
  const license = useJson<Record<string, unknown>>('/admin/license')
  const [key, setKey] = useState('')
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null)
  const [busy, setBusy] = useState(false)
  const verify = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    try {
      const answer = await postJson<Record<string, unknown>>('/admin/license/verify', { license_key: key })
      const valid = answer.valid ?? answer.success
      setOutcome({ ok: valid !== false, text: valid === false ? 'The key is not valid.' : 'The key is valid.' })
      license.reload()
    } catch (failure) {
      setOutcome({ ok: false, text: `Verification refused: ${(failure as Error).message}` })
    } finally {
      setBusy(false)
    }
  }
  return (
    <section class="card" aria-labelledby="license-title" data-testid="license">
      <h2 id="license-title">Licence and trial</h2>
      <LoadState loaded={license} what="the licence" />
      {license.data ? <KeyValues value={license.data} label="Licence state" /> : null}
      <form class="inline-form" onSubmit={verify}>
        <label for="license-key">Licence key to verify</label>
        <input id="license-key" value={key} required onInput={(event) => setKey((event.target as HTMLInputElement).value)} />
        <button type="submit" disabled={busy}>
          {busy ? 'Verifying…' : 'Verify'}
        </button>
      </form>
      {outcome ? (
        <p role="status" class={outcome.ok ? 'ok' : 'error'}>
          {outcome.text}
        </p>
      ) : null}
    </section>
  )
}

function DocumentPanel({ path, title, id }: { path: string; title: string; id: string }) {
  const loaded = useJson<Record<string, unknown>>(path)
  return (
    <section class="card" aria-labelledby={`${id}-title`} data-testid={id}>
      <h2 id={`${id}-title`}>{title}</h2>
      <LoadState loaded={loaded} what={title.toLowerCase()} />
      {loaded.data ? <KeyValues value={loaded.data} label={title} /> : null}
    </section>
  )
}

function BatchLookup() {
  const [id, setId] = useState('')
  const [batch, setBatch] = useState<unknown>(null)
  const [error, setError] = useState('')
  const look = async (event: Event) => {
    event.preventDefault()
    try {
      setBatch(await request(`/admin/batches/${encodeURIComponent(id.trim())}`))
      setError('')
    } catch (failure) {
      setBatch(null)
      setError((failure as Error).message)
    }
  }
  return (
    <section class="card" aria-labelledby="batch-title">
      <h2 id="batch-title">Batches</h2>
      <form class="inline-form" onSubmit={look}>
        <label for="batch-id">Batch id</label>
        <input id="batch-id" value={id} required onInput={(event) => setId((event.target as HTMLInputElement).value)} />
        <button type="submit">Show</button>
      </form>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      {batch ? <KeyValues value={batch} label="Batch record" /> : null}
    </section>
  )
}

/** Running the deployment: tasks and batches, licence, limits, queue, live metrics, configuration. */
export function AdminPage() {
  return (
    <>
      <h1>Admin</h1>
      <div class="admin-grid">
        <QueuePanel />
        <LicensePanel />
        <DocumentPanel path="/admin/limits" title="Limits" id="limits" />
      </div>
      <MetricsPanel />
      <TasksPanel />
      <BatchLookup />
      <ConfigPanel />
    </>
  )
}
