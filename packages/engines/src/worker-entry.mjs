// Piscina's thread entry. Node 20 does not carry loader hooks into worker threads, so the
// TypeScript worker is loaded through tsx's scoped import, once per thread. Each job of
// jobs.ts JOB_NAMES is re-exported under its name for `pool.run(job, { name })`.
import { tsImport } from 'tsx/esm/api'

const worker = await tsImport('./worker.ts', import.meta.url)

export const { compress, convert, repair, diagnose, texture_optimize, texture_ktx2 } = worker
