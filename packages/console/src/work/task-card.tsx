import { useState } from 'preact/hooks'
import { formatBytes } from '../api.ts'
import { hasEnded, shownStateOf, taskStateWords } from '../task-state.ts'
import type { TaskRecord } from '../types.ts'
import { DownloadLink } from '../ui/download-link.tsx'
import { extensionOf, VIEWABLE_EXTENSIONS } from '../viewer/load-model.ts'
import type { ModelPackage } from '../viewer/model-package.ts'
import { type CardActions, CardControls } from './card-controls.tsx'
import { CompareImages, CompareView } from './compare-view.tsx'
import { DiagnoseReport } from './diagnose-report.tsx'
import { droppedInput, reportLine, sizeLine } from './dropped-input.ts'
import { StepReports } from './step-reports.tsx'

/** One submitted file: its upload, then its task's live progress, then what came out. */
export interface WorkItem {
  key: string
  /** What was sent: the chosen file, or the zip of a model and its companions. */
  file: File
  /** The model and companion files the zip was made of, when the page packed a drop (the input view opens them). */
  pack?: ModelPackage
  /** Share of the upload sent, 0..1, until the service answers. */
  uploaded: number
  uploadError?: string
  /** Stops the upload (Cancel upload); one for all the cards of a batch, which goes as one request. */
  uploadAbort?: AbortController
  /**
   * The user stopped the upload: `unsent` before the whole file had gone (no task was made), `sent` after (the service
   * may have made it: the answer was on its way).
   */
  uploadCancelled?: 'unsent' | 'sent'
  task?: TaskRecord
  /**
   * The service no longer has the task (deleted, or lost with its data): its last record is all the page knows,
   * and its output, if it had one, is gone with it.
   */
  removed?: boolean
}

/**
 * The card's status in words. A task still open while the service cannot be reached is said as
 * unknown, with the last state it reported: the service may be restarting it, or have lost it, and
 * the card must not say "Processing" as if it knew (the next answer brings the real state back).
 */
export function statusLine(
  item: Pick<WorkItem, 'uploaded' | 'uploadError' | 'uploadCancelled' | 'task' | 'removed'>,
  reachable = true,
): string {
  if (item.uploadCancelled === 'unsent') return 'Upload cancelled: no task was made'
  if (item.uploadCancelled === 'sent')
    return "Upload stopped after the file was sent: the service may have made the task anyway (if so, it is in Admin's task list)"
  if (item.uploadError) return `Upload refused: ${item.uploadError}`
  if (!item.task) return `Uploading ${Math.round(item.uploaded * 100)}%`
  const { task } = item
  const last = taskStateWords(task)
  if (item.removed) return `No longer on the service (deleted, or lost with its data); last known: ${last.toLowerCase()}`
  if (!reachable && !hasEnded(task)) return `Unknown while the service cannot be reached; last known: ${last.toLowerCase()}`
  return last
}

/**
 * What the card's bar shows: the share done while the upload or the task moves, a moving
 * (indeterminate) bar while the task waits in the queue, and no bar at all once it has failed or
 * the upload was refused: a failed card must not look busy (a moving bar beside "Failed") nor done
 * (a full bar beside "Upload refused"); its status line in words says how it ended.
 */
export type ProgressBar = { kind: 'share'; percent: number } | { kind: 'moving' } | { kind: 'none' }

export function progressBarOf(item: Pick<WorkItem, 'uploaded' | 'uploadError' | 'uploadCancelled' | 'task' | 'removed'>): ProgressBar {
  // A task gone from the service is neither busy nor done, whatever it was: a full bar would say its result is there.
  if (item.uploadError || item.uploadCancelled || item.task?.status === 'failed' || item.removed) return { kind: 'none' }
  if (!item.task) return { kind: 'share', percent: Math.round(item.uploaded * 100) }
  if (item.task.status === 'completed') return { kind: 'share', percent: 100 }
  if (item.task.status === 'processing') return { kind: 'share', percent: item.task.progress ?? 0 }
  return { kind: 'moving' } // pending
}

export function TaskCard({ item, reachable = true, actions }: { item: WorkItem; reachable?: boolean; actions: CardActions }) {
  const [showCompare, setShowCompare] = useState(true)
  const task = item.task
  const bar = progressBarOf(item)
  const gone = Boolean(item.removed)
  const failed = Boolean(item.uploadError || item.uploadCancelled) || task?.status === 'failed' || gone
  // A cancel (of the task, or of its upload) is an end the user asked for: said plainly, without the red a fault gets.
  const cancelled = Boolean(item.uploadCancelled) || (!gone && task !== undefined && shownStateOf(task) === 'cancelled')
  const alarming = failed && !cancelled
  const done = task?.status === 'completed'
  const running = !failed && !done
  // What the record said stays readable once the task is gone; what needs its output (the download, the views) goes with it.
  const outputThere = done && !gone
  const outputExtension = extensionOf(task?.output?.filename ?? '')
  const inputExtension = extensionOf(item.file.name)
  // A zip is a model with its companion files (model-package.ts).
  const viewable = [...VIEWABLE_EXTENSIONS, 'zip']
  const isModelPair = viewable.includes(inputExtension) && viewable.includes(outputExtension)
  const isImagePair = ['png', 'jpg', 'jpeg', 'webp'].includes(inputExtension) && ['png', 'jpg', 'jpeg', 'webp'].includes(outputExtension)
  const labelId = `task-${item.key}-name`
  const input = droppedInput(item.file, item.pack)

  return (
    <article
      class={`card task ${alarming ? 'task-failed' : ''} ${cancelled ? 'task-cancelled' : ''}`}
      aria-labelledby={labelId}
      data-testid="task-card"
      data-status={gone ? 'removed' : (task?.status ?? 'uploading')}
      data-known={running && !reachable ? 'last' : undefined}
    >
      <header class="task-head">
        <h3 id={labelId}>{input.title}</h3>
        <span class="muted">
          {task?.type ?? ''} {task ? `· ${task.task_id}` : ''} · {formatBytes(input.bytes)}
          {input.sent ? ` (sent as ${input.sent.name}, ${formatBytes(input.sent.bytes)})` : ''}
        </span>
      </header>
      <div class="progress-row">
        {running ? <span class="spinner" aria-hidden="true" /> : null}
        {bar.kind === 'none' ? (
          <span class="ended-mark" aria-hidden="true">
            ✕
          </span>
        ) : (
          <progress
            max={100}
            value={bar.kind === 'share' ? bar.percent : undefined}
            aria-labelledby={`${labelId}-status`}
            data-testid="task-progress"
          />
        )}
        <span id={`${labelId}-status`} class={alarming ? 'error' : ''} role="status" aria-live="polite" data-testid="task-status">
          {statusLine(item, reachable)}
        </span>
      </div>
      <CardControls item={item} actions={actions} />
      {done && task ? (
        <>
          <p class="outcome">
            {task.output ? (
              <>
                <span data-testid="sizes">
                  {task.type === 'diagnose'
                    ? reportLine(task.output.size_bytes)
                    : sizeLine(input, task.output.size_bytes, task.output.savings_percent)}
                </span>{' '}
                {outputThere ? (
                  <DownloadLink taskId={task.task_id} filename={task.output.filename} testId="download">
                    Download {task.output.filename}
                  </DownloadLink>
                ) : null}
              </>
            ) : null}
            {isModelPair && outputThere ? (
              <button type="button" class="secondary" aria-expanded={showCompare} onClick={() => setShowCompare(!showCompare)}>
                {showCompare ? 'Hide the 3D views' : 'Show the 3D views'}
              </button>
            ) : null}
          </p>
          <StepReports task={task} />
          <RecordLines title="Input warnings" lines={task.warnings} />
          <RecordLines title="Notes" lines={task.notes} />
          {task.result ? <DiagnoseReport result={task.result} /> : null}
          {isModelPair && showCompare && outputThere ? <CompareView file={item.file} pack={item.pack} task={task} /> : null}
          {isImagePair && outputThere ? <CompareImages file={item.file} task={task} /> : null}
        </>
      ) : null}
    </article>
  )
}

/**
 * A record's list of sentences (its reader's warnings, its writer's notes) folded under a title with
 * their count: what was lost or changed on the way, one click from the outcome. Nothing when empty.
 */
function RecordLines({ title, lines }: { title: string; lines: unknown }) {
  if (!Array.isArray(lines) || lines.length === 0) return null
  return (
    <details>
      <summary>
        {title} ({lines.length})
      </summary>
      <ul aria-label={title}>
        {lines.map((line, index) => (
          // Two notes may read the same: the position tells them apart.
          <li key={`${index}`}>{String(line)}</li>
        ))}
      </ul>
    </details>
  )
}
