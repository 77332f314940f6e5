import { useState } from 'preact/hooks'
import { request } from '../api.ts'
import { ConfigPanel } from './config-panel.tsx'
import { KeyValues } from './key-values.tsx'
import { LicensePanel } from './license-panel.tsx'
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
        <label for="batch-id">Batch id to show</label>
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
