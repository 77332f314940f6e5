import { useEffect, useState } from 'preact/hooks'
import { request } from '../api.ts'
import type { MetricsSnapshot } from '../types.ts'
import { LineChart, type Series } from './line-chart.tsx'

const POLL_MS = 3000
const KEEP = 40

/** Live charts from GET /admin/metrics, polled every few seconds; the last few minutes are kept in the page. */
export function MetricsPanel() {
  const [snapshots, setSnapshots] = useState<MetricsSnapshot[]>([])
  const [error, setError] = useState('')

  useEffect(() => {
    let alive = true
    const poll = async () => {
      try {
        const snapshot = await request<MetricsSnapshot>('/admin/metrics')
        if (!alive) return
        setError('')
        setSnapshots((current) => [...current, snapshot].slice(-KEEP))
      } catch (failure) {
        if (alive) setError((failure as Error).message)
      }
    }
    void poll()
    const timer = setInterval(poll, POLL_MS)
    return () => {
      alive = false
      clearInterval(timer)
    }
  }, [])

  // Requests per second between two polls (the counter itself only grows).
  const rates = snapshots.slice(1).map((snapshot, index) => {
    const before = snapshots[index]!
    const seconds = Math.max(0.001, (Date.parse(snapshot.time) - Date.parse(before.time)) / 1000)
    return Math.max(0, (snapshot.requests_total - before.requests_total) / seconds)
  })
  const series: Series[] = [
    { label: 'Queue length', unit: 'tasks', values: snapshots.map((snapshot) => snapshot.queue_length) },
    { label: 'Processing', unit: 'tasks', values: snapshots.map((snapshot) => snapshot.tasks.processing) },
    { label: 'Requests', unit: '/s', values: rates },
    { label: 'Memory (RSS)', unit: 'MB', values: snapshots.map((snapshot) => snapshot.rss_mb) },
    { label: 'Event loop lag', unit: 'ms', values: snapshots.map((snapshot) => snapshot.event_loop_lag_ms) },
  ]
  const latest = snapshots.at(-1)
  return (
    <section class="card" aria-labelledby="metrics-title">
      <h2 id="metrics-title">Live metrics</h2>
      {error ? (
        <p class="error" role="alert">
          Could not read the metrics: {error}
        </p>
      ) : null}
      {latest ? (
        <p class="muted">
          {latest.tasks.scope === 'cluster' ? 'Tasks of the deployment' : 'Tasks of this process since it started'}:{' '}
          {latest.tasks.completed} completed, {latest.tasks.failed} failed · updated every {POLL_MS / 1000} s
        </p>
      ) : (
        <p aria-busy="true">
          <span class="spinner" aria-hidden="true" /> Reading the metrics…
        </p>
      )}
      <div class="charts">
        {series.map((entry) => (
          <LineChart key={entry.label} series={entry} />
        ))}
      </div>
    </section>
  )
}
