// Piscina's thread entry. Node 20 does not carry loader hooks into worker threads, so the
// TypeScript worker is loaded through tsx's scoped import, once per thread. Its one job,
// `runEngineJob`, dispatches every operation from the registry (operations/index.ts).
import { tsImport } from 'tsx/esm/api'

const worker = await tsImport('./worker.ts', import.meta.url)

export const { runEngineJob } = worker
