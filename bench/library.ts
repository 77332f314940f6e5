import { startHelper } from './child.ts'
import type { Input } from './stats.ts'

/** The library baseline's process (library-runner.ts): one call at a time, timed inside it. */
export interface LibraryRunner {
  compress(input: Input, engine: 'draco' | 'meshopt'): Promise<number>
  stop(): void
}

export async function startLibraryRunner(): Promise<LibraryRunner> {
  const { child } = await startHelper('./library-runner.ts')
  const sent = new Set<string>()
  let next = 0
  return {
    compress(input, engine) {
      const id = next++
      const first = !sent.has(input.name)
      sent.add(input.name)
      return new Promise((resolve, reject) => {
        const onMessage = (reply: { id: number; ms?: number; error?: string }) => {
          if (reply.id !== id) return
          child.off('message', onMessage)
          if (reply.error !== undefined) reject(new Error(`library call failed: ${reply.error}`))
          else resolve(reply.ms!)
        }
        child.on('message', onMessage)
        child.send({ id, name: input.name, engine, ...(first ? { bytes: input.bytes } : {}) })
      })
    },
    stop() {
      child.kill()
    },
  }
}
