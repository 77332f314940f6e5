import { ERROR_TEXTS } from '@mos/sdk/contract'
import { describe, expect, it } from 'vitest'
import { DISK_FULL_TEXT } from '../src/storage/disk-full.ts'
import { S3Error } from '../src/storage/s3-request.ts'
import { STORAGE_FAILED_TEXT, STORAGE_UNAVAILABLE_TEXT } from '../src/storage/storage-unavailable.ts'
import { RedisUnreachableError } from '../src/redis/redis-unreachable.ts'
import type { TaskState } from '../src/tasks/task-state.ts'
import { settleTask, startTask } from '../src/tasks/task-transitions.ts'

const at = new Date('2026-11-23T10:00:00.000Z')

function pending(overrides: Partial<TaskState> = {}): TaskState {
  return {
    task_id: 't1',
    type: 'compress',
    status: 'pending',
    input_filename: 'dir/engine.glb',
    input_size_bytes: 1000,
    created_at: '2026-11-23T09:00:00.000Z',
    job: { inputKey: 'tasks/t1/input', format: 'glb', options: { engine: 'draco' }, attempts: 0 },
    ...overrides,
  }
}

const processing = (overrides: Partial<TaskState> = {}) => ({ ...startTask(pending(overrides), at), progress: 40 })

describe('startTask', () => {
  it('takes a pending task to processing at 0 with one more attempt and the upload request id', () => {
    expect(startTask(pending(), at, 'req-1')).toEqual({
      ...pending(),
      status: 'processing',
      progress: 0,
      started_at: at.toISOString(),
      job: { ...pending().job, attempts: 1, requestId: 'req-1' },
    })
  })

  it("keeps the record's own request id over the queue's", () => {
    const stored = pending({ job: { ...pending().job, attempts: 2, requestId: 'own' } })
    expect(startTask(stored, at, 'queued').job).toMatchObject({ attempts: 3, requestId: 'own' })
  })
})

describe('settleTask', () => {
  it('completes with the output name, size figures, details apart from the diagnosis, and the output key', () => {
    const task = processing()
    const settled = settleTask(
      task,
      { kind: 'result', outputKey: 'tasks/t1/output', result: { ok: true, size: 250, extension: 'glb', details: { removed: 3 } } },
      { at },
    )
    expect(settled).toEqual({
      ...task,
      status: 'completed',
      progress: 100,
      completed_at: at.toISOString(),
      output: { filename: 'engine.draco.glb', size_bytes: 250, compression_ratio: 0.25, savings_percent: 75 },
      details: { removed: 3 },
      job: { ...task.job, outputKey: 'tasks/t1/output' },
    })
  })

  it('puts a diagnosis in `result`, adds no size figures for a diagnosis, and sets expires_at from the retention', () => {
    const task = processing({ type: 'diagnose', job: { ...pending().job, options: {} } })
    const settled = settleTask(
      task,
      { kind: 'result', outputKey: 'k', result: { ok: true, size: 10, extension: 'json', details: { result: { valid: true } } } },
      { at, retentionMs: 3_600_000 },
    )
    expect(settled.result).toEqual({ valid: true })
    expect(settled.details).toBeUndefined()
    expect(settled.output).toEqual({ filename: 'engine.diagnosis.json', size_bytes: 10 })
    expect(settled.expires_at).toBe('2026-11-23T11:00:00.000Z')
  })

  it("fails with the engine's message, dropping progress", () => {
    const settled = settleTask(
      processing(),
      { kind: 'result', outputKey: 'k', result: { ok: false, message: 'the file is not a model' } },
      { at },
    )
    expect(settled.status).toBe('failed')
    expect(settled.error).toBe('the file is not a model')
    expect(settled.failed_at).toBe(at.toISOString())
    expect('progress' in settled).toBe(false)
    expect(settled.expires_at).toBeUndefined()
  })

  it('fails a timed-out run with the time-out text in whole seconds', () => {
    expect(settleTask(processing(), { kind: 'timed-out', timeoutMs: 2_400 }, { at }).error).toBe(ERROR_TEXTS.taskTimeout(2))
  })

  it('fails an error around the job with the internal text, a full disk by name', () => {
    expect(settleTask(processing(), { kind: 'error', error: new Error('bucket gone') }, { at }).error).toBe(
      ERROR_TEXTS.internal('bucket gone'),
    )
    const full = Object.assign(new Error('wrapped'), { cause: Object.assign(new Error('ENOSPC /x'), { code: 'ENOSPC' }) })
    expect(settleTask(processing(), { kind: 'error', error: full }, { at }).error).toBe(ERROR_TEXTS.internal(DISK_FULL_TEXT))
    expect(settleTask(processing(), { kind: 'error', error: 'plain text' }, { at }).error).toBe(ERROR_TEXTS.internal('plain text'))
  })

  it('fails a store that stayed away past the retries in words for the client, naming none of our hosts, ports or keys', () => {
    const redis = new RedisUnreachableError('redis://:secret@redis.internal:6379', 'connect ECONNREFUSED 10.0.0.7:6379')
    const s3 = new S3Error('put', 'files/tasks/t1/output', 0, 'fetch failed (connect ECONNREFUSED 10.0.0.8:9000)')
    const denied = new S3Error('put', 'files/tasks/t1/output', 403, 'AccessDenied')
    const errors = [redis, Object.assign(new Error('wrapped'), { cause: s3 }), denied].map(
      (error) => settleTask(processing(), { kind: 'error', error }, { at }).error,
    )
    expect(errors).toEqual([
      ERROR_TEXTS.internal(STORAGE_UNAVAILABLE_TEXT),
      ERROR_TEXTS.internal(STORAGE_UNAVAILABLE_TEXT),
      ERROR_TEXTS.internal(STORAGE_FAILED_TEXT),
    ])
  })

  it('gives up a task whose earlier starts all died, counting them', () => {
    const stored = pending({ job: { ...pending().job, attempts: 3 } })
    const settled = settleTask(stored, { kind: 'gave-up' }, { at, retentionMs: 1000 })
    expect(settled).toMatchObject({ status: 'failed', failed_at: at.toISOString(), expires_at: '2026-11-23T10:00:01.000Z' })
    expect(settled.error).toBe(ERROR_TEXTS.internal('task stopped 3 times without finishing (its worker process ended each time)'))
  })
})
