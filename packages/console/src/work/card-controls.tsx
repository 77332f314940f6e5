import { useState } from 'preact/hooks'
import { hasEnded } from '../task-state.ts'
import { ConfirmDelete } from '../ui/confirm-delete.tsx'
import type { WorkItem } from './task-card.tsx'

/** What a card's buttons do; the Work page holds the cards and the event stream that moves them. */
export interface CardActions {
  /** Asks the service to cancel the card's task; rejects with its words (a task that ended meanwhile: 409). */
  cancel: (item: WorkItem) => Promise<void>
  /** Deletes the card's task on the service (record and files), then takes the card off the page. */
  remove: (item: WorkItem) => Promise<void>
  /** Takes the card off the page only: its task is not on the service (refused upload, deleted elsewhere). */
  dismiss: (item: WorkItem) => void
  /** Stops the card's upload (and its batch's: one request); the card then says no task was made. */
  cancelUpload: (item: WorkItem) => void
}

type Pending = 'cancel' | 'remove' | undefined

/**
 * A card's controls: Cancel while its task waits or runs, Delete once it has ended, Dismiss for a card with no task
 * on the service. The card's state itself follows the task's events (a cancel that went through reads `Cancelled`
 * there); what is said here is what the press did, or why the service refused it, in its words.
 */
export function CardControls({ item, actions }: { item: WorkItem; actions: CardActions }) {
  const [pending, setPending] = useState<Pending>()
  const [outcome, setOutcome] = useState('')
  const task = item.task
  const onService = Boolean(task) && !item.removed
  const uploading = !task && !item.uploadError && !item.uploadCancelled

  const run = async (action: 'cancel' | 'remove') => {
    setPending(action)
    setOutcome('')
    try {
      await actions[action](item)
    } catch (error) {
      setOutcome(`Could not ${action === 'cancel' ? 'cancel' : 'delete'} the task: ${(error as Error).message}`)
    } finally {
      setPending(undefined)
    }
  }

  // While the file is on its way the task does not exist yet: what can be stopped is the upload.
  if (uploading) {
    return (
      <div class="actions card-controls">
        <button type="button" class="secondary" onClick={() => actions.cancelUpload(item)}>
          Cancel upload
        </button>
      </div>
    )
  }
  return (
    <div class="actions card-controls">
      {onService && !hasEnded(task) ? (
        <button type="button" class="secondary" disabled={pending !== undefined} onClick={() => run('cancel')}>
          {pending === 'cancel' ? 'Cancelling…' : 'Cancel'}
        </button>
      ) : null}
      {onService && hasEnded(task) ? (
        <ConfirmDelete
          taskId={task?.task_id ?? ''}
          busy={pending !== undefined}
          label={pending === 'remove' ? 'Deleting…' : 'Delete'}
          onConfirm={() => run('remove')}
        />
      ) : null}
      {onService ? null : (
        <button type="button" class="secondary" onClick={() => actions.dismiss(item)}>
          Dismiss
        </button>
      )}
      {outcome ? (
        <span class="error" role="alert" data-testid="control-problem">
          {outcome}
        </span>
      ) : null}
    </div>
  )
}
