import { CONFIG_SCHEMA, type Config, type SettingSpec } from './schema.ts'

const PREFIX = 'SERVICE__'

/** A configuration problem found at start-up; the message names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

function isSpec(node: unknown): node is SettingSpec {
  return typeof node === 'object' && node !== null && 'kind' in node && 'doc' in node
}

/** `rateLimitPerMinute` → `RATE_LIMIT_PER_MINUTE`. */
function toEnvWord(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()
}

/** Every setting with its variable name, in schema order (for docs, .env.example and validation). */
export function listSettings(): { name: string; path: string[]; spec: SettingSpec }[] {
  const out: { name: string; path: string[]; spec: SettingSpec }[] = []
  const walk = (node: Record<string, unknown>, path: string[]) => {
    for (const [key, child] of Object.entries(node)) {
      if (isSpec(child)) out.push({ name: PREFIX + [...path, key].map(toEnvWord).join('__'), path: [...path, key], spec: child })
      else walk(child as Record<string, unknown>, [...path, key])
    }
  }
  walk(CONFIG_SCHEMA, [])
  return out
}

function parseValue(name: string, spec: SettingSpec, raw: string): unknown {
  const text = raw.trim()
  switch (spec.kind) {
    case 'integer': {
      const n = Number(text)
      if (!/^[+-]?\d+$/.test(text) || n < spec.min || n > spec.max) {
        throw new ConfigError(`${name}: expected an integer from ${spec.min} to ${spec.max}, got "${raw}"`)
      }
      return n
    }
    case 'number': {
      const n = Number(text)
      if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(text) || n < spec.min || n > spec.max) {
        throw new ConfigError(`${name}: expected a number from ${spec.min} to ${spec.max}, got "${raw}"`)
      }
      return n
    }
    case 'enum': {
      const match = spec.values.find((v) => v.toLowerCase() === text.toLowerCase())
      if (!match) throw new ConfigError(`${name}: expected one of ${spec.values.join(', ')}, got "${raw}"`)
      return match
    }
    case 'boolean': {
      if (/^(true|1|yes|on)$/i.test(text)) return true
      if (/^(false|0|no|off)$/i.test(text)) return false
      throw new ConfigError(`${name}: expected true or false, got "${raw}"`)
    }
    case 'list':
      return text === ''
        ? []
        : text
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
    case 'string':
      if (text === '') throw new ConfigError(`${name}: must not be empty`)
      return text
  }
}

/**
 * Loads the configuration once from environment variables. An unknown `SERVICE__*` variable or a
 * bad value throws a ConfigError naming it, so a typo stops start-up instead of being ignored.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const settings = listSettings()
  const known = new Set(settings.map((s) => s.name))
  const unknown = Object.keys(env).filter((key) => key.startsWith(PREFIX) && !known.has(key))
  if (unknown.length > 0) {
    throw new ConfigError(`unknown setting${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')} (see docs/configuration.md)`)
  }
  const config: Record<string, unknown> = {}
  for (const { name, path, spec } of settings) {
    const raw = env[name]
    const value = raw === undefined ? structuredClone(spec.default) : parseValue(name, spec, raw)
    let node = config
    for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>
    node[path.at(-1)!] = value
  }
  return withAwsCredentials(config as Config, env)
}

/**
 * S3 keys left empty come from the AWS convention's variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN), read here with the rest of the environment so nothing else reads it.
 */
function withAwsCredentials(config: Config, env: Record<string, string | undefined>): Config {
  const s3 = config.storage.s3
  if (s3.accessKeyId || !env.AWS_ACCESS_KEY_ID || !env.AWS_SECRET_ACCESS_KEY) return config
  s3.accessKeyId = env.AWS_ACCESS_KEY_ID
  s3.secretAccessKey = env.AWS_SECRET_ACCESS_KEY
  s3.sessionToken ||= env.AWS_SESSION_TOKEN ?? ''
  return config
}
