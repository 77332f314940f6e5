import { readFile, writeFile } from 'node:fs/promises'
import { failureMessage } from './errors.ts'
import { readModel, writeModel } from './io/index.ts'
import { FORMAT_CODECS } from './io/index.ts'
import type { JobResult, WorkerJob } from './jobs.ts'
import { compress, type CompressOptions } from './ops/compress.ts'
import { diagnoseBytes, refuseUnreadableGltf } from './ops/diagnose-file.ts'
import { loadGltfValidator } from './ops/gltf-validation.ts'
import { repairDocument } from './ops/repair.ts'
import { loadPlatform } from './platform.ts'

/**
 * The piscina worker. Each named export is one job; the codecs are loaded once per thread by the
 * top-level await below, before the first job runs.
 */
const platform = await loadPlatform()

type Step = (report: (progress: number) => void) => Promise<{ bytes: Uint8Array; extension: string; details?: Record<string, unknown> }>

/** Runs one job body, turning every throw into a failed result and posting progress on the job's port. */
async function runJob(job: WorkerJob, step: Step): Promise<JobResult> {
  const report = (progress: number) => job.port?.postMessage({ progress: Math.round(progress) })
  try {
    const { bytes, extension, details } = await step(report)
    if (job.outputPath) {
      await writeFile(job.outputPath, bytes)
      return { ok: true, size: bytes.byteLength, extension, ...(details ? { details } : {}) }
    }
    return { ok: true, bytes, size: bytes.byteLength, extension, ...(details ? { details } : {}) }
  } catch (error) {
    return { ok: false, message: failureMessage(error) }
  } finally {
    job.port?.close()
  }
}

async function loadInput(job: WorkerJob): Promise<Uint8Array> {
  return 'path' in job.input ? new Uint8Array(await readFile(job.input.path)) : job.input.bytes
}

/** compress: any readable model → GLB with Draco or meshopt geometry. */
export async function compressJob(job: WorkerJob): Promise<JobResult> {
  return runJob(job, async (report) => {
    report(5)
    const doc = await readModel(platform, await loadInput(job), job.format)
    report(30)
    await doc.transform(compress({ ...(job.options as unknown as CompressOptions), meshoptEncoder: platform.meshoptEncoder }))
    report(85)
    const written = await writeModel(platform, doc, 'glb')
    report(95)
    return written
  })
}

export { compressJob as compress }

const gltfValidator = loadGltfValidator()

/**
 * repair: fixes a model's defects and writes it back in its own format (gltf → zip once that
 * writer exists; a format without a writer comes back as glb, said in `details.output_format`).
 * `details.repairs` counts what was fixed (names in docs/repair.md).
 */
export async function repairJob(job: WorkerJob): Promise<JobResult> {
  return runJob(job, async (report) => {
    report(5)
    const bytes = await loadInput(job)
    const doc = await readModel(platform, bytes, job.format)
    await refuseUnreadableGltf(gltfValidator, bytes, job.format)
    report(30)
    const repairs = await repairDocument(doc)
    report(80)
    const format = FORMAT_CODECS[job.format]?.write ? job.format : 'glb'
    const written = await writeModel(platform, doc, format)
    report(95)
    const note = format === job.format ? {} : { output_format: format, output_format_note: `no ${job.format} writer: written as ${format}` }
    return { ...written, details: { repairs, ...note } }
  })
}

/**
 * diagnose: reads a model (never changes the upload) and returns the contract's diagnosis result
 * in `details.result`, and the same result as a JSON file for download.
 */
export async function diagnoseJob(job: WorkerJob): Promise<JobResult> {
  return runJob(job, async (report) => {
    report(5)
    const bytes = await loadInput(job)
    const result = await diagnoseBytes(platform, gltfValidator, bytes, job.format, job.options)
    report(95)
    return { bytes: new TextEncoder().encode(`${JSON.stringify(result, null, 2)}\n`), extension: 'json', details: { result } }
  })
}

export { repairJob as repair, diagnoseJob as diagnose }
