import type { Storage } from 'unstorage'

/** A batch as stored: which tasks it made, in upload order. Counts and status are derived live. */
export interface BatchState {
  batch_id: string
  created_at: string
  tasks: { task_id: string; filename: string }[]
  /** `keyOwner` of the submitting API key (never the key). */
  owner?: string
}

/** Batch records in unstorage, one JSON item per batch under `batches:<id>`. */
export interface BatchStore {
  get(id: string): Promise<BatchState | undefined>
  put(batch: BatchState): Promise<void>
}

const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/

export function createBatchStore(storage: Storage): BatchStore {
  return {
    async get(id) {
      if (!SAFE_ID.test(id)) return undefined
      const batch = await storage.getItem<BatchState>(`batches:${id}`)
      return batch && typeof batch === 'object' ? batch : undefined
    },
    async put(batch) {
      await storage.setItem(`batches:${batch.batch_id}`, batch)
    },
  }
}
