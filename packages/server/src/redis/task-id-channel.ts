import type { Redis } from 'ioredis'

/**
 * A Redis pub/sub channel whose messages are task ids, shared by every process of a deployment
 * (task cancels, task record changes): the id is all that travels, the receiver reads the rest.
 */
export interface TaskIdChannel {
  /** The process's command connection (PUBLISH). */
  commands: Redis
  /** Opens the subscriber connection on first use (a subscribed connection takes no other command). */
  subscriber: () => Redis
  /** Channel name, per deployment (`<prefix>:<name>`). */
  channel: string
}

/**
 * Subscribes to the channel on the first call and hands each task id that arrives to `deliver`
 * (the first call's); later calls get the same subscription. A failed subscribe is forgotten, so
 * the next call tries again rather than failing for good; the message listener is attached once, so
 * a retried subscription does not deliver each id twice.
 */
export function createTaskIdSubscription(options: TaskIdChannel): (deliver: (taskId: string) => void) => Promise<unknown> {
  let subscribed: Promise<unknown> | undefined
  let listening = false
  return (deliver) => {
    subscribed ??= (() => {
      const subscriber = options.subscriber()
      if (!listening) {
        listening = true
        subscriber.on('message', (channel: string, taskId: string) => {
          if (channel === options.channel) deliver(taskId)
        })
      }
      return subscriber.subscribe(options.channel).catch((error: unknown) => {
        subscribed = undefined
        throw error
      })
    })()
    return subscribed
  }
}
