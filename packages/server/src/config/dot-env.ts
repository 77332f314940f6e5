import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseEnv } from 'node:util'
import { ConfigError } from './load.ts'

/**
 * Adds the variables of `.env` in `dir` (the working directory at start-up) to `env`, each only
 * where `env` has none: a variable set in the environment wins, so one run can override one line
 * of the file. No file is no error; a file that exists but cannot be read stops start-up (a
 * deployment that ships settings in it must not silently run on defaults). Its `SERVICE__*` lines
 * then go through the same schema as the environment: an unknown name or a bad value is refused.
 * Returns the file's path when one was read.
 */
export function readDotEnv(dir: string, env: NodeJS.ProcessEnv): string | undefined {
  const file = join(dir, '.env')
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new ConfigError(`${file}: cannot be read (${(error as Error).message})`)
  }
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (env[name] === undefined && value !== undefined) env[name] = value
  }
  return file
}
