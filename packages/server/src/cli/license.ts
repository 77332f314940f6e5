import { generateKeyPairSync, randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { LICENSE_TIERS, LICENSED_TIERS, TIER_NUMBER, type LicensedTier, type TierLimits } from '@mos/sdk/contract'
import { checkLicenseKey, issueLicenseKey, parsePublicKey, type LicensePayload } from '../licensing/license-key.ts'
import { machineId } from '../licensing/machine-id.ts'
import { MOS_VENDOR_PUBLIC_KEY } from '../licensing/vendor-key.ts'

const USAGE = `mos license: issue and inspect Mos licence keys

  mos license machine-id
      Prints this host's machine id (give it to the vendor for a machine-bound key).
  mos license issue --private-key FILE --tier standard|professional|1|2 --expires DATE|+DAYSd
                    [--machine ID] [--customer NAME] [--id ID]
                    [--max-file-size-mb N] [--max-batch-count N] [--max-texture-size-mb N]
      Signs a key with the vendor's Ed25519 private key (PEM) and prints it.
  mos license inspect KEY [--public-key FILE]
      Verifies a key (default: Mos's vendor key) for this machine and prints its payload.
  mos license keygen --out DIR
      Writes a new vendor key pair: DIR/vendor-private-key.pem (keep it offline) and
      DIR/vendor-public-key.pem (set SERVICE__LICENSE__PUBLIC_KEY to it).`

/** Thrown for bad command lines; the message is shown with the usage. */
export class UsageError extends Error {}

function parseTier(value: string | undefined): LicensedTier {
  const tier = LICENSE_TIERS.find((name) => name === value || String(TIER_NUMBER[name]) === value)
  if (!tier || !(LICENSED_TIERS as readonly string[]).includes(tier)) {
    throw new UsageError(`--tier must be one of ${LICENSED_TIERS.join(', ')} (or 1, 2), got "${value ?? ''}"`)
  }
  return tier as LicensedTier
}

/** `2027-01-31`, an ISO timestamp, or `+365d` from now → Unix seconds. */
function parseExpiry(value: string | undefined, now: number): number {
  if (!value) throw new UsageError('--expires is required')
  const relative = /^\+(\d+)d$/.exec(value)
  const ms = relative ? now + Number(relative[1]) * 86_400_000 : Date.parse(value)
  if (!Number.isFinite(ms)) throw new UsageError(`--expires: not a date or +DAYSd: "${value}"`)
  return Math.floor(ms / 1000)
}

function parseLimit(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!/^-?\d+$/.test(value) || Number(value) < -1)
    throw new UsageError(`--${name}: expected an integer ≥ -1 (-1 = unlimited), got "${value}"`)
  return Number(value)
}

const LICENSE_OPTIONS = {
  'private-key': { type: 'string' },
  'public-key': { type: 'string' },
  tier: { type: 'string' },
  expires: { type: 'string' },
  machine: { type: 'string' },
  customer: { type: 'string' },
  id: { type: 'string' },
  out: { type: 'string' },
  'max-file-size-mb': { type: 'string' },
  'max-batch-count': { type: 'string' },
  'max-texture-size-mb': { type: 'string' },
} as const

function parseLicenseArgs(args: string[]) {
  return parseArgs({ args, allowPositionals: true, options: LICENSE_OPTIONS })
}

type LicenseValues = ReturnType<typeof parseLicenseArgs>['values']

/**
 * Runs `mos license …` with the given arguments and returns what it prints. Exported so tests and
 * other CLIs (the `mos` client) can run it in-process.
 */
export function runLicenseCli(argv: string[], now = Date.now()): string {
  const [command, ...rest] = argv
  if (command === 'help' || command === '--help' || command === '-h') return USAGE
  const { values, positionals } = parseLicenseArgs(rest)
  switch (command) {
    case 'machine-id':
      return machineId()
    case 'issue':
      return issue(values, now)
    case 'inspect':
      return inspect(positionals[0], values, now)
    case 'keygen':
      return keygen(values)
    default:
      throw new UsageError(command ? `unknown command: ${command}` : 'no command given')
  }
}

/** `issue`: a key signed with the vendor's private key. */
function issue(values: LicenseValues, now: number): string {
  if (!values['private-key']) throw new UsageError('--private-key FILE is required')
  const limits: Partial<TierLimits> = {}
  for (const name of ['max-file-size-mb', 'max-batch-count', 'max-texture-size-mb'] as const) {
    const value = parseLimit(name, values[name])
    if (value !== undefined) limits[name.replaceAll('-', '_') as keyof TierLimits] = value
  }
  const payload: LicensePayload = {
    id: values.id ?? `lic_${randomUUID()}`,
    tier: parseTier(values.tier),
    issued_at: Math.floor(now / 1000),
    expires_at: parseExpiry(values.expires, now),
    ...(values.customer ? { customer: values.customer } : {}),
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
    ...(values.machine ? { machine: values.machine } : {}),
  }
  return issueLicenseKey(readFileSync(values['private-key'], 'utf8'), payload)
}

/** `inspect`: the key verified for this machine, and its payload. */
function inspect(key: string | undefined, values: LicenseValues, now: number): string {
  if (!key) throw new UsageError('inspect needs the key')
  const publicKey = parsePublicKey(values['public-key'] ? readFileSync(values['public-key'], 'utf8') : MOS_VENDOR_PUBLIC_KEY)
  const result = checkLicenseKey(publicKey, key, { machineId: machineId(), now })
  return JSON.stringify(result.ok ? { valid: true, payload: result.payload } : { valid: false, ...result }, null, 2)
}

/** `keygen`: a new vendor key pair; never overwrites one (`wx`). */
function keygen(values: LicenseValues): string {
  if (!values.out) throw new UsageError('--out DIR is required')
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  writeFileSync(join(values.out, 'vendor-private-key.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }), {
    mode: 0o600,
    flag: 'wx',
  })
  writeFileSync(join(values.out, 'vendor-public-key.pem'), publicKey.export({ type: 'spki', format: 'pem' }), { flag: 'wx' })
  return `wrote ${join(values.out, 'vendor-private-key.pem')} and vendor-public-key.pem\nSERVICE__LICENSE__PUBLIC_KEY=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`
}

/** Runs the CLI as a process: prints the result, or the error (and usage) with exit code 2 or 1. */
export function mainLicenseCli(argv: string[]): void {
  try {
    console.log(runLicenseCli(argv))
  } catch (error) {
    console.error(`mos license: ${(error as Error).message}`)
    if (error instanceof UsageError) console.error(`\n${USAGE}`)
    process.exitCode = error instanceof UsageError ? 2 : 1
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) mainLicenseCli(process.argv.slice(2))
