import { constants } from 'node:fs'
import { access, stat } from 'node:fs/promises'
import { ERROR_TEXTS, type TaskType, UPLOAD_EXTENSIONS, uploadExtensionOf } from '../contract/index.ts'
import type { TaskCommand } from './args.ts'

/** The operation each command submits. */
export const COMMAND_TASK_TYPES: Record<TaskCommand, TaskType> = {
  compress: 'compress',
  convert: 'convert',
  repair: 'repair',
  diagnose: 'diagnose',
  textures: 'texture_optimize',
  ktx2: 'texture_ktx2',
}

/**
 * Why an input cannot be sent, as far as the CLI can tell without the service: a path that is
 * missing, unreadable or not a file (the system's message), or an extension the operation does not
 * take (the service's own text, `unsupported format: txt`). Undefined when it may be sent. Judged
 * before anything is uploaded so that such a file fails alone: in a batch the service refuses the
 * whole request for one bad part, and a missing file would fail the batch's upload for every file.
 * @example await inputProblem('compress', 'notes.txt') // 'unsupported format: txt'
 */
export async function inputProblem(command: TaskCommand, file: string): Promise<string | undefined> {
  try {
    if (!(await stat(file)).isFile()) return `not a file: ${file}`
    await access(file, constants.R_OK)
  } catch (error) {
    return (error as Error).message
  }
  const extension = uploadExtensionOf(file)
  if (!UPLOAD_EXTENSIONS[COMMAND_TASK_TYPES[command]].includes(extension)) {
    return ERROR_TEXTS.unsupportedFormat(extension || '(no extension)')
  }
  return undefined
}
