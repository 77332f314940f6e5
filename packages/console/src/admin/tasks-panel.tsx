import { useEffect, useRef, useState } from 'preact/hooks'
import { formatBytes, request } from '../api.ts'
import { cancelTask, deleteTask } from '../task-control.ts'
import { hasEnded, taskStateWords } from '../task-state.ts'
import type { TaskPage, TaskRecord } from '../types.ts'
import { TaskEvents } from '../work/task-events.ts'
import { KeyValues } from './key-values.tsx'
import { ownerWords } from './owner-words.ts'
import { type TaskFilters, withChange, withFirstPage, withoutTask } from './live-tasks.ts'
import { ConfirmDelete } from '../ui/confirm-delete.tsx'
import { DataTable } from '../ui/data-table.tsx'
import { DownloadLink } from '../ui/download-link.tsx'
import { isOlder } from '../work/record-order.ts'

/** The record shown below the list; `removed` once the service says the task is gone (deleted elsewhere, expired). */
type OpenRecord = TaskRecord & { removed?: boolean }

const STATUSES = ['', 'pending', 'processing', 'completed', 'failed']
const TYPES = ['', 'compress', 'convert', 'repair', 'diagnose', 'texture_optimize', 'texture_ktx2']

/** One filter's choices; the empty one reads `any`. */
function FilterChoice(props: { id: string; label: string; choices: string[]; value: string; onChange: (event: Event) => void }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <select id={props.id} value={props.value} onChange={props.onChange}>
        {props.choices.map((choice) => (
          <option key={choice} value={choice}>
            {choice || 'any'}
          </option>
        ))}
      </select>
    </div>
  )
}

/** The record as the service sent it, without the page's own mark. */
const recordFields = ({ removed: _removed, ...record }: OpenRecord) => record

/**
 * Every owner's tasks, newest first, with filters, paging, each record and its controls. The rows
 * follow the service's event stream: new tasks appear at the top, statuses move, removed ones go.
 */
export function TasksPanel() {
  const [filters, setFilters] = useState<TaskFilters>({ status: '', type: '', batch_id: '' })
  const [applied, setApplied] = useState(filters)
  const [tasks, setTasks] = useState<TaskRecord[]>([])
  const [cursor, setCursor] = useState<string | null>(null)
  const [error, setError] = useState('')
  const [loading, setLoading] = useState(false)
  const [selected, setSelected] = useState<OpenRecord | null>(null)
  const [message, setMessage] = useState('')
  /**
   * The number of the latest list read. Only its answer is shown: an earlier read (the filters before the last Filter, a
   * Load more of the list before) answers on the network's schedule, and one landing after the newer read put back the
   * rows the filters now exclude.
   */
  const latestLoad = useRef(0)

  const load = async (from: string | null) => {
    const number = ++latestLoad.current
    const isLatest = () => number === latestLoad.current
    setLoading(true)
    const query = new URLSearchParams({ limit: '20' })
    for (const [name, value] of Object.entries(applied)) if (value) query.set(name, value)
    if (from) query.set('cursor', from)
    try {
      const page = await request<TaskPage>(`/admin/tasks?${query}`)
      if (!isLatest()) return
      setTasks((current) => (from ? [...current, ...page.tasks] : withFirstPage(current, page.tasks, applied)))
      setCursor(page.next_cursor)
      setError('')
    } catch (failure) {
      if (isLatest()) setError((failure as Error).message)
    } finally {
      if (isLatest()) setLoading(false)
    }
  }

  useEffect(() => {
    void load(null)
    const events = new TaskEvents()
    // The open record follows the stream as its row does: it kept the status it was opened with (a Cancel offered for
    // a task long completed) and, once the task was deleted elsewhere, a Download link answering raw 404 JSON.
    return events.subscribe(
      (record) => {
        setTasks((current) => withChange(current, record, applied))
        setSelected((open) => (open?.task_id === record.task_id && !open.removed && !isOlder(record, open) ? { ...open, ...record } : open))
      },
      (taskId) => {
        setTasks((current) => withoutTask(current, taskId))
        setSelected((open) => (open?.task_id === taskId ? { ...open, removed: true } : open))
      },
    )
  }, [applied])

  const open = async (id: string) => {
    setMessage('')
    try {
      setSelected(await request<TaskRecord>(`/admin/tasks/${encodeURIComponent(id)}`))
    } catch (failure) {
      setMessage(`Could not read task ${id}: ${(failure as Error).message}`)
    }
  }

  const control = async (id: string, action: 'cancel' | 'delete') => {
    try {
      if (action === 'cancel') {
        // The record stays open and shows the task cancelled (read again now, the stream may be down), where it closed
        // and the reader had to find the task in the list again to see what became of it.
        await cancelTask(id)
        setSelected(await request<TaskRecord>(`/admin/tasks/${encodeURIComponent(id)}`))
      } else {
        await deleteTask(id)
        setSelected(null)
      }
      setMessage(`Task ${id}: ${action === 'cancel' ? 'cancelled' : 'deleted'}.`)
      void load(null)
    } catch (failure) {
      setMessage(`Could not ${action} task ${id}: ${(failure as Error).message}`)
    }
  }

  const setFilter = (name: keyof typeof filters) => (event: Event) =>
    setFilters({ ...filters, [name]: (event.target as HTMLInputElement | HTMLSelectElement).value })

  return (
    <section class="card" aria-labelledby="tasks-title">
      <h2 id="tasks-title">Tasks</h2>
      <form
        class="filters"
        onSubmit={(event) => {
          event.preventDefault()
          setApplied({ ...filters })
        }}
      >
        <FilterChoice id="filter-status" label="Status" choices={STATUSES} value={filters.status} onChange={setFilter('status')} />
        <FilterChoice id="filter-type" label="Type" choices={TYPES} value={filters.type} onChange={setFilter('type')} />
        <div class="field">
          <label for="filter-batch">In batch</label>
          <input id="filter-batch" placeholder="batch id" value={filters.batch_id} onInput={setFilter('batch_id')} />
        </div>
        <button type="submit">Filter</button>
      </form>
      {error ? (
        <p class="error" role="alert">
          Could not list the tasks: {error}
        </p>
      ) : null}
      <p class="muted" aria-live="polite">
        {loading ? 'Loading…' : `${tasks.length} task${tasks.length === 1 ? '' : 's'} shown`}
      </p>
      {!loading && !error && tasks.length === 0 ? (
        <p class="muted" data-testid="no-tasks">
          {Object.values(applied).some(Boolean)
            ? 'No task matches these filters.'
            : 'No tasks yet: tasks submitted on the Work page or through the API appear here as they are made.'}
        </p>
      ) : (
        <DataTable columns={['Task', 'Type', 'Status', 'Input', 'Owner', 'Created']} testId="task-table">
          {tasks.map((task) => (
            <tr key={task.task_id}>
              <th scope="row">
                <button type="button" class="link" onClick={() => open(task.task_id)}>
                  {task.task_id}
                </button>
              </th>
              <td>{task.type ?? '—'}</td>
              {/* As the Work page's cards say it: why it failed (the row is where one looks), a cancel as `Cancelled`. */}
              <td>{taskStateWords(task)}</td>
              <td>
                {task.input_filename ?? '—'} <span class="muted">{formatBytes(task.input_size_bytes)}</span>
              </td>
              <td title={ownerWords(task.owner).title}>{ownerWords(task.owner).text}</td>
              <td>{task.created_at ? new Date(task.created_at).toLocaleString() : '—'}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {cursor ? (
        <button type="button" class="secondary" onClick={() => load(cursor)} disabled={loading}>
          Load more
        </button>
      ) : null}
      {message ? <p role="status">{message}</p> : null}
      {selected ? (
        <section class="record" aria-label={`Task ${selected.task_id}`} data-testid="task-record">
          <h3>Task {selected.task_id}</h3>
          {/* The record below is the service's document (`status: failed`, `error: cancelled`); its state in the list's words heads it. */}
          <p data-testid="record-state">{taskStateWords(selected)}</p>
          {selected.removed ? (
            <p class="error" role="status" data-testid="record-removed">
              No longer on the service (deleted, or its retention ended): what it said is below, its output is gone with it.
            </p>
          ) : null}
          <div class="actions">
            {selected.status === 'completed' && !selected.removed ? (
              <DownloadLink taskId={selected.task_id} filename={selected.output?.filename} testId="record-download">
                Download
              </DownloadLink>
            ) : null}
            {!selected.removed && !hasEnded(selected) ? (
              <button type="button" class="secondary" onClick={() => control(selected.task_id, 'cancel')}>
                Cancel
              </button>
            ) : null}
            {selected.removed ? null : (
              <ConfirmDelete key={selected.task_id} taskId={selected.task_id} onConfirm={() => control(selected.task_id, 'delete')} />
            )}
            <button type="button" class="secondary" onClick={() => setSelected(null)}>
              Close
            </button>
          </div>
          <KeyValues value={recordFields(selected)} label={`Record of task ${selected.task_id}`} />
        </section>
      ) : null}
    </section>
  )
}
