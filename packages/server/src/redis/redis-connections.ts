import type { Redis } from 'ioredis'
import { loadIORedis } from '../lazy-modules.ts'
import { type ConnectionWatch, describeUnreachable, watchConnection } from './redis-unreachable.ts'

export interface RedisConnectionsOptions {
  /** Name every connection gives itself (`CLIENT SETNAME`), so `CLIENT LIST` shows whose it is. */
  name: string
  /** Commands fail after this many reconnection attempts instead of waiting for Redis forever. */
  maxRetriesPerRequest?: number
  connectTimeoutMs?: number
  /** The longest wait between two reconnection attempts while Redis is away. */
  reconnectMaxMs?: number
}

/**
 * Between what the components had on their own connections: records retried 3 times, the rate
 * limit, lock and trial counter once, and the rate limit gave up connecting after 2 s so requests
 * fall back to its in-process count quickly while Redis is away.
 */
export const REDIS_CONNECTIONS_DEFAULTS = { maxRetriesPerRequest: 2, connectTimeoutMs: 2_000, reconnectMaxMs: 500 } as const

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
  /**
   * One round trip to Redis on `client`, one of these connections (readiness). While the connection
   * is between reconnection attempts it answers at once with why (`Redis at … unreachable: connect
   * ECONNREFUSED … (reconnecting)`), where a PING would wait in ioredis's offline queue: forever on
   * BullMQ's connection, several attempts on the commands one. A PING whose connection drops under
   * it fails at once in the same words.
   */
  ping(client: Redis): Promise<void>
  /** Quits every connection opened so far. */
  close(): Promise<void>
}

type ConnectionKind = 'commands' | 'queue' | 'subscriber'

/** A new ioredis client of `kind` to `url`, with the settings each kind needs. */
function openClient(kind: ConnectionKind, url: string, options: Required<RedisConnectionsOptions>): Redis {
  const { maxRetriesPerRequest, connectTimeoutMs, reconnectMaxMs } = options
  const client = new (loadIORedis().Redis)(url, {
    connectionName: `${options.name}:${kind}`,
    connectTimeout: connectTimeoutMs,
    // ioredis waits 50 ms more before each attempt, up to 2 s: after an outage of a minute the
    // process noticed Redis back up to 2 s late, and a probe in that gap saw no answer. An attempt
    // at a Redis that is away is one refused connect, so a short ceiling costs next to nothing.
    // BullMQ's blocking connection is a duplicate of the queue one and keeps this too.
    retryStrategy: (attempt: number) => Math.min(attempt * 50, reconnectMaxMs),
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
  return client
}

/**
 * A PING that fails as soon as the connection drops under it: ioredis sends it again once it has
 * reconnected, so on a connection that never gives up (BullMQ's) it would wait out the whole outage,
 * and a probe that asked just as Redis went away said only that it had no answer.
 */
async function pingWhileConnected(client: Redis, watch: ConnectionWatch | undefined): Promise<void> {
  let dropped: (() => void) | undefined
  try {
    await new Promise<void>((resolve, reject) => {
      dropped = () => reject(watch?.unreachable() ?? new Error('the connection to Redis closed'))
      client.once('close', dropped)
      client.ping().then(() => resolve(), reject)
    })
  } finally {
    if (dropped) client.removeListener('close', dropped)
  }
}

/** Creates the (still empty) set of Redis connections; each opens on first use. */
export function createRedisConnections(options: RedisConnectionsOptions): RedisConnections {
  const settings = { ...REDIS_CONNECTIONS_DEFAULTS, ...options }
  const open = new Map<string, Redis>()
  const watches = new Map<Redis, ConnectionWatch>()
  let closed = false

  const connection = (kind: ConnectionKind, url: string) => {
    if (closed) throw new Error('[mos] [redis] connections are closed')
    const id = `${kind} ${url}`
    let client = open.get(id)
    if (!client) {
      client = openClient(kind, url, settings)
      const watch = watchConnection(client, url)
      if (kind === 'commands') describeUnreachable(client, url, watch)
      watches.set(client, watch)
      open.set(id, client)
    }
    return client
  }

  return {
    commands: (url) => connection('commands', url),
    queue: (url) => connection('queue', url),
    subscriber: (url) => connection('subscriber', url),
    async ping(client) {
      const watch = watches.get(client)
      const away = watch?.unreachable()
      if (away) throw away
      await pingWhileConnected(client, watch)
    },
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
      watches.clear()
    },
  }
}
