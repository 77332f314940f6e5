import type { LoadingManager } from 'three'

/** What a tracked manager tells a view: when everything asked for has arrived, and what could not be loaded. */
export interface LoadingTracker {
  /** Resolves once the manager has nothing in flight (at once when it has nothing now). */
  settled(): Promise<void>
  /** The URLs the manager reported as failed, in order. */
  readonly failed: string[]
}

/**
 * Follows a LoadingManager, so a view knows when the files a model names have all arrived. The
 * OBJ/MTL, FBX and COLLADA loaders answer their scene while its textures are still loading (an
 * image element's load comes later), so counting textures then read 0×0, and the view, drawn once,
 * stayed black until the next drag; `onItem` is called as each file arrives (the view redraws), and
 * `settled` says when to count. glTF's loader waits for its own textures, so it settles with its scene.
 */
export function trackLoading(manager: LoadingManager, onItem: () => void = () => {}): LoadingTracker {
  let loading = false
  let waiting: (() => void)[] = []
  const failed: string[] = []
  manager.onStart = () => {
    loading = true
  }
  manager.onProgress = () => onItem()
  manager.onError = (url) => {
    failed.push(url)
  }
  manager.onLoad = () => {
    loading = false
    const done = waiting
    waiting = []
    for (const resolve of done) resolve()
  }
  return {
    failed,
    settled: () => (loading ? new Promise((resolve) => waiting.push(resolve)) : Promise.resolve()),
  }
}
