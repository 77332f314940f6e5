/// <reference path="./draco3dgltf.d.ts" />
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { Logger, NodeIO } from '@gltf-transform/core'
import { ALL_EXTENSIONS } from '@gltf-transform/extensions'
import draco3d from 'draco3dgltf'
import { MeshoptDecoder, MeshoptEncoder, MeshoptSimplifier } from 'meshoptimizer'
import { skipUnheardGraphEvents } from './graph-events.ts'
import { KHRMeshoptCompression } from './ops/khr-meshopt-compression.ts'

/**
 * The heavy, slow-to-start resources every operation needs: WASM codecs and an IO that knows every
 * glTF extension. Loaded once per worker thread and passed down, never imported inside operations.
 */
export interface Platform {
  io: NodeIO
  /** Where documents read through the platform log (the worker gives each job its own). */
  logger: Logger
  meshoptEncoder: typeof MeshoptEncoder
  meshoptDecoder: typeof MeshoptDecoder
  /** meshoptimizer's simplifier (compress's simplify_ratio / simplify_error), ready. */
  meshoptSimplifier: typeof MeshoptSimplifier
}

/** Creates the platform: instantiates the Draco and meshopt WASM modules and an IO using them. */
export async function loadPlatform(): Promise<Platform> {
  skipUnheardGraphEvents()
  const [dracoEncoder, dracoDecoder] = await Promise.all([
    draco3d.createEncoderModule(),
    draco3d.createDecoderModule(),
    MeshoptEncoder.ready,
    MeshoptDecoder.ready,
    MeshoptSimplifier.ready,
  ])
  // Transforms log through the document's logger; only warnings matter in a service's output.
  const logger = new Logger(Logger.Verbosity.WARN)
  const io = new NodeIO()
    .setLogger(logger)
    .registerExtensions([...ALL_EXTENSIONS, KHRMeshoptCompression])
    .registerDependencies({
      'draco3d.encoder': dracoEncoder,
      'draco3d.decoder': dracoDecoder,
      'meshopt.encoder': MeshoptEncoder,
      'meshopt.decoder': MeshoptDecoder,
    })
  return { io, logger, meshoptEncoder: MeshoptEncoder, meshoptDecoder: MeshoptDecoder, meshoptSimplifier: MeshoptSimplifier }
}

const require = createRequire(import.meta.url)

/**
 * Version of an installed package, found by walking up from its entry point (some packages do not
 * export their package.json).
 */
export function installedVersion(name: string): string {
  try {
    let dir = dirname(require.resolve(name))
    for (let i = 0; i < 5; i++, dir = dirname(dir)) {
      try {
        const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string }
        if (pkg.name === name && pkg.version) return pkg.version
      } catch {
        // no package.json at this level: keep walking up
      }
    }
  } catch {
    // not installed
  }
  return 'unknown'
}

/**
 * Engines as reported by capabilities in variant B. The contract's `binary_path` names the encoder
 * build that runs (`draco3dgltf@1.5.7 (wasm)`), not where it lies: a host path would tell every key
 * holder the server's file system layout, and both encoders are the packages' WebAssembly builds
 * whatever the path. Empty when the package is missing (then `available` is false).
 */
export function describeEngines(): Record<'draco' | 'meshopt', { available: boolean; version: string; binary_path: string }> {
  const describe = (pkg: string) => {
    const version = installedVersion(pkg)
    let resolved = false
    try {
      require.resolve(pkg)
      resolved = true
    } catch {
      // reported as unavailable below
    }
    const available = version !== 'unknown' && resolved
    return { available, version, binary_path: available ? `${pkg}@${version} (wasm)` : '' }
  }
  return { draco: describe('draco3dgltf'), meshopt: describe('meshoptimizer') }
}
