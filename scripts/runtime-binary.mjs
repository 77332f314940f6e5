// Where the Deno and Bun binaries installed from the npm registry live. Both come as platform
// packages (`@deno/<platform>`, the `deno` package's optional dependencies; `@oven/bun-linux-x64`,
// the root's optional dependency), so nothing is downloaded at run time; a binary on PATH is the
// fallback where no platform package exists (another OS, an install with --omit=optional).
// Plain JavaScript: `npm run start:api:*` runs it, and so do the tests and the bench.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { arch, platform } from 'node:os'
import { dirname, join } from 'node:path'

const require = createRequire(import.meta.url)

/** The platform package holding each runtime's binary, and the binary's path inside it. */
const PACKAGES = {
  deno: () => [`@deno/${platform()}-${arch()}${platform() === 'linux' ? '-glibc' : ''}`, platform() === 'win32' ? 'deno.exe' : 'deno'],
  bun: () => [`@oven/bun-${platform()}-${arch()}`, platform() === 'win32' ? 'bin/bun.exe' : 'bin/bun'],
}

/**
 * The path of the `deno` or `bun` binary, or undefined when neither the platform package nor PATH has it.
 * @param {'deno' | 'bun'} runtime
 * @returns {string | undefined}
 */
export function runtimeBinary(runtime) {
  const [name, file] = PACKAGES[runtime]()
  try {
    const path = join(dirname(require.resolve(`${name}/package.json`)), file)
    if (existsSync(path)) return path
  } catch {
    // Not installed for this platform: try PATH.
  }
  const found = spawnSync(runtime, ['--version'], { stdio: 'ignore' })
  return found.status === 0 ? runtime : undefined
}

/**
 * The command line that runs a JavaScript file on a runtime. Deno gets every permission (-A): the
 * service reads its .env, the environment and its files, listens, and connects to Redis and S3;
 * narrow them in a deployment that wants to (docs/deployment.md lists what each is for).
 * @param {'deno' | 'bun'} runtime
 * @param {string} entry
 * @returns {string[]} the arguments after the binary
 */
export function runtimeArgs(runtime, entry) {
  return runtime === 'deno' ? ['run', '-A', entry] : [entry]
}
