import type { Storage } from 'unstorage'
import type { BatchState } from '../batches/batch-store.ts'

/**
 * Removes batch records (`batches:<id>`) once none of their tasks has a record any more (all were
 * removed by the retention), so batches follow their tasks out. A batch younger than `minAgeMs` is
 * kept whatever it holds: its task records may still be being written.
 */
export async function sweepBatches(records: Storage, liveTaskIds: Set<string>, minAgeMs: number, now = Date.now()): Promise<number> {
  let removed = 0
  for (const key of await records.getKeys('batches')) {
    const batch = await records.getItem<BatchState>(key)
    if (!batch || typeof batch !== 'object') continue
    if (now - Date.parse(batch.created_at) < minAgeMs) continue
    if (batch.tasks.some((task) => liveTaskIds.has(task.task_id))) continue
    await records.removeItem(key)
    removed++
  }
  return removed
}
