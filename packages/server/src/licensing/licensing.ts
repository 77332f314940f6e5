import { createHash, type KeyObject } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import type { LicenseStatus, LicenseTier, TierLimits } from '@mos/sdk/contract'
import type { Storage } from 'unstorage'
import { ConfigError } from '../config/load.ts'
import type { Config } from '../config/schema.ts'
import { checkLicenseKey, parsePublicKey, type LicenseCheck, type LicensePayload } from './license-key.ts'
import { machineId as readMachineId } from './machine-id.ts'
import { TIER_LIMITS } from './tiers.ts'
import { createTrialCounter, type TrialCounter } from './trial-counter.ts'
import { MOS_VENDOR_PUBLIC_KEY } from './vendor-key.ts'
import type { Logger } from '../logging/create-logger.ts'

/** The licence in force right now. */
export interface LicenseState {
  status: LicenseStatus
  /** The tier whose limits apply: `trial` unless the licence is active. */
  tier: LicenseTier
  limits: TierLimits
  /** The key in force (active, or expired and so falling back to trial limits). */
  key?: string
  payload?: LicensePayload
  /** One line saying why this state (shown in info documents and logs). */
  message: string
}

export interface Licensing {
  machineId: string
  /** Short fingerprint of the public key this server trusts (variant B `server_fingerprint`). */
  fingerprint: string
  trialMaxFiles: number
  trial: TrialCounter
  /** Checks a key against this server's public key and machine. */
  check(key: string): LicenseCheck
  /** The state computed from the keys loaded so far (call `refresh` first). */
  state(): LicenseState
  /**
   * Reads the key activated through the API (again after a few seconds, so an activation on one
   * cluster node reaches the others).
   */
  refresh(): Promise<void>
  /** Makes a checked key the active licence for every process sharing the record storage. */
  activate(key: string): Promise<void>
}

const ACTIVE_KEY = 'license:active'
const REFRESH_MS = 5_000

/** Reads SERVICE__LICENSE__PUBLIC_KEY: PEM, base64 SPKI DER, a PEM file's path, or empty for Mos's key. */
function loadPublicKey(setting: string): KeyObject {
  const text = setting && !setting.includes('-----BEGIN') && existsSync(setting) ? readFileSync(setting, 'utf8') : setting
  try {
    return parsePublicKey(text || MOS_VENDOR_PUBLIC_KEY)
  } catch (error) {
    throw new ConfigError(`SERVICE__LICENSE__PUBLIC_KEY: not a usable Ed25519 public key (${(error as Error).message})`)
  }
}

/** The configured licence key: SERVICE__LICENSE__KEY, else the file SERVICE__LICENSE__KEY_FILE names. */
function loadConfiguredKey(config: Config['license']): string | undefined {
  if (config.key) return config.key
  if (!config.keyFile) return undefined
  try {
    return readFileSync(config.keyFile, 'utf8').trim() || undefined
  } catch (error) {
    throw new ConfigError(`SERVICE__LICENSE__KEY_FILE: cannot read ${config.keyFile} (${(error as Error).message})`)
  }
}

export function createLicensing(options: {
  config: Config['license']
  records: Storage
  now?: () => number
  trial?: TrialCounter
  logger?: Logger
}): Licensing {
  const { config, records } = options
  const clock = options.now ?? Date.now
  const publicKey = loadPublicKey(config.publicKey)
  const machineId = readMachineId()
  const fingerprint = keyFingerprint(publicKey)
  const trial = options.trial ?? createTrialCounter(records)
  const verified = new Set<string>()
  const check = (key: string) => checkLicenseKey(publicKey, key, { machineId, now: clock(), verified })

  // Read at start-up, so a missing key file stops the service instead of failing every request.
  const configured = loadConfiguredKey(config)
  if (configured) {
    const result = check(configured)
    if (!result.ok && result.reason !== 'expired') options.logger?.warn({ reason: result.message }, 'configured licence key refused')
  }
  let activated: string | undefined
  let lastRead = -Infinity
  let reading: Promise<void> | undefined

  async function read(): Promise<void> {
    const stored = await records.getItem<{ key?: string }>(ACTIVE_KEY)
    activated = stored && typeof stored === 'object' && typeof stored.key === 'string' ? stored.key : undefined
    lastRead = clock()
  }

  // The key activated through the API is the later act, so it wins over the configured one.
  const state = () =>
    licenseStateOf(
      [activated, configured].filter((key): key is string => Boolean(key)),
      check,
    )

  return {
    machineId,
    fingerprint,
    trialMaxFiles: config.trialMaxFiles,
    trial,
    check,
    state,
    async refresh() {
      if (clock() - lastRead < REFRESH_MS) return
      reading ??= read().finally(() => (reading = undefined))
      await reading
    },
    async activate(key) {
      await records.setItem(ACTIVE_KEY, { key, activated_at: new Date(clock()).toISOString() })
      activated = key
    },
  }
}

/** A short name of the public key licences are checked against (sha-256 of its SPKI DER, 16 hex digits). */
function keyFingerprint(publicKey: KeyObject): string {
  return createHash('sha256')
    .update(publicKey.export({ format: 'der', type: 'spki' }))
    .digest('hex')
    .slice(0, 16)
}

/**
 * The licence in force: the first candidate key that checks, else trial limits with the reason
 * (the first expired key's expiry, else the first refusal, else no key at all).
 */
function licenseStateOf(candidates: string[], check: (key: string) => LicenseCheck): LicenseState {
  const trialState = (message: string, extra: Partial<LicenseState> = {}): LicenseState => ({
    status: 'trial',
    tier: 'trial',
    limits: TIER_LIMITS.trial,
    message,
    ...extra,
  })
  let expired: { key: string; payload: LicensePayload } | undefined
  let refused: string | undefined
  for (const key of candidates) {
    const result = check(key)
    if (result.ok) {
      return {
        status: 'active',
        tier: result.payload.tier,
        limits: { ...TIER_LIMITS[result.payload.tier], ...result.payload.limits },
        key,
        payload: result.payload,
        message: `licensed (${result.payload.tier})`,
      }
    }
    if (result.reason === 'expired' && result.payload) expired ??= { key, payload: result.payload }
    else refused ??= result.message
  }
  if (expired) {
    const at = new Date(expired.payload.expires_at * 1000).toISOString()
    return trialState(`license expired at ${at}; trial limits apply`, { status: 'expired', ...expired })
  }
  return trialState(refused ? `license key refused (${refused}); trial limits apply` : 'no license key; trial limits apply')
}
