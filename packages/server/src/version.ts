import { readFileSync } from 'node:fs'

/** The running service's version (variant B health), from the server package. */
export const SERVICE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version
