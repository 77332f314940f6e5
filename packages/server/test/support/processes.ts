import { spawn, type ChildProcess } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const REPO = fileURLToPath(new URL('../../../../', import.meta.url))
const MAIN = 'packages/server/dist/main.js'

export interface MosProcess {
  name: string
  pid: number
  port: number
  url: string
  child: ChildProcess
  /** Resolves with the exit code (or the signal's name) once the process has ended. */
  exited: Promise<number | string>
  /** Everything it printed so far. */
  output(): string
}

/** How to start it besides `env`. */
export interface StartMosOptions {
  /** Node options before the entry (e.g. a test-only `--import`); production passes none. */
  nodeArgs?: string[]
  /**
   * Working directory, where the server reads a `.env`. By default the system's temporary folder,
   * not the repository: a developer's own `.env` there must not change what the tests run.
   */
  cwd?: string
}

/**
 * Starts the compiled service from its real entry point (`node packages/server/dist/main.js`, what
 * `npm start` runs, built by the vitest global setup) with `env`, and resolves once it prints the
 * port it listens on.
 */
export async function startMos(
  name: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
  options: StartMosOptions = {},
): Promise<MosProcess> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('SERVICE__')))
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), join(REPO, MAIN)], {
    cwd: options.cwd ?? tmpdir(),
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let text = ''
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()))
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()))
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)))

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in ${timeoutMs} ms:\n${text}`)), timeoutMs)
    const check = () => {
      const match = /listening on http:\/\/[^\s:]+:(\d+)/.exec(text)
      if (match) {
        clearTimeout(timer)
        resolve(Number(match[1]))
      }
    }
    child.stdout!.on('data', check)
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited (${code}) before listening:\n${text}`))
    })
  })
  return { name, pid: child.pid!, port, url: `http://127.0.0.1:${port}`, child, exited, output: () => text }
}

/** Stops a process (SIGTERM, then SIGKILL after `graceMs`) and waits for it to end. */
export async function stopMos(process_: MosProcess | undefined, graceMs = 30_000): Promise<void> {
  if (!process_ || process_.child.exitCode !== null || process_.child.signalCode !== null) return
  process_.child.kill('SIGTERM')
  const timer = setTimeout(() => process_.child.kill('SIGKILL'), graceMs)
  await process_.exited
  clearTimeout(timer)
}
