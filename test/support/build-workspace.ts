import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/**
 * Vitest global setup: tests start the compiled server and CLIs (what production runs), so the
 * workspace is built first. Turbo's cache makes this about a second when nothing changed.
 */
export default function buildWorkspace(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL('../../scripts/ensure-build.mjs', import.meta.url))], { stdio: 'inherit' })
}
