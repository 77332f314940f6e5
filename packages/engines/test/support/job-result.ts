import type { JobResult, JobSuccess } from '../../src/index.ts'

/** The result of a job that must succeed; a failure throws with the job's own message. */
export function success(result: JobResult): JobSuccess {
  if (!result.ok) throw new Error(result.message)
  return result
}
