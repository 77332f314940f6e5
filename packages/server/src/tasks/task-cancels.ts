import { createTaskIdSubscription, type TaskIdChannel } from '../redis/task-id-channel.ts'

/**
 * "Stop this task": from the process that took the cancel request to the one running the task. In
 * one process (the local queue) the runner's own signal is aborted; across processes the task id
 * travels over Redis pub/sub, since with BullMQ any worker may be running it. The record's state is
 * written by the cancel itself, so a message lost while no one runs the task loses nothing.
 */
export interface TaskCancels {
  /** Aborts the task's run wherever it runs. Best effort past this process: never throws. */
  cancel(taskId: string): Promise<void>
  /**
   * A signal aborted when the task is cancelled from any process, for its run: resolves once a
   * cancel sent after it resolves cannot be missed. `release` when the run is over.
   */
  watch(taskId: string): Promise<{ signal: AbortSignal; release(): void }>
}

/** Cancels within this process: where one process runs every task (the local queue). */
export function createLocalTaskCancels(): TaskCancels {
  return createTaskCancelsOver({ publish: async (taskId, abort) => abort(taskId) })
}

/** Cancels over Redis pub/sub (`<prefix>:task-cancels`), for processes sharing one BullMQ queue. */
export function createRedisTaskCancels(options: TaskIdChannel): TaskCancels {
  return createTaskCancelsOver({
    publish: async (taskId) => {
      await options.commands.publish(options.channel, taskId).catch(() => undefined)
    },
    ready: createTaskIdSubscription(options),
  })
}

interface Transport {
  /** Sends the cancel on its way; `abort` aborts this process's run of it. */
  publish(taskId: string, abort: (taskId: string) => void): Promise<void>
  /** Resolves once cancels from other processes arrive. */
  ready?(abort: (taskId: string) => void): Promise<unknown>
}

function createTaskCancelsOver(transport: Transport): TaskCancels {
  const running = new Map<string, AbortController>()
  const abort = (taskId: string) => running.get(taskId)?.abort()
  return {
    cancel: (taskId) => transport.publish(taskId, abort),
    async watch(taskId) {
      const controller = new AbortController()
      running.set(taskId, controller)
      const release = () => {
        if (running.get(taskId) === controller) running.delete(taskId)
      }
      try {
        await transport.ready?.(abort)
      } catch (error) {
        release()
        throw error
      }
      return { signal: controller.signal, release }
    },
  }
}
