import { availableParallelism } from 'node:os'
import type { z } from 'zod'
import * as setting from './setting.ts'

/**
 * Every setting, its environment variable and its default, in one place. A variable is named
 * `SERVICE__<SECTION>__<KEY>` (`__` = next level, `_` = next word), e.g.
 * `SERVICE__SERVER__RATE_LIMIT_PER_MINUTE` → `server.rateLimitPerMinute`.
 */
export const CONFIG_SCHEMA = {
  server: {
    port: setting.integer({ default: 8080, min: 0, max: 65535, doc: 'TCP port to listen on (0 picks a free port).' }),
    host: setting.string({ default: '0.0.0.0', doc: 'Interface to listen on.' }),
    variant: setting.choice({ default: 'A', values: ['A', 'B'], doc: 'Which variant of the HTTP interface to serve.' }),
    rateLimitPerMinute: setting.integer({
      default: 60,
      min: 1,
      max: 1_000_000,
      doc: 'Variant A: requests per minute per API key on keyed endpoints.',
    }),
    role: setting.choice({
      default: 'all',
      values: ['all', 'api', 'worker'],
      doc: 'What this process does: `all` (HTTP API and worker), `api` (HTTP API, only queues tasks), `worker` (runs queued tasks; serves only health on its port). `api` and `worker` need SERVICE__QUEUE__DRIVER=bullmq. On Deno, Bun and workerd (`npm run start:api:deno`, `start:api:bun`, `start:api:workerd`) only `api` (the default on workerd).',
    }),
    keepAliveTimeoutMs: setting.integer({
      default: 65_000,
      min: 1_000,
      max: 3_600_000,
      doc: 'How long an idle keep-alive connection stays open, in ms. Keep it above the idle time-out of the load balancer in front (60 s on AWS ALB and nginx), so the balancer closes idle connections, never the service under a request in flight. On Bun, its idle time-out (at most 255 s); not used on Deno.',
    }),
    headersTimeoutMs: setting.integer({
      default: 20_000,
      min: 1_000,
      max: 3_600_000,
      doc: "How long a client has to send a request's line and headers, in ms, from their first byte: past it the request gets 408 with the contract's error and its connection closes (slow-header clients no longer hold a connection for minutes). A new connection that has sent no byte by then is closed without an answer, as it asked nothing. An idle keep-alive connection is bounded by SERVICE__SERVER__KEEP_ALIVE_TIMEOUT_MS instead. Node only (Deno and Bun keep their own bounds).",
    }),
    shutdownGraceMs: setting.integer({
      default: 30_000,
      min: 0,
      max: 3_600_000,
      doc: 'On SIGTERM or SIGINT, how long requests in flight (an upload streaming in, a download) get to finish, in ms: each gets its answer with `Connection: close`, idle keep-alive connections close at once, no new connection is accepted and GET /readyz answers 503 `stopping` on the connections still open. After it, on Node a request with no answer under way (still being sent, or whole with its handler still at work before it acted) gets 503 with `Retry-After` and its connection closes, and nothing of it is done; a submit already recording its task gets up to 5 s more to answer itself; a response under way is cut. Running tasks are waited for after this, as long as they take. The same on Deno and Bun, except that Deno keeps taking connections while an upload begun before the signal is still arriving (a new request with a body is answered 503 with Retry-After): docs/deployment.md.',
    }),
    bodyIdleTimeoutMs: setting.integer({
      default: 60_000,
      min: 1_000,
      max: 3_600_000,
      doc: "A request body (an upload, a JSON body) that sends no byte for this long, in ms, is refused with 408 and its connection closed; what it had uploaded is removed. A body that keeps flowing, however slowly, is never cut by a clock (as nginx's `client_body_timeout`). Time the service spends writing to its store does not count.",
    }),
    corsOrigins: setting.list({
      default: [],
      doc: 'Comma-separated origins allowed to call the API from a browser (CORS), e.g. `https://app.example.com`; `*` allows any origin. Empty: no CORS headers, preflights are refused.',
    }),
    authFailuresPerMinute: setting.integer({
      default: 30,
      min: 0,
      max: 1_000_000,
      doc: 'Requests with a missing or wrong API key accepted per client address per minute; past it the address gets 429 with Retry-After until the minute is over. 0 turns the throttle off.',
    }),
  },
  auth: {
    apiKeys: setting.list({
      default: [],
      secret: true,
      doc: 'Comma-separated API keys. When empty, `npm start` creates a development key, keeps it in the data folder and prints it.',
    }),
    adminKeys: setting.list({
      default: [],
      secret: true,
      doc: 'Comma-separated admin keys: valid wherever an API key is, and a licence verified with one becomes the active licence.',
    }),
  },
  storage: {
    driver: setting.choice({
      default: 'fs',
      values: ['fs', 'redis', 's3', 'memory'],
      doc: 'Where task records live: `fs` (a folder), `redis`, `s3`, or `memory` (this process only; for tests).',
    }),
    filesDriver: setting.choice({
      default: 'auto',
      values: ['auto', 'fs', 's3', 'memory'],
      doc: 'Where uploads and results live: `fs` or `s3`; `auto`: `s3` when SERVICE__STORAGE__DRIVER is s3, `memory` when it is memory, else `fs`.',
    }),
    orphanUploadMinutes: setting.number({
      default: 60,
      min: 0.01,
      max: 100_000,
      doc: 'An uploaded file with no task record that is older than this (left by a process killed mid-request) is removed by the sweep (fractions allowed). Keep it above the longest upload.',
    }),
    fs: {
      base: setting.string({ default: './data', doc: 'Folder of the fs driver (records and files).' }),
    },
    redis: {
      url: setting.string({
        default: 'redis://127.0.0.1:6379',
        secret: true,
        doc: 'Redis of the redis records driver (redis://[user:password@]host:port[/db]).',
      }),
      prefix: setting.string({
        default: 'mos',
        doc: 'Key prefix in Redis for records and locks (several deployments can share one Redis).',
      }),
    },
    s3: {
      endpoint: setting.string({
        default: '',
        doc: 'S3-compatible endpoint URL (e.g. http://minio:9000); empty means AWS S3 of the region.',
      }),
      bucket: setting.string({ default: 'mos', doc: 'Bucket (must exist). Records go under `records/`, files under `files/`.' }),
      region: setting.string({ default: 'us-east-1', doc: 'Region of the bucket.' }),
      accessKeyId: setting.string({
        default: '',
        secret: true,
        doc: 'Access key id (empty: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN of the environment).',
      }),
      secretAccessKey: setting.string({ default: '', secret: true, doc: 'Secret access key.' }),
      sessionToken: setting.string({
        default: '',
        secret: true,
        doc: 'Session token of temporary credentials (empty: AWS_SESSION_TOKEN when the keys come from the environment).',
      }),
      prefix: setting.string({ default: '', doc: 'Folder inside the bucket, e.g. `prod` (several deployments can share one bucket).' }),
    },
  },
  queue: {
    driver: setting.choice({
      default: 'local',
      values: ['local', 'bullmq'],
      doc: '`local`: tasks run in this process. `bullmq`: tasks go through BullMQ on Redis, and every worker process shares them.',
    }),
    redis: {
      url: setting.string({ default: '', secret: true, doc: 'Redis of the bullmq queue (empty: SERVICE__STORAGE__REDIS__URL).' }),
    },
    prefix: setting.string({ default: 'mos', doc: 'BullMQ key prefix in Redis.' }),
    lockSeconds: setting.integer({
      default: 30,
      min: 2,
      max: 3600,
      doc: 'BullMQ job lock: a worker renews it every half of this while the task runs; when a worker dies, its task is given to another worker once the lock has expired and a stalled check has run.',
    }),
    stalledCheckSeconds: setting.integer({
      default: 15,
      min: 1,
      max: 3600,
      doc: "How often each worker looks for tasks whose worker died (BullMQ stalled check). A dead worker's task restarts within about lockSeconds + stalledCheckSeconds.",
    }),
  },
  tasks: {
    retentionHours: setting.number({
      default: 24,
      min: 0.0001,
      max: 100_000,
      doc: 'Records and files of completed or failed tasks are removed this long after they ended (fractions allowed: 0.5 = 30 minutes). Ended tasks show the time as `expires_at`.',
    }),
    timeoutSeconds: setting.integer({
      default: 900,
      min: 1,
      max: 1_000_000,
      doc: 'A task running longer fails with a `timeout: ...` error and its engine thread is stopped and replaced. The last bound of every task, past the work budget (SERVICE__ENGINES__BUDGET_*).',
    }),
    maxAttempts: setting.integer({
      default: 3,
      min: 1,
      max: 100,
      doc: 'How often a task is started before it is failed: a task whose worker died that often (crash, out of memory) fails instead of taking down every worker in turn.',
    }),
  },
  engines: {
    threads: setting.integer({
      default: availableParallelism(),
      min: 1,
      max: 256,
      doc: 'Worker threads running engine jobs (default: the number of cores).',
    }),
    maxHeapMb: setting.integer({ default: 4096, min: 64, max: 65536, doc: 'Heap limit of each worker thread, in MB.' }),
    prestart: setting.boolean({
      default: true,
      doc: 'Start every engine thread at boot, so the first tasks do not wait for a thread to load its codecs.',
    }),
    maxAllocationMb: setting.integer({
      default: 1024,
      min: 16,
      max: 65536,
      doc: 'Most memory a reader may allocate for what an input declares (accessor counts, PLY/STL headers, zip contents), in MB; inputs declaring more fail before allocating.',
    }),
    budgetBaseSeconds: setting.number({
      default: 60,
      min: 0.1,
      max: 1_000_000,
      doc: 'Work budget of one engine job: seconds it may hold its thread whatever the input size. Past its budget (this plus BUDGET_SECONDS_PER_MB per MB of input) a job is stopped and its task fails with `the input needed more work than its budget allows ...`.',
    }),
    budgetSecondsPerMb: setting.number({
      default: 10,
      min: 0,
      max: 1_000_000,
      doc: 'Work budget seconds added per MB of input (see BUDGET_BASE_SECONDS). Raise it for texture_ktx2 on well-compressed 4K textures (about 27 s each).',
    }),
    recycleAfterJobs: setting.integer({
      default: 100,
      min: 0,
      max: 1_000_000,
      doc: 'An engine thread is replaced by a fresh one after this many jobs (0: never). Codec WASM memories and the V8 heap grow to the largest input a thread has seen and never shrink; replacing the thread returns that memory.',
    }),
    recycleAboveMb: setting.integer({
      default: 512,
      min: 0,
      max: 65536,
      doc: 'An engine thread whose own memory (V8 heap + external and WASM memory) is above this after a job is replaced by a fresh one (0: never). See docs/deployment.md for the expected memory per thread.',
    }),
    idleRecycleSeconds: setting.integer({
      default: 60,
      min: 0,
      max: 86_400,
      doc: 'When no job has run for this long, engine threads that have run jobs are replaced by fresh ones (prestart) or stopped, so an idle service returns to its start-up memory (0: never).',
    }),
  },
  limits: {
    maxFileSizeMb: setting.integer({
      default: 500,
      min: 1,
      max: 1_000_000,
      doc: 'Largest accepted upload, in MB (the licence tier may lower it).',
    }),
    maxBatchSizeMb: setting.integer({
      default: 2048,
      min: 1,
      max: 1_000_000,
      doc: 'Largest batch request (all its files together), in MB; each file still obeys the single-upload limit.',
    }),
  },
  license: {
    key: setting.string({
      default: '',
      secret: true,
      doc: 'Licence key to run with (see docs/licensing.md). Empty: the trial, or the key last activated through the API.',
    }),
    keyFile: setting.string({ default: '', doc: 'File holding the licence key (used when SERVICE__LICENSE__KEY is empty).' }),
    publicKey: setting.string({
      default: '',
      doc: "Vendor public key that verifies licence keys: PEM or base64 SPKI DER, or a path to a PEM file. Empty: Mos's own vendor key.",
    }),
    trialMaxFiles: setting.integer({
      default: 100,
      min: 0,
      max: 100,
      doc: 'Files the unlicensed trial may process (counted across restarts). Can only be lowered.',
    }),
  },
  rateLimit: {
    redisUrl: setting.string({
      default: '',
      secret: true,
      doc: 'Redis URL for the variant A rate-limit counters, shared by every process (e.g. redis://127.0.0.1:6379). Empty: counted in this process.',
    }),
    prefix: setting.string({ default: 'mos:ratelimit', doc: 'Key prefix of the rate-limit counters in Redis.' }),
    windowSeconds: setting.integer({
      default: 60,
      min: 1,
      max: 3600,
      doc: 'Length of the rate-limit window. The contract says per minute: change it only for tests.',
    }),
  },
  log: {
    level: setting.choice({
      default: 'info',
      values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      doc: 'Least level written to standard output: `info` gives one line per request and per task transition; `debug` adds probe requests.',
    }),
    format: setting.choice({
      default: 'auto',
      values: ['auto', 'json', 'pretty'],
      doc: '`json`: one JSON object per line (for log collectors); `pretty`: short coloured lines for people; `auto`: pretty when standard output is a terminal, else json.',
    }),
  },
  health: {
    minFreeDiskMb: setting.integer({
      default: 1024,
      min: 0,
      max: 100_000_000,
      doc: 'GET /readyz fails while the disk holding SERVICE__STORAGE__FS__BASE has less free space than this, in MB (checked when records or files are on fs; 0: not checked).',
    }),
    checkTimeoutMs: setting.integer({
      default: 2000,
      min: 50,
      max: 60_000,
      doc: 'Longest wait of each GET /readyz check (storage, queue); a check that takes longer fails.',
    }),
  },
  webhooks: {
    secret: setting.string({
      default: '',
      secret: true,
      doc: 'Secret that signs webhook deliveries (Mos-Signature: HMAC-SHA256). Empty: webhooks are off and a submit with callback_url is refused with 400.',
    }),
    allowPrivate: setting.boolean({
      default: false,
      doc: 'Allow callback_url to reach loopback, private, link-local, CGNAT and multicast addresses (a receiver inside your own network). Off: such URLs are refused with 400, after DNS resolution.',
    }),
    retryHours: setting.number({
      default: 24,
      min: 0.0001,
      max: 720,
      doc: 'How long a failing webhook delivery is retried (exponential backoff), in hours; then it is dropped and logged.',
    }),
    firstRetrySeconds: setting.number({
      default: 30,
      min: 0.01,
      max: 86_400,
      doc: 'Wait before the first retry of a failed webhook delivery, in seconds; each next wait doubles, up to an hour.',
    }),
  },
  console: {
    enabled: setting.boolean({
      default: true,
      doc: 'Serve the web console (`/console`, `/config`, `/events`, `/auth/*`, `/admin/*`) on the API role (never on a worker).',
    }),
    adminPasswordHash: setting.string({
      default: '',
      secret: true,
      doc: "scrypt hash of the console administrator's password (`scrypt$N$r$p$salt$hash`), made by `npm run console-password`. Empty: with no API key set either, `npm start` creates a development password and prints it; with API keys set, console sign-in answers 503.",
    }),
    sessionHours: setting.number({
      default: 12,
      min: 0.001,
      max: 8760,
      doc: 'How long a console session lasts after sign-in, in hours (fractions allowed).',
    }),
    cookieSecure: setting.choice({
      default: 'auto',
      values: ['auto', 'true', 'false'],
      doc: "Whether the console's session cookie is `Secure` (sent over HTTPS only): `auto`, unless the request's host is loopback (localhost, 127.0.0.1, ::1).",
    }),
  },
  metrics: {
    requireKey: setting.boolean({
      default: true,
      doc: 'Whether GET /api/v1/metrics needs X-API-Key (false: open to any scraper that reaches the port).',
    }),
  },
} satisfies ConfigSchema

/** The settings, by section: each leaf a setting's zod schema. */
export interface ConfigSchema {
  [key: string]: setting.Setting<unknown> | ConfigSchema
}

type ValueOf<S> = S extends z.ZodType ? z.output<S> : { -readonly [K in keyof S]: ValueOf<S[K]> }

/** The loaded configuration: the schema's shape with values. */
export type Config = ValueOf<typeof CONFIG_SCHEMA>
