import type { Config } from '../config/schema.ts'
import { queueRedisUrl } from '../queue/create-queue.ts'
import type { RedisConnections } from '../redis/redis-connections.ts'
import type { TaskIdChannel } from '../redis/task-id-channel.ts'

/** The channel `<queue prefix>:<name>` on the queue's Redis, which every BullMQ process shares. */
export function queueTaskIdChannel(config: Config, redis: RedisConnections, name: string): TaskIdChannel {
  const url = queueRedisUrl(config)
  return {
    commands: redis.commands(url),
    subscriber: () => redis.subscriber(url),
    channel: `${config.queue.prefix}:${name}`,
  }
}
