import { availableParallelism } from 'node:os'

/**
 * Every setting, its environment variable and its default, in one place. A variable is named
 * `SERVICE__<SECTION>__<KEY>` (`__` = next level, `_` = next word), e.g.
 * `SERVICE__SERVER__RATE_LIMIT_PER_MINUTE` → `server.rateLimitPerMinute`.
 */
export type SettingSpec =
  | { kind: 'integer'; default: number; min: number; max: number; doc: string }
  | { kind: 'string'; default: string; doc: string; secret?: boolean }
  | { kind: 'enum'; default: string; values: readonly string[]; doc: string }
  | { kind: 'list'; default: readonly string[]; doc: string; secret?: boolean }
  | { kind: 'boolean'; default: boolean; doc: string }

export const CONFIG_SCHEMA = {
  server: {
    port: { kind: 'integer', default: 8080, min: 0, max: 65535, doc: 'TCP port to listen on (0 picks a free port).' },
    host: { kind: 'string', default: '0.0.0.0', doc: 'Interface to listen on.' },
    variant: { kind: 'enum', default: 'A', values: ['A', 'B'], doc: 'Which variant of the HTTP interface to serve.' },
    rateLimitPerMinute: {
      kind: 'integer', default: 60, min: 1, max: 1_000_000,
      doc: 'Variant A: requests per minute per API key on keyed endpoints.',
    },
  },
  auth: {
    apiKeys: {
      kind: 'list', default: [], secret: true,
      doc: 'Comma-separated API keys. When empty, `npm start` creates a development key, keeps it in the data folder and prints it.',
    },
    adminKeys: {
      kind: 'list', default: [], secret: true,
      doc: 'Comma-separated admin keys: valid wherever an API key is, and a licence verified with one becomes the active licence.',
    },
  },
  storage: {
    driver: { kind: 'enum', default: 'fs', values: ['fs', 'memory'], doc: 'Where task records live.' },
    fs: {
      base: { kind: 'string', default: './data', doc: 'Folder of the fs driver (records and files).' },
    },
  },
  engines: {
    threads: {
      kind: 'integer', default: availableParallelism(), min: 1, max: 256,
      doc: 'Worker threads running engine jobs (default: the number of cores).',
    },
    maxHeapMb: { kind: 'integer', default: 4096, min: 64, max: 65536, doc: 'Heap limit of each worker thread, in MB.' },
    maxAllocationMb: {
      kind: 'integer', default: 1024, min: 16, max: 65536,
      doc: 'Most memory a reader may allocate for what an input declares (accessor counts, PLY/STL headers, zip contents), in MB; inputs declaring more fail before allocating.',
    },
  },
  limits: {
    maxFileSizeMb: {
      kind: 'integer', default: 500, min: 1, max: 1_000_000,
      doc: 'Largest accepted upload, in MB (the licence tier may lower it).',
    },
  },
  license: {
    key: { kind: 'string', default: '', secret: true, doc: 'Licence key to run with (see docs/licensing.md). Empty: the trial, or the key last activated through the API.' },
    keyFile: { kind: 'string', default: '', doc: 'File holding the licence key (used when SERVICE__LICENSE__KEY is empty).' },
    publicKey: {
      kind: 'string', default: '',
      doc: "Vendor public key that verifies licence keys: PEM or base64 SPKI DER, or a path to a PEM file. Empty: Mos's own vendor key.",
    },
    trialMaxFiles: {
      kind: 'integer', default: 100, min: 0, max: 100,
      doc: 'Files the unlicensed trial may process (counted across restarts). Can only be lowered.',
    },
  },
  rateLimit: {
    redisUrl: {
      kind: 'string', default: '', secret: true,
      doc: 'Redis URL for the variant A rate-limit counters, shared by every process (e.g. redis://127.0.0.1:6379). Empty: counted in this process.',
    },
    prefix: { kind: 'string', default: 'mos:ratelimit', doc: 'Key prefix of the rate-limit counters in Redis.' },
    windowSeconds: {
      kind: 'integer', default: 60, min: 1, max: 3600,
      doc: 'Length of the rate-limit window. The contract says per minute: change it only for tests.',
    },
  },
  metrics: {
    requireKey: { kind: 'boolean', default: true, doc: 'Whether GET /api/v1/metrics needs X-API-Key (false: open to any scraper that reaches the port).' },
  },
} as const satisfies ConfigSchema

interface ConfigSchema {
  [key: string]: SettingSpec | ConfigSchema
}

type ValueOf<S> = S extends { kind: 'integer' }
  ? number
  : S extends { kind: 'boolean' }
    ? boolean
    : S extends { kind: 'list' }
      ? string[]
      : S extends { kind: 'enum'; values: readonly (infer V)[] }
        ? V
        : S extends { kind: 'string' }
          ? string
          : { -readonly [K in keyof S]: ValueOf<S[K]> }

/** The loaded configuration: the schema's shape with values. */
export type Config = ValueOf<typeof CONFIG_SCHEMA>
