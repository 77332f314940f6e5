import { readFile, writeFile } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { workerData, type MessagePort } from 'node:worker_threads'
import type { Document } from '@gltf-transform/core'
import Piscina from 'piscina'
import sharp from 'sharp'
import { loadBasisEncoder, type BasisModule } from './basis-encoder.ts'
import { failureMessage } from './errors.ts'
import { JobLogger } from './job-logger.ts'
import { FORMAT_CODECS, readModel, writableFormats, writeModel } from './io/index.ts'
import type { ReadOptions } from './io/limits.ts'
import { diagnoseBytes, explainedReadFailure, refuseUnreadableGltf } from './ops/diagnose-file.ts'
import { loadGltfValidator } from './ops/gltf-validation.ts'
import { repairDocument } from './ops/repair.ts'
import type { FinalMessage, JobResult, LogMessage, WorkerJob } from './jobs.ts'
import { createThreadRecycling, threadMemoryMb, type Retirement, type ThreadRecyclingOptions } from './thread-recycling.ts'
import { compress, type CompressOptions } from './ops/compress.ts'
import { isImageExtension } from './io/image.ts'
import { encodeImageKtx2, textureKtx2, type TextureKtx2Options } from './ops/texture-ktx2.ts'
import { optimizeImage, textureOptimize, type TextureOptimizeOptions } from './ops/texture-optimize.ts'
import { summarizeTextures, type TextureReport } from './ops/texture-report.ts'
import { convertDocument, parseConvertOptions } from './ops/convert.ts'
import { loadPlatform } from './platform.ts'

/**
 * The piscina worker. Each named export is one job; the codecs are loaded once per thread by the
 * top-level await below, before the first job runs.
 */
const platform = await loadPlatform()

type Step = (report: (progress: number) => void) => Promise<{ bytes: Uint8Array; extension: string; details?: Record<string, unknown> }>

const recycling = createThreadRecycling((workerData as { recycling?: ThreadRecyclingOptions } | undefined)?.recycling)

/** Runs one job body, turning every throw into a failed result and posting progress on the job's port. */
async function runJob(job: WorkerJob, step: Step): Promise<JobResult> {
  const report = (progress: number) => job.port?.postMessage({ progress: Math.round(progress) })
  // The first message tells the pool this thread has started the job: its work budget counts from here.
  report(0)
  // One job at a time per thread: documents read during this job log to its own logger, and each
  // warning also goes to the main thread's log as it happens, with the task's fields.
  const logger = new JobLogger((log) => job.port?.postMessage({ log } satisfies LogMessage))
  platform.logger = logger
  platform.io.setLogger(logger)
  let result: JobResult
  try {
    const stepped = await step(report)
    const { bytes, extension } = stepped
    const details = logger.warnings.length > 0 ? { ...stepped.details, warnings: logger.warnings } : stepped.details
    if (job.outputPath) {
      await writeFile(job.outputPath, bytes)
      result = { ok: true, size: bytes.byteLength, extension, ...(details ? { details } : {}) }
    } else {
      result = { ok: true, bytes, size: bytes.byteLength, extension, ...(details ? { details } : {}) }
    }
  } catch (error) {
    result = { ok: false, message: failureMessage(error) }
  }
  // What the thread holds after each job (SERVICE__LOG__LEVEL=debug): the figure the recycling settings bound.
  job.port?.postMessage({ log: { level: 'debug', message: 'engine thread memory', fields: { memoryMb: threadMemoryMb() } } } satisfies LogMessage)
  const retiring = recycling.afterJob()
  if (retiring && job.port) return retire(job.port, result, retiring)
  job.port?.close()
  return result.ok && result.bytes ? movedWithBytes({ ...result, bytes: result.bytes }) : result
}

/**
 * Hands the last job's result over the job's port, waits until the main thread has it (its ack, or
 * its end of the port closing), then ends this thread; piscina starts a fresh one in its place.
 */
async function retire(port: MessagePort, result: JobResult, retiring: Retirement): Promise<never> {
  const bytes = result.ok ? result.bytes : undefined
  const owned = bytes && bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.byteLength
  const received = new Promise<void>((resolve) => {
    port.once('message', () => resolve())
    port.once('close', () => resolve())
    setTimeout(resolve, 5000).unref()
  })
  port.postMessage({ final: result, retiring } satisfies FinalMessage, owned ? [bytes.buffer as ArrayBuffer] : [])
  await received
  process.exit(0)
}

/**
 * A result whose bytes move to the main thread instead of being copied (piscina clones a returned
 * value unless it is wrapped as movable; a 100 MB output cost ~30 ms of copying on each side).
 * Only bytes that own their whole buffer move: a small Buffer lives in Node's shared pool, which
 * cannot be transferred.
 */
function movedWithBytes(result: JobResult & { bytes: Uint8Array }): JobResult {
  const { bytes } = result
  if (!(bytes.buffer instanceof ArrayBuffer) || bytes.byteOffset !== 0 || bytes.buffer.byteLength !== bytes.byteLength) return result
  return Piscina.move({
    get [Piscina.transferableSymbol]() {
      return result.bytes.buffer
    },
    get [Piscina.valueSymbol]() {
      return result
    },
  }) as unknown as JobResult
}

/** The reader bounds a job carries (the server passes its configured allocation limit). */
function readOptionsOf(job: WorkerJob): ReadOptions {
  const limit = job.options.maxAllocationBytes
  return typeof limit === 'number' ? { maxAllocationBytes: limit } : {}
}

/** Reads a job's model; a glTF the library trips over fails with glTF-Validator's first error instead. */
async function readJobModel(job: WorkerJob, bytes: Uint8Array): Promise<Document> {
  try {
    return await readModel(platform, bytes, job.format, readOptionsOf(job))
  } catch (error) {
    throw await explainedReadFailure(gltfValidator, bytes, job.format, error)
  }
}

async function loadInput(job: WorkerJob): Promise<Uint8Array> {
  if (!('path' in job.input)) return job.input.bytes
  // A plain view of the Buffer, not `new Uint8Array(buffer)`, which copies it (~11 ms on 27 MB).
  const buffer = await readFile(job.input.path)
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
}

/** compress: any readable model → GLB with Draco or meshopt geometry. */
export async function compressJob(job: WorkerJob): Promise<JobResult> {
  return runJob(job, async (report) => {
    report(5)
    const doc = await readJobModel(job, await loadInput(job))
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
    const doc = await readJobModel(job, await loadInput(job))
    report(50)
    const { bytes, extension, notes } = await convertDocument(platform, doc, options.target_format)
    report(95)
    return { bytes, extension, ...(notes && notes.length > 0 ? { details: { notes } } : {}) }
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
    const doc = await readJobModel(job, bytes)
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
/**
 * Threads for image work. libvips's pool is process-wide and every pool thread runs one job, so
 * each job gets its share of the cores: sharp's threads and a model's textures encoded at once
 * both follow cores ÷ pool threads (1 with the default pool of one thread per core).
 */
const poolThreads = Math.max(1, Number((workerData as { threads?: number } | undefined)?.threads) || availableParallelism())
const imageThreads = Math.max(1, Math.floor(availableParallelism() / poolThreads))
sharp.concurrency(imageThreads)
// Every upload is new: libvips's operation cache (up to 50 MB, process-wide) would only hold memory.
sharp.cache(false)

// The Basis encoder is loaded on the first KTX2 job only (3 MB of WASM), then kept for the thread.
let basisModule: Promise<BasisModule> | undefined
function loadBasis(): Promise<BasisModule> {
  basisModule ??= loadBasisEncoder().catch((error: unknown) => {
    basisModule = undefined
    throw error
  })
  return basisModule
}

/**
 * Texture jobs answer in the input's own container: its format where that can be written (gltf →
 * zip), a zip bundle (OBJ and its textures, say) as a glTF zip so the new images travel with it,
 * and anything else as GLB.
 */
function sameContainer(format: string): string {
  const writable = writableFormats()
  if (writable.includes(format)) return format
  if (format === 'zip' && writable.includes('gltf')) return 'gltf'
  return 'glb'
}

type TextureJobOptions = Record<string, unknown> & { maxTextureBytes?: number; maxPixels?: number }

/** texture_optimize: every texture of a model (or a standalone image) re-encoded to JPEG, WebP or PNG. */
export async function textureOptimizeJob(job: WorkerJob): Promise<JobResult> {
  return runJob(job, async (report) => {
    const options = { ...(job.options as TextureJobOptions), encoder: sharp, concurrency: imageThreads } as TextureOptimizeOptions
    report(5)
    const bytes = await loadInput(job)
    if (isImageExtension(job.format)) return optimizeImage(bytes, options)
    const doc = await readJobModel(job, bytes)
    report(20)
    const textures: TextureReport[] = []
    await doc.transform(textureOptimize({ ...options, report: textures }))
    report(85)
    const written = await writeModel(platform, doc, sameContainer(job.format))
    return { ...written, details: summarizeTextures(textures) }
  })
}

/** texture_ktx2: every texture of a model (or a standalone image) encoded to KTX2 with Basis Universal. */
export async function textureKtx2Job(job: WorkerJob): Promise<JobResult> {
  return runJob(job, async (report) => {
    const basis = await loadBasis()
    const options = { ...(job.options as TextureJobOptions), encoder: sharp, basis } as TextureKtx2Options
    report(5)
    const bytes = await loadInput(job)
    if (isImageExtension(job.format)) return encodeImageKtx2(bytes, options)
    const doc = await readJobModel(job, bytes)
    report(15)
    const textures: TextureReport[] = []
    await doc.transform(textureKtx2({ ...options, report: textures, onProgress: (f) => report(15 + 75 * f) }))
    const written = await writeModel(platform, doc, sameContainer(job.format))
    return { ...written, details: summarizeTextures(textures) }
  })
}

export { textureOptimizeJob as texture_optimize, textureKtx2Job as texture_ktx2 }
export { convertJob as convert }
