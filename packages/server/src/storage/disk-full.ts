/** Error codes of a write refused for lack of space: the disk is full, or the user's quota is. */
const NO_SPACE_CODES = new Set(['ENOSPC', 'EDQUOT'])

/** The text clients and task records get for it: the service's state, never a path of ours. */
export const DISK_FULL_TEXT = 'insufficient disk space'

/** Whether `error`, or an error it wraps (h3, streams, the S3 SDK wrap theirs), is a full disk. */
export function isDiskFull(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 8; depth++) {
    if (typeof current !== 'object') return false
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string' && NO_SPACE_CODES.has(code)) return true
    current = (current as { cause?: unknown }).cause
  }
  return false
}
