import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** A fixed amount of pure CPU work (no allocation, no memory traffic), timed inside the process. */
const LOOP =
  'const t = performance.now(); let x = 0; for (let i = 0; i < 2e8; i++) x = (x + i * 7) % 1000003; process.stdout.write(String(performance.now() - t + (x < 0 ? 1 : 0)))'

/**
 * Runs `count` busy loops as separate processes at once; resolves to the slowest loop's time (ms),
 * process start-up excluded. One loop against two tells what this machine gives two CPU-bound
 * threads that share nothing: on these shared VMs it swung from 1.2 to 1.96 within minutes.
 */
export async function busyLoops(count: number): Promise<number> {
  const times = await Promise.all(Array.from({ length: count }, async () => Number((await run(process.execPath, ['-e', LOOP])).stdout)))
  return Math.max(...times)
}
