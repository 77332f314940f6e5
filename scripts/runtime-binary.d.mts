/** The path of the `deno` or `bun` binary, or undefined when neither the platform package nor PATH has it. */
export function runtimeBinary(runtime: 'deno' | 'bun'): string | undefined
/** The command line (after the binary) that runs a JavaScript file on a runtime. */
export function runtimeArgs(runtime: 'deno' | 'bun', entry: string): string[]
