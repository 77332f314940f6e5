import type { Redis } from 'ioredis'
import { loadIORedis } from '../lazy-modules.ts'
import { describeUnreachable } from './redis-unreachable.ts'

export interface RedisConnectionsOptions {
  /** Name every connection gives itself (`CLIENT SETNAME`), so `CLIENT LIST` shows whose it is. */
  name: string
  /** Commands fail after this many reconnection attempts instead of waiting for Redis forever. */
  maxRetriesPerRequest?: number
  connectTimeoutMs?: number
}

/**
 * Between what the components had on their own connections: records retried 3 times, the rate
 * limit, lock and trial counter once, and the rate limit gave up connecting after 2 s so requests
 * fall back to its in-process count quickly while Redis is away.
 */
export const REDIS_CONNECTIONS_DEFAULTS = { maxRetriesPerRequest: 2, connectTimeoutMs: 2_000 } as const

/**
 * The Redis connections of a process, one set for every component: records, rate limit, sweep lock
 * and trial counter share one command connection per distinct URL; BullMQ gets its own per URL,
 * since it must never give up on a command (`maxRetriesPerRequest: null`) and its worker blocks
 * (BullMQ duplicates that one for its blocking reads). Connections open on first use and close once.
 */
export interface RedisConnections {
  /** The shared command connection to `url` (commands fail after a few retries while Redis is away). */
  commands(url: string): Redis
  /** The connection BullMQ's queue and worker share for `url`. */
  queue(url: string): Redis
  /**
   * The subscriber connection to `url` (pub/sub: a subscribed connection takes no other command).
   * Opened only by a process that waits on something, so most processes never hold one.
   */
  subscriber(url: string): Redis
  /** Quits every connection opened so far. */
  close(): Promise<void>
}

/** Creates the (still empty) set of Redis connections; each opens on first use. */
export function createRedisConnections(options: RedisConnectionsOptions): RedisConnections {
  const { maxRetriesPerRequest, connectTimeoutMs } = { ...REDIS_CONNECTIONS_DEFAULTS, ...options }
  const open = new Map<string, Redis>()
  let closed = false

  const connection = (kind: 'commands' | 'queue' | 'subscriber', url: string) => {
    if (closed) throw new Error('[mos] [redis] connections are closed')
    const id = `${kind} ${url}`
    let client = open.get(id)
    if (!client) {
      client = new (loadIORedis().Redis)(url, {
        connectionName: `${options.name}:${kind}`,
        connectTimeout: connectTimeoutMs,
        // Neither may give up: BullMQ must never lose a command, and a subscriber that stopped
        // reconnecting would silently stop waking waiters (ioredis subscribes again on reconnect).
        ...(kind !== 'commands'
          ? { maxRetriesPerRequest: null }
          : // Connects on the first command, so a process that never needs Redis never dials it.
            { maxRetriesPerRequest, lazyConnect: true }),
      })
      // Failures surface through the commands that fail (and BullMQ's own error events); an
      // unhandled 'error' event would end the process.
      client.on('error', () => undefined)
      if (kind === 'commands') describeUnreachable(client, url)
      open.set(id, client)
    }
    return client
  }

  return {
    commands: (url) => connection('commands', url),
    queue: (url) => connection('queue', url),
    subscriber: (url) => connection('subscriber', url),
    async close() {
      if (closed) return
      closed = true
      await Promise.all(
        [...open.values()].map((client) =>
          client.status === 'wait' || client.status === 'end'
            ? client.disconnect()
            : client.quit().then(
                () => undefined,
                () => client.disconnect(),
              ),
        ),
      )
      open.clear()
    },
  }
}
