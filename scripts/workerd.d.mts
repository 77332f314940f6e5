import type { ChildProcess, StdioOptions } from 'node:child_process'

/** The workerd binary installed from the npm registry and the compatibility date of its release, or undefined. */
export function workerdRuntime(): { binary: string; compatibilityDate: string } | undefined
/** workerd's configuration (Cap'n Proto text) for the Worker bundle. */
export function workerdConfig(options: {
  env: Record<string, string | undefined>
  host: string
  port: number
  compatibilityDate: string
  bundle: string
}): string
/** Starts the API role on workerd and resolves once it answers. */
export function startWorkerd(
  env: Record<string, string | undefined>,
  options?: { stdio?: StdioOptions },
): Promise<{ child: ChildProcess; url: string; host: string; port: number; compatibilityDate: string }>
/** `.env` of `dir` under `env` (a variable set in `env` wins). */
export function withDotEnv(env: Record<string, string | undefined>, dir?: string): Record<string, string | undefined>
