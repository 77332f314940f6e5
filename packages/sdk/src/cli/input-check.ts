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
 * A path's failures said in words, the code after them: the line they go on names the file already,
 * where the system's message repeated it after the call that failed ('ENOENT: no such file or
 * directory, stat 'a.glb''). Others keep the system's message.
 */
const PATH_FAILURES: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTDIR: 'a folder on its path is a file',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'file name too long',
}

/**
 * Why an input cannot be sent, as far as the CLI can tell without the service: a path that is
 * missing, unreadable or not a file (in words, `PATH_FAILURES`), or an extension the operation does not
 * take (the service's own text, `unsupported format: txt`). Undefined when it may be sent. Judged
 * before anything is uploaded so that such a file fails alone: in a batch the service refuses the
 * whole request for one bad part, and a missing file would fail the batch's upload for every file.
 * @example await inputProblem('compress', 'notes.txt') // 'unsupported format: txt'
 */
export async function inputProblem(command: TaskCommand, file: string): Promise<string | undefined> {
  try {
    if (!(await stat(file)).isFile()) return 'not a file'
    await access(file, constants.R_OK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code && PATH_FAILURES[code] ? `${PATH_FAILURES[code]} (${code})` : (error as Error).message
  }
  const extension = uploadExtensionOf(file)
  if (!UPLOAD_EXTENSIONS[COMMAND_TASK_TYPES[command]].includes(extension)) {
    return ERROR_TEXTS.unsupportedFormat(extension || '(no extension)')
  }
  return undefined
}
