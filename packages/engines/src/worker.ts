import { readFile, writeFile } from 'node:fs/promises'
import { failureMessage } from './errors.ts'
import { readModel, writeModel } from './io/index.ts'
import type { JobResult, WorkerJob } from './jobs.ts'
import { compress, type CompressOptions } from './ops/compress.ts'
import { convertDocument, parseConvertOptions } from './ops/convert.ts'
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

/** convert: any readable model → `target_format` (glb, gltf as a zip, obj, stl, ply, ...). */
export async function convertJob(job: WorkerJob): Promise<JobResult> {
  return runJob(job, async (report) => {
    const options = parseConvertOptions(job.options)
    report(5)
    const readOptions = options.maxAllocationBytes === undefined ? {} : { maxAllocationBytes: options.maxAllocationBytes }
    const doc = await readModel(platform, await loadInput(job), job.format, readOptions)
    report(50)
    const { bytes, extension, notes } = await convertDocument(platform, doc, options.target_format)
    report(95)
    return { bytes, extension, ...(notes && notes.length > 0 ? { details: { notes } } : {}) }
  })
}

export { compressJob as compress }
export { convertJob as convert }
