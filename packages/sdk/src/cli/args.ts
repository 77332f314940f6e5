import { parseArgs } from 'node:util'
import { isServiceAddress, serviceAddressProblem } from '../base-url.ts'
import {
  COMPRESS_PRESET_NAMES,
  COMPRESS_TEXTURE_FORMATS,
  type CompressOptions,
  ENGINES,
  convertFieldSpecs,
  MESHOPT_EXTENSIONS,
  MESHOPT_LEVELS,
  MODEL_FORMATS,
  type PresetFields,
  TEXTURE_FORMATS,
} from '../contract/index.ts'

/** The sub-commands that submit tasks. */
export const TASK_COMMANDS = ['compress', 'convert', 'repair', 'diagnose', 'textures', 'ktx2'] as const
export type TaskCommand = (typeof TASK_COMMANDS)[number]

export const CLI_DEFAULTS = {
  baseURL: 'http://localhost:8080',
  engine: 'draco',
  concurrency: 4,
} as const

export const USAGE = `Usage: mos <command> FILE... [options]

Commands:
  compress FILE...   Draco or meshopt compression (several files: batches of the deployment's size)
  convert FILE...    convert to --to FORMAT (${MODEL_FORMATS.join(', ')}; gltf, and obj with materials, come back as .zip)
  repair FILE...     fix normals, duplicate vertices, degenerate faces, empty nodes
  diagnose FILE...   print a diagnosis (no output file)
  textures FILE...   re-encode textures or images to --format (${TEXTURE_FORMATS.join(', ')})
  ktx2 FILE...       encode textures or images to KTX2 (ETC1S, or --uastc)
  tasks list|cancel|delete
                     list, cancel or delete tasks (Mos extension; \`mos tasks --help\`)
  serve              start the Mos server (the @mos/server package), like \`npm start\`

Options:
  --base-url URL     service address (env MOS_BASE_URL, default ${CLI_DEFAULTS.baseURL})
  --api-key KEY      API key (env MOS_API_KEY)
  --out DIR, -o      save results in DIR (default: beside each input)
  --force            replace files that exist where results are saved (default: refuse)
  --json             print one JSON document with every result (no progress display)
  --engine, -e       compress: ${ENGINES.join(' | ')} (default ${CLI_DEFAULTS.engine})
  --level, -l N      compress level (A: 1-10, B: 0-10; default 7)
  --meshopt-level    compress with meshopt: ${MESHOPT_LEVELS.join(' | ')}
  --meshopt-extension
                     compress with meshopt (Mos extension): ${MESHOPT_EXTENSIONS.join(' | ')} (default ext;
                     khr: KHR_meshopt_compression, smaller, for readers that know it)
  --position-bits N, --normal-bits N, --texcoord-bits N, --color-bits N, --generic-bits N
                     Draco quantization (these send one request per file instead of a batch)
  --preset NAME      compress (Mos extension): ${COMPRESS_PRESET_NAMES.join(' | ')}
  --simplify R, --simplify-error E, --texture-max-size PX, --power-of-two, --progressive-jpeg, --palette,
  --merge, --instance
                     compress (Mos extensions, docs/api.md): simplify_ratio, simplify_error, texture_max_size,
                     texture_power_of_two, texture_progressive_jpeg, palette, merge, instance (these send one
                     request per file); convert takes all but --progressive-jpeg, --palette, --instance and
                     --preset
  --texture-format FMT, --texture-quality N, --lossy-normal-maps
                     compress (Mos extensions): textures re-encoded in the same task, ${COMPRESS_TEXTURE_FORMATS.join(' | ')}
                     (texture_format); JPEG/WebP quality 1-100 (texture_quality); normal maps lossy too
  --callback-url URL every task (Mos extension): the URL the service POSTs each task's record to when it ends
  --to, -t FORMAT    convert: target format
  --format, -f FMT   textures: target format
  --quality, -q N    textures / ktx2 quality
  --uastc            ktx2: UASTC instead of ETC1S
  --timeout SEC      give up waiting for a task after SEC seconds
  --request-timeout SEC
                     fail a request that makes no progress for SEC seconds, its upload included
                     (env MOS_REQUEST_TIMEOUT, default 120; 0: never)
  --help, -h         this text
  --version, -V      print the version of mos (its @mos/sdk package)

Exit status: 0 when every file succeeded, 1 when a task or request failed, 2 on a usage error, 130 after Ctrl-C.`

/**
 * The service's address from `--base-url`, else MOS_BASE_URL, else the default; refused as a usage
 * error, under the name it was given by, when it is no http(s) address (see `isServiceAddress`).
 */
export function baseURLOf(flag: string | undefined, env: Record<string, string | undefined>): string {
  // An empty MOS_BASE_URL is one not set, as a shell's `MOS_BASE_URL= mos …` means.
  const given = flag ?? (env.MOS_BASE_URL || undefined)
  if (given === undefined) return CLI_DEFAULTS.baseURL
  if (!isServiceAddress(given))
    throw new UsageError(`${flag === undefined ? 'MOS_BASE_URL' : '--base-url'} ${serviceAddressProblem(given)}`)
  return given
}

/**
 * The SDK's per-attempt time limit in ms from `--request-timeout`, else MOS_REQUEST_TIMEOUT (an empty
 * one is unset), in whole seconds; undefined leaves the client's default. Refused as a usage error
 * under the name it came by.
 */
export function requestTimeoutOf(flag: string | undefined, env: Record<string, string | undefined>): number | undefined {
  const given = flag ?? (env.MOS_REQUEST_TIMEOUT || undefined)
  if (given === undefined) return undefined
  if (!/^\d+$/.test(given))
    throw new UsageError(
      `${flag === undefined ? 'MOS_REQUEST_TIMEOUT' : '--request-timeout'} takes whole seconds (0: never), not "${given}"`,
    )
  return Number(given) * 1000
}

/** A usage error: printed with a hint, exit status 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

/** Parsed command line. */
export interface CliArgs {
  command: TaskCommand | 'serve' | 'help' | 'version'
  files: string[]
  baseURL: string
  apiKey: string | undefined
  outDir: string | undefined
  /** Replace a file that exists where a result is saved (refused by default). */
  force: boolean
  json: boolean
  engine: (typeof ENGINES)[number]
  level?: number
  meshoptLevel?: (typeof MESHOPT_LEVELS)[number]
  bits: Partial<Record<'position' | 'normal' | 'texcoord' | 'color' | 'generic', number>>
  /** Compress's Mos extension fields, under their form names; absent ones are not sent. */
  extensions: CompressExtensionArgs
  /** Mos extension: where the service POSTs each task's record when it ends. */
  callbackUrl?: string
  to?: (typeof MODEL_FORMATS)[number]
  format?: (typeof TEXTURE_FORMATS)[number]
  quality?: number
  uastc: boolean
  timeoutMs?: number
  /** The SDK client's `timeout`: longest time a request may make no progress, in ms (undefined: its default). */
  requestTimeoutMs?: number
  /** Arguments after `serve`, passed to the server untouched. */
  rest: string[]
}

/**
 * Compress's Mos extension fields the command line sets (docs/api.md, "Mos extensions"), typed by the
 * contract: those a preset may set, the preset itself, the meshopt extension and the texture format's.
 */
export type CompressExtensionArgs = PresetFields &
  Pick<CompressOptions, 'preset' | 'meshopt_extension' | 'texture_format' | 'texture_quality' | 'lossy_normal_maps'>

function decimal(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!/^(\d+\.?\d*|\.\d+)$/.test(value)) throw new UsageError(`--${name} takes a number, not "${value}"`)
  return Number(value)
}

/** The set entries of `fields` only: an absent flag is not sent, so the server's default holds. */
function present<T extends object>(fields: T): T {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as T
}

function integer(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!/^-?\d+$/.test(value)) throw new UsageError(`--${name} takes an integer, not "${value}"`)
  return Number(value)
}

function oneOf<T extends string>(name: string, value: string | undefined, values: readonly T[]): T | undefined {
  if (value === undefined) return undefined
  const lower = value.toLowerCase()
  if (!values.includes(lower as T)) throw new UsageError(`--${name} must be one of ${values.join(', ')}, not "${value}"`)
  return lower as T
}

/** Refusal of a command line with no command: a usage error, as for other CLIs (the usage goes with it). */
export const NO_COMMAND = 'no command given'

/** The arguments of a command that takes no options. */
const NO_OPTIONS = {
  files: [],
  baseURL: '',
  apiKey: undefined,
  outDir: undefined,
  force: false,
  json: false,
  engine: 'draco',
  bits: {},
  extensions: {},
  uastc: false,
  rest: [],
} as const satisfies Omit<CliArgs, 'command'>

/** Every option a task command reads. */
const TASK_OPTIONS = {
  'base-url': { type: 'string' },
  'api-key': { type: 'string' },
  out: { type: 'string', short: 'o' },
  json: { type: 'boolean' },
  force: { type: 'boolean' },
  engine: { type: 'string', short: 'e' },
  level: { type: 'string', short: 'l' },
  'meshopt-level': { type: 'string' },
  'meshopt-extension': { type: 'string' },
  'position-bits': { type: 'string' },
  'normal-bits': { type: 'string' },
  'texcoord-bits': { type: 'string' },
  'color-bits': { type: 'string' },
  'generic-bits': { type: 'string' },
  to: { type: 'string', short: 't' },
  format: { type: 'string', short: 'f' },
  quality: { type: 'string', short: 'q' },
  uastc: { type: 'boolean' },
  preset: { type: 'string' },
  simplify: { type: 'string' },
  'simplify-error': { type: 'string' },
  'texture-max-size': { type: 'string' },
  'power-of-two': { type: 'boolean' },
  'progressive-jpeg': { type: 'boolean' },
  'texture-format': { type: 'string' },
  'texture-quality': { type: 'string' },
  'lossy-normal-maps': { type: 'boolean' },
  palette: { type: 'boolean' },
  merge: { type: 'boolean' },
  instance: { type: 'boolean' },
  'callback-url': { type: 'string' },
  timeout: { type: 'string' },
  'request-timeout': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

/** The options and files after the command; parseArgs's own errors become usage errors. */
function readOptions(tail: string[]) {
  try {
    return parseArgs({ args: tail, allowPositionals: true, options: TASK_OPTIONS })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

type OptionValues = ReturnType<typeof readOptions>['values']

/** The per-attribute quantization bits (--position-bits and the like). */
function bitsOf(values: OptionValues): CliArgs['bits'] {
  return {
    position: integer('position-bits', values['position-bits']),
    normal: integer('normal-bits', values['normal-bits']),
    texcoord: integer('texcoord-bits', values['texcoord-bits']),
    color: integer('color-bits', values['color-bits']),
    generic: integer('generic-bits', values['generic-bits']),
  }
}

/** The command-line flag of each Mos compress extension field. */
const EXTENSION_FLAGS = {
  preset: 'preset',
  meshopt_extension: 'meshopt-extension',
  simplify_ratio: 'simplify',
  simplify_error: 'simplify-error',
  texture_max_size: 'texture-max-size',
  texture_power_of_two: 'power-of-two',
  texture_progressive_jpeg: 'progressive-jpeg',
  texture_format: 'texture-format',
  texture_quality: 'texture-quality',
  lossy_normal_maps: 'lossy-normal-maps',
  palette: 'palette',
  merge: 'merge',
  instance: 'instance',
} as const satisfies Record<keyof CompressExtensionArgs, string>

/** The Mos compress extensions given on the command line, and only those. */
function extensionsOf(values: OptionValues): CliArgs['extensions'] {
  const f = EXTENSION_FLAGS
  return present({
    preset: oneOf(f.preset, values[f.preset], COMPRESS_PRESET_NAMES),
    meshopt_extension: oneOf(f.meshopt_extension, values[f.meshopt_extension], MESHOPT_EXTENSIONS),
    simplify_ratio: decimal(f.simplify_ratio, values[f.simplify_ratio]),
    simplify_error: decimal(f.simplify_error, values[f.simplify_error]),
    texture_max_size: integer(f.texture_max_size, values[f.texture_max_size]),
    texture_power_of_two: values[f.texture_power_of_two],
    texture_progressive_jpeg: values[f.texture_progressive_jpeg],
    texture_format: oneOf(f.texture_format, values[f.texture_format], COMPRESS_TEXTURE_FORMATS),
    texture_quality: integer(f.texture_quality, values[f.texture_quality]),
    lossy_normal_maps: values[f.lossy_normal_maps],
    palette: values[f.palette],
    merge: values[f.merge],
    instance: values[f.instance],
  })
}

/**
 * Refuses the compress extensions POST /convert does not take, naming those it does: both lists
 * from the contract's field specs (convertFieldSpecs), so the command line follows the contract.
 */
function checkConvertExtensions(extensions: CliArgs['extensions']): void {
  const takes = new Set(convertFieldSpecs().flatMap((spec) => (spec.extension ? [spec.name] : [])))
  const fields = Object.keys(EXTENSION_FLAGS) as (keyof CompressExtensionArgs)[]
  const refused = fields.filter((field) => extensions[field] !== undefined && !takes.has(field))
  if (refused.length === 0) return
  const flags = (list: (keyof CompressExtensionArgs)[]) => list.map((field) => `--${EXTENSION_FLAGS[field]}`).join(', ')
  throw new UsageError(
    `${flags(refused)} ${refused.length === 1 ? 'is a compress option' : 'are compress options'} (convert takes ${flags(fields.filter((field) => takes.has(field)))})`,
  )
}

/** A task command's arguments: the options validated, the environment's defaults filled in. */
function toCliArgs(command: TaskCommand, values: OptionValues, files: string[], env: Record<string, string | undefined>): CliArgs {
  return {
    command,
    files,
    baseURL: baseURLOf(values['base-url'], env),
    apiKey: values['api-key'] ?? env.MOS_API_KEY,
    outDir: values.out,
    force: values.force ?? false,
    json: values.json ?? false,
    engine: oneOf('engine', values.engine, ENGINES) ?? CLI_DEFAULTS.engine,
    level: integer('level', values.level),
    meshoptLevel: oneOf('meshopt-level', values['meshopt-level'], MESHOPT_LEVELS),
    bits: bitsOf(values),
    extensions: extensionsOf(values),
    callbackUrl: values['callback-url'],
    to: oneOf('to', values.to, MODEL_FORMATS),
    format: oneOf('format', values.format, TEXTURE_FORMATS),
    quality: integer('quality', values.quality),
    uastc: values.uastc ?? false,
    timeoutMs: values.timeout === undefined ? undefined : (integer('timeout', values.timeout) ?? 0) * 1000,
    requestTimeoutMs: requestTimeoutOf(values['request-timeout'], env),
    rest: [],
  }
}

/**
 * Parses argv (without node and the script) with the environment's defaults.
 * @example parseCliArgs(['compress', 'a.glb', '--engine', 'meshopt'], process.env)
 */
export function parseCliArgs(argv: string[], env: Record<string, string | undefined>): CliArgs {
  const [command, ...tail] = argv
  if (command === undefined) throw new UsageError(NO_COMMAND)
  // `serve` passes what follows to the server; help and version print a text: none reads options.
  if (command === 'serve') return { ...NO_OPTIONS, command, rest: tail }
  if (command === 'help' || command === '--help' || command === '-h') return { ...NO_OPTIONS, command: 'help' }
  if (command === '--version' || command === '-V') return { ...NO_OPTIONS, command: 'version' }
  if (!(TASK_COMMANDS as readonly string[]).includes(command)) throw new UsageError(`unknown command "${command}"`)
  const { values, positionals } = readOptions(tail)
  if (values.help) return { ...NO_OPTIONS, command: 'help' }
  if (positionals.length === 0) throw new UsageError(`${command} needs at least one FILE`)
  const args = toCliArgs(command as TaskCommand, values, positionals, env)
  if (command === 'convert' && !args.to) throw new UsageError('convert needs --to FORMAT')
  if (command === 'convert') checkConvertExtensions(args.extensions)
  if (command === 'textures' && !args.format) throw new UsageError('textures needs --format FORMAT')
  return args
}
