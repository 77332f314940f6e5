import { generateKeyPairSync } from 'node:crypto'
import { issueLicenseKey } from '../../packages/server/src/licensing/license-key.ts'

/**
 * SERVICE__* settings for a throw-away local service: loopback on a free port, its own data
 * folder, two engine threads started on demand, and no practical rate limit (rate limiting has its own tests; a
 * suite's many polls must not trip it).
 */
export function localServiceEnv(options: {
  variant: string
  dataDir: string
  apiKeys: string
  extra?: Record<string, string>
}): Record<string, string> {
  return {
    SERVICE__AUTH__API_KEYS: options.apiKeys,
    SERVICE__SERVER__VARIANT: options.variant,
    SERVICE__SERVER__PORT: '0',
    SERVICE__SERVER__HOST: '127.0.0.1',
    SERVICE__STORAGE__FS__BASE: options.dataDir,
    SERVICE__ENGINES__THREADS: '2',
    SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '1000000',
    // Dozens of short-lived test services: threads start on demand, not at every start.
    SERVICE__ENGINES__PRESTART: 'false',
    // One line per request would bury a failing test's output; tests of the logs ask for info.
    SERVICE__LOG__LEVEL: 'warn',
    ...options.extra,
  }
}

/**
 * A professional licence signed by a vendor key pair made on the spot (docs/licensing.md, "Testing
 * against a licensed service"): suites and benchmarks submit more files than the trial allows.
 */
export function throwAwayLicenceEnv(id = 'lic_local'): Record<string, string> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  const now = Math.floor(Date.now() / 1000)
  return {
    SERVICE__LICENSE__PUBLIC_KEY: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
    SERVICE__LICENSE__KEY: issueLicenseKey(privateKey, { id, tier: 'professional', issued_at: now, expires_at: now + 86_400 }),
  }
}
