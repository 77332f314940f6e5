import { readFile } from 'node:fs/promises'
import type { Document } from '@gltf-transform/core'
import { cloneDocument, uninstance, unpartition } from '@gltf-transform/functions'
import { expect } from 'vitest'
import { documentBounds, type EnginePool, type Platform } from '../../src/index.ts'
import { readModel } from '../../src/io/index.ts'
import { validateGlb } from '../texture-fixtures.ts'
import { success } from './job-result.ts'

/**
 * A function running one compress job on a corpus file, checking the output has no glTF-Validator
 * error (invalid inputs too: every glTF write makes its document valid, io/gltf-validity.ts);
 * it returns the input and output as read back, the output's bytes and the job's details. A .gltf
 * goes in as the one-buffer GLB it reads as (some keep their buffers beside them, in several), an
 * .obj as itself.
 */
export function compressFileWith(pool: EnginePool, platform: Platform) {
  return async (path: string, options: Record<string, unknown>) => {
    const format = path.endsWith('.obj') ? 'obj' : 'glb'
    const input = format === 'obj' ? await readModel(platform, await readFile(path), 'obj') : await platform.io.read(path)
    // The .gltf read once: the job gets a packed copy of what `input` holds.
    const glb = path.endsWith('.gltf') ? await platform.io.writeBinary(await cloneDocument(input).transform(unpartition())) : null
    const result = success(await pool.run({ name: 'compress', input: glb ? { bytes: glb } : { path }, format, options }))
    const bytes = result.bytes!
    const validation = await validateGlb(bytes)
    const message = `glTF-Validator on ${path} with ${JSON.stringify(options)}: ${validation.errors.join('; ')}`
    expect(validation.errors, message).toEqual([])
    return { input, output: await platform.io.readBinary(bytes), bytes, details: result.details ?? {} }
  }
}

/** A .gltf (its buffers beside it, in one or several) as the one-buffer GLB it reads as, to hand to a job as bytes. */
export async function glbOf(platform: Platform, path: string): Promise<Uint8Array> {
  return platform.io.writeBinary(await (await platform.io.read(path)).transform(unpartition()))
}

/**
 * The output draws within the input's bounds, off by at most `share` of its extent (quantization,
 * simplification). Instances are drawn where their transforms put them (glTF-Transform's bounds
 * would count an instanced mesh once, at its node).
 */
export async function expectBoundsKept(input: Document, output: Document, share: number): Promise<void> {
  await output.transform(uninstance())
  const a = documentBounds(input)
  const b = documentBounds(output)
  const extent = Math.max(...a.max.map((max, i) => max - a.min[i]!))
  for (let i = 0; i < 3; i++) {
    expect(Math.abs(b.min[i]! - a.min[i]!)).toBeLessThanOrEqual(extent * share)
    expect(Math.abs(b.max[i]! - a.max[i]!)).toBeLessThanOrEqual(extent * share)
  }
}

/** `after` is half of `before` within `share` of that half (simplify_ratio=0.5's goal: 5%). */
export function expectHalved(after: number, before: number, message?: string, share = 0.05): void {
  expect(Math.abs(after / (before / 2) - 1), message ?? `${after} of ${before}`).toBeLessThanOrEqual(share)
}
