import type { describeEngines } from '@mos/engines'

/**
 * What a Worker bundle knows from its build, read on Node by `scripts/build-worker.ts` from the
 * engines' registry and the server's package.json: a Worker has no file system to read them from,
 * and `@mos/engines` (worker threads, native codecs) is not bundled into it. The Node workers that
 * run the tasks answer from the same registry, so the submit routes accept what they can run.
 */
export interface WorkerBuildFacts {
  /** The server package's version (variant B health). */
  version: string
  /** Per operation (task type): the input formats it reads and its option keys. */
  operations: Record<string, { formats: string[]; options: string[] }>
  /** The codecs' install facts (variant B capabilities), as on the machine that built the bundle. */
  engines: ReturnType<typeof describeEngines>
}

/** Replaced by the bundler with the facts above (esbuild `define`). */
declare const MOS_WORKER_BUILD: WorkerBuildFacts

/** The build's facts; only a Worker bundle defines them. */
export const WORKER_BUILD: WorkerBuildFacts = MOS_WORKER_BUILD
