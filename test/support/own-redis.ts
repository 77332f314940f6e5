import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { sleep } from './poll.ts'
import { redisAnswers } from './redis.ts'

/**
 * A Redis server of the test's own, for outage experiments: the shared Redis at 127.0.0.1:6379 is
 * other people's and must never be stopped. Its data survives `restart` (saved on shutdown into
 * its own folder and loaded again), as a production Redis with persistence keeps it.
 */
export interface OwnRedis {
  url: string
  /** Stops the server (saving its data), as a Redis restart or crash-with-persistence does. */
  stop(): Promise<void>
  /** Starts it again on the same port with the data it saved. */
  start(): Promise<void>
  /** Stops it for good and removes its folder. */
  close(): Promise<void>
}

/** Whether `redis-server` can be started here; tests needing an outage skip (or fail under REQUIRE_REDIS=1) without it. */
export async function ownRedisAvailable(): Promise<boolean> {
  const found = await new Promise<boolean>((resolve) => {
    const probe = spawn('redis-server', ['--version'], { stdio: 'ignore' })
    probe.on('error', () => resolve(false))
    probe.on('exit', (code) => resolve(code === 0))
  })
  if (!found && process.env.REQUIRE_REDIS === '1') throw new Error('REQUIRE_REDIS=1 but redis-server is not installed')
  if (!found) console.warn('[test] no redis-server binary: tests that stop Redis are skipped')
  return found
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const directory = await mkdtemp(join(tmpdir(), 'mos-redis-'))
  const port = await freePort()
  const url = `redis://127.0.0.1:${port}`
  let child: ChildProcess | undefined
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', directory, '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    })
    while (!(await redisAnswers(url, 500))) {
      if (child.exitCode !== null) throw new Error(`redis-server on port ${port} exited (${child.exitCode})`)
      await sleep(50)
    }
  }
  const stop = async () => {
    const running = child
    if (!running || running.exitCode !== null) return
    const exited = new Promise((resolve) => running.once('exit', resolve))
    const client = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null })
    client.on('error', () => undefined)
    // SHUTDOWN SAVE writes the data first; the connection closes under the command.
    await client.call('SHUTDOWN', 'SAVE').catch(() => undefined)
    client.disconnect()
    await exited
  }
  await start()
  return {
    url,
    stop,
    start,
    async close() {
      await stop()
      await rm(directory, { recursive: true, force: true })
    },
  }
}
