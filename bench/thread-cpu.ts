import { readdirSync, readFileSync } from 'node:fs'

/**
 * Where a batch's CPU went, in milliseconds per task. On a machine whose cores all run engine
 * threads, every millisecond spent elsewhere is taken from an engine thread, so these figures bound
 * what a second thread can add (see `scalingCeiling`).
 */
export interface CpuBudget {
  /** Wall time (not CPU) per task. */
  wall: number
  /** The busiest threads other than the main one, as many as the pool has. */
  engine: number
  /** The process's main thread: HTTP, task records, dispatch (for the pool alone: dispatch only). */
  main: number
  /** Every other thread of the process: V8's garbage-collector and compiler threads, libuv's I/O threads. */
  other: number
  /** The benchmark's own process when it is the client of a measured service; 0 when it is the measured process. */
  client: number
  total: number
}

/** Nanoseconds each thread of a process has spent on a CPU so far (Linux: /proc/<pid>/task/<tid>/schedstat). */
function threadCpuNs(pid: number): Map<number, number> {
  const times = new Map<number, number>()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      times.set(Number(tid), Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]))
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return times
}

/**
 * Starts measuring the CPU of process `pid` (and of this process, as its client, unless it is the
 * one measured); `stop(tasks)` gives the time since then and the budget per task of what ran.
 */
export function sampleCpu(pid: number, engineThreads: number): { stop(tasks: number): { ms: number; cpu: CpuBudget } } {
  const before = threadCpuNs(pid)
  const clientBefore = process.cpuUsage()
  const start = performance.now()
  return {
    stop(tasks) {
      const ms = performance.now() - start
      const after = threadCpuNs(pid)
      const client = pid === process.pid ? 0 : cpuUsageMs(process.cpuUsage(clientBefore))
      const spent = [...after].map(([tid, ns]) => ({ tid, ms: (ns - (before.get(tid) ?? 0)) / 1e6 }))
      const main = spent.find((t) => t.tid === pid)?.ms ?? 0
      const workers = spent.filter((t) => t.tid !== pid).sort((a, b) => b.ms - a.ms)
      const engine = sum(workers.slice(0, engineThreads).map((t) => t.ms))
      const other = sum(workers.slice(engineThreads).map((t) => t.ms))
      const perTask = (value: number) => value / tasks
      return {
        ms,
        cpu: {
          wall: perTask(ms),
          engine: perTask(engine),
          main: perTask(main),
          other: perTask(other),
          client: perTask(client),
          total: perTask(engine + main + other + client),
        },
      }
    },
  }
}

/**
 * The most a batch on `cores` cores can gain over one engine thread, given the CPU each task needs
 * with more threads: those cores can give at most `cores` ms of CPU per ms, so a task costs at
 * least `total / cores` of wall time, against its wall time with one thread.
 */
export function scalingCeiling(oneThread: CpuBudget, moreThreads: CpuBudget, cores: number): number {
  return oneThread.wall / (moreThreads.total / cores)
}

function cpuUsageMs(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1000
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0)
}
