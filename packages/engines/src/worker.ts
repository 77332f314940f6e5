import { randomUUID } from 'node:crypto'
import { readFile, rename, rm, writeFile } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { dirname, join } from 'node:path'
import { workerData, type MessagePort } from 'node:worker_threads'
import type { Document } from '@gltf-transform/core'
import Piscina from 'piscina'
import sharp from 'sharp'
import { loadBasisEncoder, type BasisModule } from './basis-encoder.ts'
import { failureMessage, ModelInputError } from './errors.ts'
import { JobLogger } from './job-logger.ts'
import { uploadedFormat } from './io/gltf-text.ts'
import { readModel } from './io/index.ts'
import type { ReadOptions } from './io/limits.ts'
import { explainedReadFailure } from './ops/diagnose-file.ts'
import { loadGltfValidator } from './ops/gltf-validation.ts'
import type { EndMessage, FinalMessage, JobFailure, JobResult, LogMessage, WorkerJob } from './jobs.ts'
import { parseOperationOptions } from './operations/index.ts'
import { JOB_LIMITS, type OperationContext } from './operations/operation.ts'
import { enforceOutputSize, outputSizeRule } from './operations/output-size.ts'
import { createThreadRecycling, threadMemoryMb, type Retirement, type ThreadRecyclingOptions } from './thread-recycling.ts'
import { loadPlatform } from './platform.ts'

/**
 * The piscina worker. Its one job, `runEngineJob`, runs the operation the job names from the
 * registry (operations/index.ts); the codecs are loaded once per thread by the top-level await
 * below, before the first job runs.
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
      result = (await writeOutput(job.outputPath, bytes)) ?? {
        ok: true,
        size: bytes.byteLength,
        extension,
        ...(details ? { details } : {}),
      }
    } else {
      result = { ok: true, bytes, size: bytes.byteLength, extension, ...(details ? { details } : {}) }
    }
  } catch (error) {
    result = { ok: false, message: failureMessage(error) }
  }
  // What the thread holds after each job (SERVICE__LOG__LEVEL=debug): the figure the recycling settings bound.
  job.port?.postMessage({
    log: { level: 'debug', message: 'engine thread memory', fields: { memoryMb: threadMemoryMb() } },
  } satisfies LogMessage)
  const retiring = recycling.afterJob()
  if (retiring && job.port) return retire(job.port, result, retiring)
  job.port?.postMessage({ end: true } satisfies EndMessage)
  job.port?.close()
  return result.ok && result.bytes ? movedWithBytes({ ...result, bytes: result.bytes }) : result
}

/**
 * Writes the result where the caller's file store keeps it; a refusal of the system is said as the write's, not the input's.
 * It is written beside its path under the store's name for an unfinished write (`.<random>.part`, as the server's
 * fs-file-store.ts) and renamed into place: a full disk, or a thread ended mid-write (its process killed, the task
 * cancelled, its work budget spent), leaves no half result where the finished one is looked for. A failed write removes
 * its part file; one a killed thread left behind, the server's sweep removes (maintenance/sweep.ts).
 */
async function writeOutput(path: string, bytes: Uint8Array): Promise<JobFailure | undefined> {
  const temp = join(dirname(path), `.${randomUUID()}.part`)
  try {
    await writeFile(temp, bytes)
    await rename(temp, path)
    return undefined
  } catch (error) {
    // The write's own error is the answer: a removal refused as well (a read-only folder) adds nothing to it.
    await rm(temp, { force: true }).catch(() => undefined)
    const { code = 'EIO', message } = error as NodeJS.ErrnoException
    return { ok: false, message: failureMessage(error), outputWriteError: { code, message } }
  }
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

/** Reads a job's model; a glTF the library trips over fails with glTF-Validator's first error instead. */
async function readJobModel(format: string, bytes: Uint8Array, readOptions: ReadOptions): Promise<Document> {
  try {
    return await readModel(platform, bytes, format, { ...readOptions, sharp })
  } catch (error) {
    throw await explainedReadFailure(gltfValidator, bytes, format, error)
  }
}

async function loadInput(job: WorkerJob): Promise<Uint8Array> {
  if (!('path' in job.input)) return job.input.bytes
  // A plain view of the Buffer, not `new Uint8Array(buffer)`, which copies it (~11 ms on 27 MB).
  const buffer = await readFile(job.input.path)
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
}

const gltfValidator = loadGltfValidator()

/**
 * The one job of this worker: runs the registered operation named by `job.name`. Its options are
 * parsed with the operation's schema here, where they cross into the thread; an option that does
 * not parse fails the job with its name.
 */
export async function runEngineJob(job: WorkerJob): Promise<JobResult> {
  return runJob(job, async (report) => {
    const parsed = parseOperationOptions(job.name, job.options)
    if (!parsed.ok) throw new ModelInputError(parsed.message)
    const limits = JOB_LIMITS.safeParse(job.options)
    // The server sets this bound, not the user: a bad one is the service's fault, said as such.
    if (!limits.success)
      throw new ModelInputError(`internal error: invalid job option maxAllocationBytes: ${limits.error.issues[0]?.message ?? 'invalid'}`)
    const { maxAllocationBytes } = limits.data
    const readOptions: ReadOptions = maxAllocationBytes !== undefined ? { maxAllocationBytes } : {}
    const bytes = await loadInput(job)
    // What the bytes are, for every step (reader, diagnosis, output container): a GLB named .gltf is a GLB.
    const format = uploadedFormat(job.format, bytes, platform.logger)
    const context: OperationContext = {
      platform,
      readModel: (modelBytes) => readJobModel(format, modelBytes, readOptions),
      readOptions,
      gltfValidator,
      sharp,
      imageThreads,
      loadBasis,
      report,
    }
    const input = { bytes, format, ...(job.filename !== undefined ? { filename: job.filename } : {}) }
    const { operation, options } = parsed
    return enforceOutputSize(outputSizeRule(operation.outputSize, options), input, await operation.run(context, input, options))
  })
}

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
