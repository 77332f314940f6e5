import { EventEmitter } from 'node:events'
import type { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { createTaskIdSubscription } from '../src/redis/task-id-channel.ts'

describe('createTaskIdSubscription', () => {
  // A subscriber connection whose first SUBSCRIBE fails (Redis away), as ioredis rejects it: the
  // failure a real Redis gives only when it goes down at that moment.
  const flakySubscriber = () => {
    const connection = new EventEmitter() as EventEmitter & { subscribe(channel: string): Promise<number>; calls: number }
    connection.calls = 0
    connection.subscribe = async () => {
      if (connection.calls++ === 0) throw new Error('Connection is closed.')
      return 1
    }
    return connection
  }

  it('tries again after a failed subscribe, and delivers each id once', async () => {
    const connection = flakySubscriber()
    const subscribe = createTaskIdSubscription({
      commands: {} as Redis,
      subscriber: () => connection as unknown as Redis,
      channel: 'mos:cancel',
    })
    const delivered: string[] = []
    const deliver = (taskId: string) => delivered.push(taskId)
    await expect(subscribe(deliver)).rejects.toThrow('Connection is closed.')
    await subscribe(deliver)
    expect(connection.calls).toBe(2)
    connection.emit('message', 'mos:cancel', 'task-1')
    connection.emit('message', 'mos:other', 'task-2')
    expect(delivered).toEqual(['task-1'])
  })
})
