import { useEffect, useRef, useState } from 'preact/hooks'

/**
 * A task's Delete, which asks first: deleting removes the task's record and files on the service for good. The question
 * is part of the page (a fieldset, its legend the question, its keep button focused so Enter or Escape keeps the task), not
 * `window.confirm`, which automated browsers and some embedding pages suppress: there the delete went through unasked.
 * The keep button is not named "Cancel", which beside a task's own Cancel would read as cancelling the task.
 */
export function ConfirmDelete({
  taskId,
  busy = false,
  label = 'Delete',
  onConfirm,
}: {
  taskId: string
  /** The delete is on its way: the button stays, disabled, with `label` (e.g. `Deleting…`). */
  busy?: boolean
  label?: string
  onConfirm: () => void
}) {
  const [asking, setAsking] = useState(false)
  const keep = useRef<HTMLButtonElement>(null)
  useEffect(() => {
    if (asking) keep.current?.focus()
  }, [asking])

  if (!asking) {
    return (
      <button type="button" class="danger" disabled={busy} onClick={() => setAsking(true)}>
        {label}
      </button>
    )
  }
  return (
    <fieldset
      class="confirm"
      onKeyDown={(event) => {
        if (event.key === 'Escape') setAsking(false)
      }}
    >
      <legend>Delete task {taskId} for good? Its record and files cannot be brought back.</legend>
      <button type="button" class="secondary" ref={keep} onClick={() => setAsking(false)}>
        Keep it
      </button>
      <button
        type="button"
        class="danger"
        onClick={() => {
          setAsking(false)
          onConfirm()
        }}
      >
        Delete for good
      </button>
    </fieldset>
  )
}
