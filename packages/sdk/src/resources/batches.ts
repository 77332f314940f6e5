import type { BatchRecord, BatchSubmitResponse, OperationRequestFields } from '../contract/index.ts'
import type { RequestOptions, Transport } from '../request.ts'
import { toFormData, type UploadParams, type UploadResolver } from '../upload.ts'
import { poll, type WaitOptions } from '../wait.ts'
import type { SubmitExtensionFields } from './operations.ts'

/**
 * The fields of a batch: every field of POST /compress, applied to each of its tasks and checked
 * by compress's rules, with `level` 1..10 in both variants (default 7). The contract's batch table
 * (4.11) has `engine` and `level`; the others are Mos extensions there (docs/api.md, Batches).
 */
export type BatchCompressFields = OperationRequestFields['compress']

/** POST /batch/compress (4.11): every file becomes its own task; `callback_url` gets each task's record. */
export interface BatchCompressParams<U> extends BatchCompressFields, SubmitExtensionFields {
  files: (U | UploadParams<U>)[]
}

/** Options of `waitForBatch`. */
export type WaitForBatchOptions = WaitOptions<BatchRecord> & Omit<RequestOptions, 'signal'>

/** Batches (4.11, 4.12). */
export interface BatchesResource<U> {
  /** Submits several files for compression in one request. */
  batchCompress(params: BatchCompressParams<U>, options?: RequestOptions): Promise<BatchSubmitResponse>
  /** Reads a batch record (404 → `NotFoundError`). */
  getBatch(batchId: string, options?: RequestOptions): Promise<BatchRecord>
  /** Polls until no sub-task is running; resolves with the final batch record. */
  waitForBatch(batchId: string, options?: WaitForBatchOptions): Promise<BatchRecord>
}

function isUploadParams<U>(entry: U | UploadParams<U>): entry is UploadParams<U> {
  return typeof entry === 'object' && entry !== null && 'file' in entry
}

/** Creates the batch calls on a transport. */
export function createBatches<U>(transport: Transport, resolveUpload: UploadResolver<U>): BatchesResource<U> {
  const getBatch = async (batchId: string, options?: RequestOptions) =>
    (await transport.request(
      { method: 'GET', path: `/batch/${encodeURIComponent(batchId)}`, responseType: 'json' },
      options,
    )) as BatchRecord
  return {
    async batchCompress({ files, ...fields }, options) {
      const parts = await Promise.all(
        files.map((entry) => (isUploadParams(entry) ? resolveUpload(entry.file, entry.filename) : resolveUpload(entry, undefined))),
      )
      const body = toFormData('files', parts, fields)
      return (await transport.request(
        { method: 'POST', path: '/batch/compress', body, responseType: 'json' },
        options,
      )) as BatchSubmitResponse
    },
    getBatch,
    waitForBatch: (batchId, options = {}) => {
      const { signal, timeoutMs, onProgress, pollIntervalMs, ...request } = options
      return poll(
        {
          label: `batch ${batchId}`,
          fetch: (pollSignal) => getBatch(batchId, { ...request, signal: pollSignal }),
          isDone: (batch) => batch.status !== 'processing',
          fingerprint: (batch) => `${batch.status}:${batch.completed}:${batch.failed}`,
        },
        { signal, timeoutMs, onProgress, pollIntervalMs },
      )
    },
  }
}
