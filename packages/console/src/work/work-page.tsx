import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { UploadCancelled, upload } from '../api.ts'
import { cancelTask, deleteTask } from '../task-control.ts'
import type { ConsoleConfig, TaskRecord } from '../types.ts'
import { extensionOf } from '../viewer/load-model.ts'
import { COMPANION_EXTENSIONS, type ModelPackage, packageFromFiles, zipOf } from '../viewer/model-package.ts'
import { chosenProblems } from './chosen-problems.ts'
import { carriedOver, type FieldValues, formEntries } from './form-values.ts'
import { OptionFields } from './option-fields.tsx'
import type { CardActions } from './card-controls.tsx'
import { TaskCard, type WorkItem } from './task-card.tsx'
import { TaskEvents } from './task-events.ts'
import { Toggle } from '../ui/toggle.tsx'

interface BatchAnswer {
  batch_id: string
  total: number
  tasks: { task_id: string; filename: string; status: string }[]
}

let nextKey = 0

/**
 * What a card says of an upload that failed: stopped by its Cancel upload (after the whole file had gone, the service
 * may have made the task), else refused in `words`.
 */
const failedUpload = (error: unknown, words: string): Partial<WorkItem> =>
  error instanceof UploadCancelled ? { uploadCancelled: error.sent ? 'sent' : 'unsent' } : { uploadError: words }

/** What Start will send: a file, or the zip of a model dropped with its companion files (`pack`). */
interface Chosen {
  file: File
  pack?: ModelPackage
}

function describeChosen(files: Chosen[]): string {
  if (files.length === 0) return 'No file chosen.'
  const [first] = files
  if (files.length === 1 && first?.pack) {
    const names = [...first.pack.files.keys()]
    return `1 model from ${names.length} files: ${names.join(', ')} (sent as ${first.file.name})`
  }
  return `${files.length} file${files.length === 1 ? '' : 's'}: ${files.map(({ file }) => file.name).join(', ')}`
}

/** Drop models or images, pick the operation and its options, watch each task, compare and download. */
export function WorkPage({ config }: { config: ConsoleConfig }) {
  const operations = config.operations
  const [type, setType] = useState(operations[0]?.type ?? '')
  const operation = operations.find((candidate) => candidate.type === type) ?? operations[0]
  // Only what the user set: the rest is left to the service's defaults and presets (form-values.ts).
  const [values, setValues] = useState<FieldValues>({})
  const [files, setFiles] = useState<Chosen[]>([])
  const [asBatch, setAsBatch] = useState(false)
  const [batchValues, setBatchValues] = useState<FieldValues>({})
  const [items, setItems] = useState<WorkItem[]>([])
  const [problem, setProblem] = useState('')
  const [dragging, setDragging] = useState(false)
  const fileInput = useRef<HTMLInputElement>(null)
  const events = useMemo(() => new TaskEvents(), [])
  const [reachable, setReachable] = useState(true)
  useEffect(() => events.onReachability(setReachable), [events])

  // The fields' values change with the operation in the same render: an effect would reset them a frame
  // later, wiping a value chosen in between (a browser test picked target_format=obj in that gap, and
  // Start then met an empty required field).
  const chooseOperation = (chosen: string) => {
    setType(chosen)
    setValues({})
  }

  useEffect(
    () =>
      events.subscribe(
        (record: TaskRecord) =>
          setItems((current) =>
            current.map((item) => (item.task?.task_id === record.task_id ? { ...item, task: { ...item.task, ...record } } : item)),
          ),
        // Deleted (in Admin, through the API) or lost with the service's data: the card says so instead of its last state.
        (taskId) => setItems((current) => current.map((item) => (item.task?.task_id === taskId ? { ...item, removed: true } : item))),
      ),
    [events],
  )

  // A .gltf or .obj comes with the files it names: the picker offers those too (they are sent zipped with it).
  const takesPackages = operation?.input_formats.some((format) => format === 'gltf' || format === 'obj')
  const accepted = operation
    ? [...operation.input_formats, ...(takesPackages ? COMPANION_EXTENSIONS : [])].map((format) => `.${format}`).join(',')
    : ''
  const batchPossible = Boolean(config.batch) && operation?.type === 'compress' && files.length > 1

  const choose = async (list: FileList | null) => {
    if (!list || list.length === 0) return
    const dropped = [...list]
    const pack = packageFromFiles(dropped)
    const chosen: Chosen[] = pack ? [{ file: await zipOf(pack), pack }] : dropped.map((file) => ({ file }))
    setProblem(
      operation
        ? chosenProblems(
            chosen.map(({ file }) => file),
            operation,
            extensionOf,
          )
        : '',
    )
    setFiles(chosen)
  }

  const actions = useMemo(() => cardActions(events, setItems), [events])

  const update = (key: string, change: Partial<WorkItem>) =>
    setItems((current) => current.map((item) => (item.key === key ? { ...item, ...change } : item)))

  const submitOne = async (item: WorkItem) => {
    if (!operation) return
    const form = new FormData()
    for (const [name, value] of formEntries(operation.fields, values)) form.append(name, value)
    form.append('file', item.file, item.file.name)
    try {
      const answer = await upload<{ task_id: string; status: 'pending' }>(
        operation.admin_path,
        form,
        (share) => update(item.key, { uploaded: share }),
        item.uploadAbort?.signal,
      )
      update(item.key, { uploaded: 1, task: { task_id: answer.task_id, status: 'pending', type: operation.type } })
      events.watch(answer.task_id)
    } catch (error) {
      update(item.key, failedUpload(error, (error as Error).message))
    }
  }

  const submitBatch = async (batchItems: WorkItem[]) => {
    if (!config.batch) return
    const form = new FormData()
    for (const [name, value] of formEntries(config.batch.fields, batchValues)) form.append(name, value)
    for (const item of batchItems) form.append('files', item.file, item.file.name)
    const progress = (share: number) =>
      setItems((current) => current.map((item) => (batchItems.some((sent) => sent.key === item.key) ? { ...item, uploaded: share } : item)))
    try {
      const answer = await upload<BatchAnswer>(config.batch.admin_path, form, progress, batchItems[0]?.uploadAbort?.signal)
      setItems((current) =>
        current.map((item) => {
          const index = batchItems.findIndex((sent) => sent.key === item.key)
          const sub = index >= 0 ? answer.tasks[index] : undefined
          return sub
            ? { ...item, uploaded: 1, task: { task_id: sub.task_id, status: 'pending', type: 'compress', batch_id: answer.batch_id } }
            : item
        }),
      )
      for (const sub of answer.tasks) events.watch(sub.task_id)
    } catch (error) {
      // The service takes a batch whole or not at all: each card says so, where a sound model's card read as if it
      // were refused for another file's fault ("unsupported format: txt" under BoxTextured.glb).
      const message = `${(error as Error).message} (the whole batch of ${batchItems.length} files was refused)`
      const change = failedUpload(error, message)
      setItems((current) => current.map((item) => (batchItems.some((sent) => sent.key === item.key) ? { ...item, ...change } : item)))
    }
  }

  // The browser refuses a form with a field out of its range before any submit event, and says so only in a
  // bubble by the field (scrolled away on a phone): the alert under the form says it too, so Start never looks dead.
  const refused = (event: Event) => {
    const field = event.target as HTMLInputElement
    setProblem(`Not started: ${field.labels?.[0]?.textContent ?? field.name}: ${field.validationMessage}`)
  }

  const submit = (event: Event) => {
    event.preventDefault()
    if (files.length === 0) {
      setProblem('Choose or drop at least one file first.')
      return
    }
    setProblem('')
    const batch = asBatch && batchPossible
    // A batch is one request: its cards share the controller that stops it.
    const shared = batch ? new AbortController() : undefined
    const created = files.map(({ file, pack }) => ({
      key: String(nextKey++),
      file,
      pack,
      uploaded: 0,
      uploadAbort: shared ?? new AbortController(),
    }))
    setItems((current) => [...created, ...current])
    setFiles([])
    if (fileInput.current) fileInput.current.value = ''
    if (batch) void submitBatch(created)
    else for (const item of created) void submitOne(item)
  }

  if (!operation) return <p class="error">This deployment offers no operation to the console.</p>

  return (
    <>
      <h1>Work</h1>
      {reachable ? null : (
        <p class="notice" role="alert" data-testid="unreachable">
          The service cannot be reached; retrying… The tasks below show the last progress it reported, and resume by themselves once it
          answers again.
        </p>
      )}
      <form class="card work-form" onSubmit={submit} onInvalidCapture={refused} aria-label="New task">
        <div class="field">
          <label for="operation">Operation</label>
          <select id="operation" value={operation.type} onChange={(event) => chooseOperation((event.target as HTMLSelectElement).value)}>
            {operations.map((candidate) => (
              <option key={candidate.type} value={candidate.type}>
                {candidate.type.replace('_', ' ')}
              </option>
            ))}
          </select>
          <small class="muted">Accepts {operation.input_formats.join(', ')}</small>
        </div>
        <section
          class={`drop-zone ${dragging ? 'dragging' : ''}`}
          data-testid="drop-zone"
          aria-label="Files to process"
          onDragOver={(event) => {
            event.preventDefault()
            setDragging(true)
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={(event) => {
            event.preventDefault()
            setDragging(false)
            void choose(event.dataTransfer?.files ?? null)
          }}
        >
          <label for="files">Drop models or images here, or choose files</label>
          <input
            id="files"
            ref={fileInput}
            type="file"
            multiple
            accept={accepted}
            onChange={(event) => void choose((event.target as HTMLInputElement).files)}
          />
          <p class="muted" aria-live="polite">
            {describeChosen(files)}
          </p>
        </section>
        {batchPossible ? (
          <Toggle
            id="as-batch"
            label={`Send as one batch${config.batch?.max_files ? ` (up to ${config.batch.max_files} files)` : ''}`}
            checked={asBatch}
            onChange={(checked) => {
              setAsBatch(checked)
              if (!config.batch) return
              if (checked) setBatchValues(carriedOver(config.batch.fields, values, batchValues))
              else setValues(carriedOver(operation.fields, batchValues, values))
            }}
          />
        ) : null}
        <fieldset>
          <legend>Options</legend>
          {asBatch && batchPossible && config.batch ? (
            <OptionFields fields={config.batch.fields} chosen={batchValues} idPrefix="batch" onChange={setBatchValues} />
          ) : (
            <OptionFields fields={operation.fields} chosen={values} idPrefix={`opt-${operation.type}`} onChange={setValues} />
          )}
        </fieldset>
        {problem ? (
          <p class="error" role="alert">
            {problem}
          </p>
        ) : null}
        <button type="submit">Start</button>
      </form>
      {/* While the service is away, the cards' spinners stop (styles.css): nothing is moving that the page can see. */}
      <section aria-label="Tasks" class="tasks" data-unreachable={reachable ? undefined : ''}>
        {items.length === 0 ? <p class="muted">Tasks you start appear here with their progress.</p> : null}
        {items.map((item) => (
          <TaskCard key={item.key} item={item} reachable={reachable} actions={actions} />
        ))}
      </section>
    </>
  )
}

/**
 * What a card's Cancel, Delete and Dismiss do. Cancel and a refused Delete read the task again at once, so the card
 * follows: a cancelled task reads `Cancelled`, one that ended meanwhile shows how, one gone says so (the event stream
 * would bring it too, but not while it is down).
 */
function cardActions(events: TaskEvents, setItems: (change: (current: WorkItem[]) => WorkItem[]) => void): CardActions {
  const drop = (item: WorkItem) => setItems((current) => current.filter((other) => other.key !== item.key))
  return {
    cancel: async (item) => {
      const id = item.task?.task_id
      if (!id) return
      try {
        await cancelTask(id)
      } finally {
        void events.refresh(id)
      }
    },
    remove: async (item) => {
      const id = item.task?.task_id
      if (!id) return
      try {
        await deleteTask(id)
      } catch (error) {
        void events.refresh(id)
        throw error
      }
      drop(item)
    },
    dismiss: drop,
    cancelUpload: (item) => item.uploadAbort?.abort(),
  }
}
