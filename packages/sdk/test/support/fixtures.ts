import { setupServer } from 'msw/node'

/** Base address the msw handlers answer for; nothing listens there. */
export const BASE = 'http://mos.test'
export const API = `${BASE}/api/v1`
export const KEY = 'test-key'

/** An msw server for one test file: unhandled requests fail the test, except to 127.0.0.1 (real sockets). */
export function mockServer() {
  return setupServer()
}

const now = '2026-11-22T00:00:00.000Z'

export const pendingTask = (id = 't1') => ({
  task_id: id,
  status: 'pending' as const,
  type: 'compress' as const,
  input_filename: 'box.glb',
  input_size_bytes: 1000,
  created_at: now,
})

export const processingTask = (progress: number, id = 't1') => ({
  ...pendingTask(id),
  status: 'processing' as const,
  progress,
  started_at: now,
})

export const completedTask = (id = 't1') => ({
  ...pendingTask(id),
  status: 'completed' as const,
  progress: 100 as const,
  started_at: now,
  completed_at: now,
  output: { filename: 'box.glb', size_bytes: 400, compression_ratio: 0.4, savings_percent: 60 },
})

export const failedTask = (id = 't1') => ({
  task_id: id,
  status: 'failed' as const,
  error: 'internal error: draco encoder failed',
  created_at: now,
  failed_at: now,
})
