import { z } from 'zod'
import { CONFIG_SCHEMA, type Config, type ConfigSchema } from './schema.ts'
import { type Setting, type SettingMeta, settingMeta } from './setting.ts'
import { mistakenSettings } from './setting-names.ts'

const PREFIX = 'SERVICE__'

/** A configuration problem found at start-up; the message names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** `rateLimitPerMinute` → `RATE_LIMIT_PER_MINUTE`. */
function toEnvWord(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()
}

/** Every setting with its variable name, in schema order (for docs, .env.example and validation). */
export function listSettings(): { name: string; path: string[]; schema: Setting<unknown>; meta: SettingMeta }[] {
  const out: ReturnType<typeof listSettings> = []
  const walk = (node: ConfigSchema, path: string[]) => {
    for (const [key, child] of Object.entries(node)) {
      if (child instanceof z.ZodType) {
        out.push({ name: PREFIX + [...path, key].map(toEnvWord).join('__'), path: [...path, key], schema: child, meta: settingMeta(child) })
      } else walk(child, [...path, key])
    }
  }
  walk(CONFIG_SCHEMA, [])
  return out
}

/**
 * Loads the configuration once from environment variables. An unknown `SERVICE__*` variable, a
 * setting spelled with the wrong separators, or a bad value throws a ConfigError naming it (and the
 * setting it most likely meant), so a typo stops start-up instead of being ignored.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const settings = listSettings()
  const unknown = mistakenSettings(
    Object.keys(env),
    settings.map((s) => s.name),
  )
  if (unknown.length > 0) {
    const named = unknown.map(({ name, meant }) => (meant ? `${name} (did you mean ${meant}?)` : name))
    throw new ConfigError(`unknown setting${unknown.length > 1 ? 's' : ''}: ${named.join(', ')} (see docs/configuration.md)`)
  }
  const config: Record<string, unknown> = {}
  for (const { name, path, schema } of settings) {
    const parsed = schema.safeParse(env[name])
    if (!parsed.success) throw new ConfigError(`${name}: ${parsed.error.issues[0]!.message}`)
    const value = parsed.data
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
