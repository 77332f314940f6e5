import { fork, type ChildProcess } from 'node:child_process'

/**
 * Starts one of the benchmark's helper processes (a TypeScript file beside this one) and waits for
 * its first message, which says it is ready (and carries what it wants known, e.g. its port).
 */
export async function startHelper<T>(file: string): Promise<{ child: ChildProcess; ready: T }> {
  const child = fork(new URL(file, import.meta.url).pathname, [], {
    execArgv: ['--import', 'tsx'],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const ready = await new Promise<T>((resolve, reject) => {
    child.once('message', (message) => resolve(message as T))
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)))
  })
  return { child, ready }
}
