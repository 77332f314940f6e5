import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, parse } from 'node:path'
import { pathToFileURL } from 'node:url'

/** Where the server's entry and a tsx loader were found. */
export interface ServerLocation {
  main: string
  tsx: string
}

/**
 * Finds `@mos/server` at run time, from `start` upwards through `node_modules`, without importing
 * it: the SDK must not depend on the server (the dependency goes the other way).
 */
export function findServer(start: string): ServerLocation | undefined {
  let dir = start
  for (;;) {
    const manifest = join(dir, 'node_modules', '@mos', 'server', 'package.json')
    if (existsSync(manifest)) {
      const main = join(dirname(manifest), 'src', 'main.ts')
      if (!existsSync(main)) return undefined
      try {
        const tsx = createRequire(manifest).resolve('tsx')
        return { main, tsx }
      } catch {
        return undefined
      }
    }
    if (dir === parse(dir).root) return undefined
    dir = dirname(dir)
  }
}

export const SERVER_MISSING = `mos serve: the server package @mos/server is not installed here.
Install it beside the SDK (npm install @mos/server), or run the server from the Mos repository with \`npm start\`.`

/**
 * Starts the server as `node --import tsx <server>/src/main.ts`, like `npm start`, forwarding
 * signals and the exit status. Resolves with that status.
 */
export function serve(location: ServerLocation, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const child = spawn(process.execPath, ['--import', pathToFileURL(location.tsx).href, location.main, ...args], { stdio: 'inherit', env })
  const forward = (signal: NodeJS.Signals) => child.kill(signal)
  process.on('SIGINT', forward)
  process.on('SIGTERM', forward)
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      process.off('SIGINT', forward)
      process.off('SIGTERM', forward)
      resolve(code ?? (signal ? 128 + 2 : 1))
    })
    child.on('error', (error) => {
      process.stderr.write(`mos serve: ${error.message}\n`)
      resolve(1)
    })
  })
}
