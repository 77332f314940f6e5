import { useEffect, useRef, useState } from 'preact/hooks'
import { downloadResult, formatBytes } from '../api.ts'
import type { TaskRecord } from '../types.ts'
import { LoadingManager, type Object3D, type WebGLRenderer } from 'three'
import { extensionOf, loadModel } from '../viewer/load-model.ts'
import { type LoadingTracker, trackLoading } from '../viewer/loading-tracker.ts'
import { type ModelPackage, packageFromZip, packageLoading } from '../viewer/model-package.ts'
import { modelStats, type ModelStats } from '../viewer/model-stats.ts'
import { TwinView } from '../viewer/twin-view.ts'
import { droppedInput, savingPercent } from './dropped-input.ts'

type SideState =
  | { state: 'loading' }
  | { state: 'error'; message: string }
  /** `failed`: files the model names that could not be loaded (a texture missing from the package). */
  | { state: 'ready'; stats: ModelStats; failed: string[] }

/**
 * The name of a file a model named, from the URL its loader asked for: its last path segment. A model
 * opened from an object URL asks for `blob:<origin>/SpiderTex.jpg`, which names the file; the page's own
 * object URLs (`blob:<origin>/<uuid>`, a package's files) name nothing.
 */
export function fileNameOf(url: string): string | undefined {
  const segment = url.split(/[?#]/)[0]!.split('/').pop() ?? ''
  if (!segment || (url.startsWith('blob:') && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(segment)))
    return undefined
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** The files a model named that could not be loaded, by name where the URL gives one. */
function failedLine(failed: string[]): string {
  const named = failed.map(fileNameOf).filter((name) => name !== undefined)
  const what = failed.length === 1 ? '1 file the model names' : `${failed.length} files the model names`
  return `${what} could not be loaded${named.length > 0 ? `: ${named.join(', ')}` : ''}`
}

/** The sizes of the textures that arrived, and how many did not (the line above names their files). */
function texturesLine(stats: ModelStats): string {
  const sizes = stats.textures.map((texture) => `${texture.width}×${texture.height}`)
  if (stats.texturesNotLoaded > 0) sizes.push(`${stats.texturesNotLoaded} not loaded`)
  return sizes.length === 0 ? 'none' : sizes.join(', ')
}

function Stats({ side, bytes }: { side: SideState; bytes: number | undefined }) {
  if (side.state === 'loading')
    return (
      <p aria-busy="true">
        <span class="spinner" aria-hidden="true" /> Loading the model…
      </p>
    )
  if (side.state === 'error') return <p class="error">{side.message}</p>
  const { stats } = side
  return (
    <>
      {side.failed.length > 0 ? <p class="error">{failedLine(side.failed)}</p> : null}
      <dl class="stats">
        <dt>Size</dt>
        <dd>{formatBytes(bytes)}</dd>
        <dt>Triangles</dt>
        <dd data-testid="triangles">{stats.triangles.toLocaleString('en')}</dd>
        <dt>Meshes</dt>
        <dd>{stats.meshes}</dd>
        <dt>Textures</dt>
        <dd data-testid="textures">{texturesLine(stats)}</dd>
      </dl>
    </>
  )
}

/**
 * Opens a model from its bytes: a single file from an object URL, a package (a zip, or files
 * dropped together) through a loading manager that finds its companion files. Either way the
 * loading is tracked (loading-tracker.ts): the textures of OBJ, FBX and COLLADA arrive after the
 * scene, `onItem` is told of each, and `loading.settled()` says when the model is whole. The object
 * URLs made are added to `urls`, for the caller to revoke.
 */
async function openModel(
  source: Blob | ModelPackage,
  filename: string,
  renderer: WebGLRenderer,
  urls: string[],
  onItem: () => void,
): Promise<{ model: Object3D; loading: LoadingTracker }> {
  const pack = source instanceof Blob && extensionOf(filename) === 'zip' ? await packageFromZip(source) : source
  if (pack instanceof Blob) {
    const url = URL.createObjectURL(pack)
    urls.push(url)
    const manager = new LoadingManager()
    const loading = trackLoading(manager, onItem)
    return { model: await loadModel(url, extensionOf(filename), renderer, manager), loading }
  }
  const packed = packageLoading(pack)
  urls.push(...packed.urls)
  const loading = trackLoading(packed.manager, onItem)
  return { model: await loadModel(pack.main, extensionOf(pack.main), renderer, packed.manager), loading }
}

/**
 * The input (the dropped file itself, or the files dropped with it) and the output (the downloaded
 * result) side by side in two views of one camera, with their sizes, triangles, textures and the saving.
 */
export function CompareView({ file, pack, task }: { file: File; pack?: ModelPackage; task: TaskRecord }) {
  const left = useRef<HTMLCanvasElement>(null)
  const right = useRef<HTMLCanvasElement>(null)
  const [inputSide, setInput] = useState<SideState>({ state: 'loading' })
  const [outputSide, setOutput] = useState<SideState>({ state: 'loading' })

  useEffect(() => {
    const view = new TwinView([left.current!, right.current!])
    const urls: string[] = []
    let alive = true
    const load = async (side: 0 | 1, source: () => Promise<Blob | ModelPackage>, filename: string, done: (state: SideState) => void) => {
      try {
        const { model, loading } = await openModel(await source(), filename, view.renderer(), urls, () => view.render())
        if (!alive) return
        view.show(side, model)
        // Counted once everything the model names has arrived (textures read 0×0 before), and drawn again then.
        await loading.settled()
        if (!alive) return
        view.render()
        done({ state: 'ready', stats: modelStats(model), failed: loading.failed })
      } catch (error) {
        if (alive) done({ state: 'error', message: `This model cannot be shown: ${(error as Error).message}` })
      }
    }
    void load(0, async () => pack ?? file, file.name, setInput)
    void load(1, () => downloadResult(task.task_id), task.output?.filename ?? '', setOutput)
    return () => {
      alive = false
      view.dispose()
      for (const url of urls) URL.revokeObjectURL(url)
    }
  }, [file, pack, task.task_id])

  // Against what the user dropped: for a package the files themselves, not the zip the page sent (dropped-input.ts).
  const input = droppedInput(file, pack)
  const output = task.output?.size_bytes
  const saving = input.sent && output !== undefined ? savingPercent(input.bytes, output) : task.output?.savings_percent
  return (
    <section class="compare" aria-label="Input and output side by side">
      <p class="muted">Drag in either view to turn both, scroll to zoom; with a view focused, the arrow keys pan.</p>
      <div class="views">
        <figure>
          <figcaption>Input · {input.title}</figcaption>
          <canvas
            ref={left}
            tabIndex={0}
            class="view"
            data-testid="input-view"
            aria-label={`3D view of the input ${input.title}`}
            role="img"
          />
          <Stats side={inputSide} bytes={input.bytes} />
        </figure>
        <figure>
          <figcaption>Output · {task.output?.filename}</figcaption>
          <canvas
            ref={right}
            tabIndex={0}
            class="view"
            data-testid="output-view"
            aria-label={`3D view of the output ${task.output?.filename ?? ''}`}
            role="img"
          />
          <Stats side={outputSide} bytes={output} />
        </figure>
      </div>
      {saving !== undefined ? (
        <p class="saving">
          Saving: <strong data-testid="saving">{saving.toFixed(1)}%</strong> ({formatBytes(input.bytes)}
          {input.sent ? ` in the ${input.sent.files} files dropped` : ''} → {formatBytes(output)})
        </p>
      ) : null}
    </section>
  )
}

/** Two images side by side (the texture operations on a standalone image). */
export function CompareImages({ file, task }: { file: File; task: TaskRecord }) {
  const [urls, setUrls] = useState<{ input: string; output?: string; error?: string }>({ input: '' })
  useEffect(() => {
    const input = URL.createObjectURL(file)
    let output: string | undefined
    setUrls({ input })
    downloadResult(task.task_id)
      .then((blob) => {
        output = URL.createObjectURL(blob)
        setUrls({ input, output })
      })
      .catch((error: Error) => setUrls({ input, error: error.message }))
    return () => {
      URL.revokeObjectURL(input)
      if (output) URL.revokeObjectURL(output)
    }
  }, [file, task.task_id])
  return (
    <div class="views">
      <figure>
        <figcaption>Input · {formatBytes(file.size)}</figcaption>
        {urls.input ? <img src={urls.input} alt={`Input: ${file.name}`} /> : null}
      </figure>
      <figure>
        <figcaption>Output · {formatBytes(task.output?.size_bytes)}</figcaption>
        {urls.output ? <img src={urls.output} alt={`Output: ${task.output?.filename ?? ''}`} /> : null}
        {urls.error ? <p class="error">{urls.error}</p> : null}
      </figure>
    </div>
  )
}
