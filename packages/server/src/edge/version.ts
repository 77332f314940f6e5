import { WORKER_BUILD } from './build-facts.ts'

/** `src/version.ts` in a Worker bundle: the version read from package.json when the bundle was built. */
export const SERVICE_VERSION: string = WORKER_BUILD.version
