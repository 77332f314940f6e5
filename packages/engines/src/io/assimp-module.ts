/// <reference path="../assimpjs.d.ts" />
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { AssimpModule } from 'assimpjs'
import type { Platform } from '../platform.ts'

/**
 * assimpjs (assimp 5.2 compiled to WASM) reads FBX and COLLADA. Its module is loaded lazily, once per
 * platform (so once per worker thread), on the first fbx/dae job: threads that never see one never
 * pay for the 4 MB module.
 */
const modules = new WeakMap<Platform, Promise<AssimpModule>>()

/**
 * A WASM heap grows to the largest model read and never shrinks. Past this size the module is
 * dropped after its job (see {@link releaseLargeAssimpHeap}): garbage collection then frees the
 * whole heap, and the next fbx/dae job loads a fresh module (tens of milliseconds), so the pool
 * never has to recycle a thread for assimp's sake.
 */
export const ASSIMP_HEAP_KEEP_BYTES = 256 * 1024 * 1024

/** The assimp module of this platform, loaded on first use. */
export function loadAssimp(platform: Platform): Promise<AssimpModule> {
  let loading = modules.get(platform)
  if (!loading) {
    loading = instantiate()
    // A failed load must not stick: the next job tries again.
    loading.catch(() => modules.delete(platform))
    modules.set(platform, loading)
  }
  return loading
}

/**
 * Forgets the platform's assimp module, e.g. after the WASM code aborted: an aborted Emscripten
 * module refuses every later call, so the next job loads a fresh one.
 */
export function discardAssimp(platform: Platform): void {
  modules.delete(platform)
}

/** Bytes held by the platform's assimp WASM heap (0 when not loaded), e.g. for metrics. */
export async function assimpHeapBytes(platform: Platform): Promise<number> {
  const loading = modules.get(platform)
  if (!loading) return 0
  try {
    return (await loading).HEAP8.buffer.byteLength
  } catch {
    return 0
  }
}

/** Drops the platform's assimp module when its heap has grown past `keepBytes`; true when it did. */
export function releaseLargeAssimpHeap(platform: Platform, module: AssimpModule, keepBytes = ASSIMP_HEAP_KEEP_BYTES): boolean {
  if (module.HEAP8.buffer.byteLength <= keepBytes) return false
  discardAssimp(platform)
  return true
}

const require = createRequire(import.meta.url)

async function instantiate(): Promise<AssimpModule> {
  const entry = require.resolve('assimpjs')
  // Handing the bytes over ourselves keeps Emscripten from ever trying fetch() or a URL.
  const wasmBinary = new Uint8Array(await readFile(join(dirname(entry), 'assimpjs.wasm')))
  const factory = (await import('assimpjs')).default
  return factory({ wasmBinary })
}
