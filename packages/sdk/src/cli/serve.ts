import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { constants } from 'node:os'
import { dirname, join, parse } from 'node:path'

/** Where the server's compiled entry was found. */
export interface ServerLocation {
  main: string
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
      // The compiled entry, what `npm start` runs: plain Node, no TypeScript loader.
      const main = join(dirname(manifest), 'dist', 'main.js')
      return existsSync(main) ? { main } : undefined
    }
    if (dir === parse(dir).root) return undefined
    dir = dirname(dir)
  }
}

export const SERVER_MISSING = `mos serve: the server package @mos/server is not installed here.
Install it beside the SDK (npm install @mos/server; in the Mos repository \`npm run build\` builds it), or run the server from the Mos repository with \`npm start\`.`

/**
 * Starts the server as `node <server>/dist/main.js`, like `npm start`, forwarding
 * signals and the exit status. Resolves with that status.
 */
export function serve(location: ServerLocation, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const child = spawn(process.execPath, [location.main, ...args], { stdio: 'inherit', env })
  const forward = (signal: NodeJS.Signals) => child.kill(signal)
  process.on('SIGINT', forward)
  process.on('SIGTERM', forward)
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      process.off('SIGINT', forward)
      process.off('SIGTERM', forward)
      // A shell's convention for a child ended by a signal: 128 + the signal's number (SIGTERM: 143).
      resolve(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1))
    })
    child.on('error', (error) => {
      process.stderr.write(`mos serve: ${error.message}\n`)
      resolve(1)
    })
  })
}
