import { createServer } from 'node:net'

/** A local port with nothing listening on it (bound, then released), for real ECONNREFUSED. */
export async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** `fetch` that counts how often it is called, passing through to the real one. */
export function countingFetch() {
  const counter = {
    calls: 0,
    fetch: ((input, init) => {
      counter.calls++
      return globalThis.fetch(input, init)
    }) as typeof globalThis.fetch,
  }
  return counter
}
