import { EventEmitter } from 'node:events'
import { createTaskIdSubscription, type TaskIdChannel } from '../redis/task-id-channel.ts'
import type { TaskStore } from '../storage/task-store.ts'

/**
 * "A task's record changed", told to whoever waits on it (long polls, event streams, webhooks): in
 * one process through an emitter; across processes through Redis pub/sub, since with BullMQ the
 * record is written by a worker process and read by an API process. The message is only the task
 * id: a listener reads the record itself, so a lost or doubled message never shows a stale state.
 */
export interface TaskEvents {
  /** Tells the task's listeners (in every process) that its record changed. Best effort: never throws. */
  changed(taskId: string): void
  /**
   * Calls `listener` on every change of the task's record from now on: resolves once listening, so
   * a change written after it resolves is never missed. Resolves with the function that stops it.
   */
  listen(taskId: string, listener: () => void): Promise<() => void>
  /** As `listen`, for a change of any task's record (the console's event stream): `listener` gets the task id. */
  listenAll(listener: (taskId: string) => void): Promise<() => void>
  /** Calls `listener` when the service stops (waiters answer with what they have); at once if it has. */
  onClose(listener: () => void): () => void
  close(): Promise<void>
}

/** The in-process events: right where one process writes every record (the local queue). */
export function createLocalTaskEvents(): TaskEvents {
  return createTaskEventsOver({ publish: (taskId, emit) => emit(taskId) })
}

/** Events over Redis pub/sub (`<prefix>:task-events`), for a deployment whose processes share records through Redis. */
export function createRedisTaskEvents(options: TaskIdChannel): TaskEvents {
  return createTaskEventsOver({
    publish: (taskId) => {
      options.commands.publish(options.channel, taskId).catch(() => undefined)
    },
    ready: createTaskIdSubscription(options),
  })
}

interface Transport {
  /** Sends a change on its way; `emit` tells this process's listeners. */
  publish(taskId: string, emit: (taskId: string) => void): void
  /** Resolves once changes from other processes arrive (first listener only). */
  ready?(emit: (taskId: string) => void): Promise<unknown>
}

/** The emitter's event for a change of any task (a task id is never this). */
const ANY_TASK = 'any-task'

function createTaskEventsOver(transport: Transport): TaskEvents {
  const emitter = new EventEmitter()
  // Every waiting request adds a listener; the default limit of 10 would warn under ordinary load.
  emitter.setMaxListeners(0)
  const emit = (taskId: string) => {
    emitter.emit(`task:${taskId}`)
    emitter.emit(ANY_TASK, taskId)
  }
  let closed = false
  const on = async (name: string, listener: (taskId: string) => void) => {
    emitter.on(name, listener)
    try {
      await transport.ready?.(emit)
    } catch (error) {
      emitter.off(name, listener)
      throw error
    }
    return () => void emitter.off(name, listener)
  }
  return {
    changed: (taskId) => transport.publish(taskId, emit),
    listen: (taskId, listener) => on(`task:${taskId}`, listener),
    listenAll: (listener) => on(ANY_TASK, listener),
    onClose(listener) {
      if (closed) {
        queueMicrotask(listener)
        return () => undefined
      }
      emitter.on('close', listener)
      return () => emitter.off('close', listener)
    },
    async close() {
      closed = true
      emitter.emit('close')
      emitter.removeAllListeners()
    },
  }
}

/** A task store that tells `events` of every record it writes or removes, once the write has landed. */
export function withTaskEvents(inner: TaskStore, events: TaskEvents): TaskStore {
  return {
    get: (id) => inner.get(id),
    async put(task) {
      await inner.put(task)
      events.changed(task.task_id)
    },
    async remove(id) {
      await inner.remove(id)
      events.changed(id)
    },
    list: () => inner.list(),
  }
}
