import { postJson, request } from './api.ts'

/**
 * The console's controls of a task (`/admin/tasks/{id}/cancel`, `DELETE /admin/tasks/{id}`, the session's routes the
 * Work page's submits use too), shared by the Work page's cards and Admin's task record. A refusal rejects with the
 * service's words: a cancel of a task that ended meanwhile answers 409 `task … is completed: nothing to cancel`, one
 * of a task gone 404 `task not found: …`.
 */
export function cancelTask(taskId: string): Promise<unknown> {
  return postJson(`/admin/tasks/${encodeURIComponent(taskId)}/cancel`, {})
}

export function deleteTask(taskId: string): Promise<unknown> {
  return request(`/admin/tasks/${encodeURIComponent(taskId)}`, { method: 'DELETE' })
}
