import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ERROR_TEXTS, licenseInfoSchemaA, licenseInfoSchemaB, licenseVerifySchemaA, licenseVerifySchemaB } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { runLicenseCli } from '../src/cli/license.ts'
import { ConfigError, createServiceContext, loadConfig } from '../src/index.ts'
import { checkLicenseKey, parsePublicKey } from '../src/licensing/license-key.ts'
import { TIER_LIMITS } from '../src/licensing/tiers.ts'
import { API_KEY, fetchMos, form, inProcessApp, tempDir, testEnv, VARIANTS } from './support/harness.ts'
import { startMos, stopMos, type MosProcess } from './support/processes.ts'
import { DAY, testVendor, thisMachine } from './support/licensing.ts'

const { available, paths } = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })
const ADMIN_KEY = 'admin-key-0123456789'
const nowSeconds = () => Math.floor(Date.now() / 1000)

/** Re-encodes the payload of a key, keeping its signature (what a forger would try). */
function tamper(key: string, change: (payload: Record<string, unknown>) => void): string {
  const [prefix, body, signature] = key.split('.') as [string, string, string]
  const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'))
  change(payload)
  return `${prefix}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${signature}`
}

describe('licence keys', () => {
  const vendor = testVendor()
  const publicKey = parsePublicKey(vendor.publicKeyBase64)
  const check = (key: string) => checkLicenseKey(publicKey, key, { machineId: thisMachine() })

  it('accepts a key it signed, with tier, expiry, limits and machine', () => {
    const key = vendor.issue({ tier: 'professional', machine: thisMachine(), limits: { max_batch_count: 3 } })
    const result = check(key)
    expect(result.ok).toBe(true)
    expect(result.ok && result.payload).toMatchObject({ tier: 'professional', machine: thisMachine(), limits: { max_batch_count: 3 } })
  })

  it.each([
    ['a payload edited to a higher tier', () => tamper(vendor.issue(), (p) => (p.tier = 'professional')), 'signature'],
    ['a payload with a later expiry', () => tamper(vendor.issue(), (p) => (p.expires_at = nowSeconds() + 900 * DAY)), 'signature'],
    [
      'a payload with the machine binding removed',
      () => tamper(vendor.issue({ machine: 'elsewhere' }), (p) => delete p.machine),
      'signature',
    ],
    [
      'a flipped signature character',
      () => {
        const k = vendor.issue()
        return k.slice(0, -2) + (k.at(-2) === 'A' ? 'B' : 'A') + k.at(-1)
      },
      'signature',
    ],
    ['a key of another vendor', () => testVendor().issue(), 'signature'],
    ['a key for another machine', () => vendor.issue({ machine: 'another-machine' }), 'machine'],
    ['an expired key', () => vendor.issue({ issued_at: nowSeconds() - 60 * DAY, expires_at: nowSeconds() - DAY }), 'expired'],
    ['garbage', () => 'not-a-key', 'malformed'],
    ['the right shape with garbage inside', () => 'mos1.abc.def', 'signature'],
    ['a signed payload that is not a licence', () => vendor.issue({ tier: 'gold' as never }), 'malformed'],
  ])('refuses %s', (_label, make, reason) => {
    const result = check(make())
    expect(result.ok).toBe(false)
    expect(!result.ok && result.reason).toBe(reason)
  })

  it('remembers only genuine keys, so a remembered key never lets a forgery through', () => {
    const verified = new Set<string>()
    const key = vendor.issue({ tier: 'professional' })
    const forged = tamper(key, (p) => (p.tier = 'enterprise'))
    const cached = (k: string) => checkLicenseKey(publicKey, k, { machineId: thisMachine(), verified })
    expect(cached(key).ok).toBe(true)
    expect(cached(forged)).toMatchObject({ ok: false, reason: 'signature' })
    expect(cached(key).ok).toBe(true)
    expect([...verified]).toEqual([key])
    // Remembered keys still expire.
    const expiring = vendor.issue({ expires_at: nowSeconds() + 60 })
    expect(cached(expiring).ok).toBe(true)
    expect(checkLicenseKey(publicKey, expiring, { machineId: thisMachine(), verified, now: (nowSeconds() + 120) * 1000 })).toMatchObject({
      ok: false,
      reason: 'expired',
    })
  })

  it('issues keys from the command line that the service accepts', async () => {
    const dir = await tempDir()
    try {
      const privateKey = await vendor.writePrivateKey(dir.path)
      const key = runLicenseCli([
        'issue',
        '--private-key',
        privateKey,
        '--tier',
        '2',
        '--expires',
        '+10d',
        '--machine',
        thisMachine(),
        '--max-batch-count',
        '7',
      ])
      const result = check(key)
      expect(result.ok && result.payload).toMatchObject({ tier: 'professional', limits: { max_batch_count: 7 } })
      expect(result.ok && result.payload.expires_at - nowSeconds()).toBeGreaterThan(10 * DAY - 60)
      expect(() => runLicenseCli(['issue', '--private-key', privateKey, '--tier', 'gold', '--expires', '+1d'])).toThrow(
        /--tier must be one of/,
      )
      expect(runLicenseCli(['--help'])).toMatch(/^mos license: issue and inspect Mos licence keys/)
      // The installed command, as a separate process.
      const bin = new URL('../bin/mos-license.js', import.meta.url).pathname
      const { stdout } = await promisify(execFile)(process.execPath, [bin, 'machine-id'])
      expect(stdout.trim()).toBe(thisMachine())
      expect(thisMachine()).toMatch(/^[0-9a-f]{32}$/)
    } finally {
      await dir.remove()
    }
  })
})

describe('licence settings', () => {
  it.each([
    [
      'a public key that is not Ed25519',
      { SERVICE__LICENSE__PUBLIC_KEY: 'bm90IGEga2V5' },
      /SERVICE__LICENSE__PUBLIC_KEY: not a usable Ed25519 public key/,
    ],
    [
      'a key file that does not exist',
      { SERVICE__LICENSE__KEY_FILE: '/nonexistent/licence.key' },
      /SERVICE__LICENSE__KEY_FILE: cannot read \/nonexistent\/licence.key/,
    ],
  ])('stops start-up for %s, naming the setting', (_label, extra, message) => {
    const config = loadConfig(testEnv('A', '/tmp/unused', { SERVICE__STORAGE__DRIVER: 'memory', ...extra }))
    expect(() => createServiceContext(config)).toThrow(ConfigError)
    expect(() => createServiceContext(config)).toThrow(message)
  })
})

describe.skipIf(!available).each(VARIANTS)('licence endpoints in variant %s', (variant) => {
  const vendor = testVendor()
  let dir: Awaited<ReturnType<typeof tempDir>>
  const env = (extra: Record<string, string> = {}) =>
    testEnv(variant, dir.path, {
      SERVICE__LICENSE__PUBLIC_KEY: vendor.publicKeyBase64,
      SERVICE__AUTH__ADMIN_KEYS: ADMIN_KEY,
      ...extra,
    })
  const verify = (service: ReturnType<typeof inProcessApp>, body: unknown, key = API_KEY) =>
    service.call(
      '/api/v1/license/verify',
      { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } },
      key,
    )
  const info = async (service: ReturnType<typeof inProcessApp>) => (await service.call('/api/v1/license/info')).json()

  beforeAll(async () => {
    dir = await tempDir()
  })
  afterAll(async () => {
    await dir.remove()
  })

  it('starts in the trial, says so, and takes an admin-verified key as the active licence across restarts', async () => {
    const service = inProcessApp(env())
    const trial = await info(service)
    if (variant === 'A') {
      expect(licenseInfoSchemaA.parse(trial)).toMatchObject({
        mode: 'trial',
        tier: 'trial',
        license_key: '',
        trial: { enabled: true, used_files: 0, max_files: 100 },
      })
      expect(trial.limits).toEqual(TIER_LIMITS.trial)
    } else {
      expect(licenseInfoSchemaB.parse(trial)).toMatchObject({
        authorized: false,
        tier: 0,
        status: 'trial',
        license_expires_at: 0,
        machine_id: thisMachine(),
      })
      expect(trial.server_fingerprint).toMatch(/^[0-9a-f]{16}$/)
      expect((await (await service.call('/api/v1/capabilities')).json()).license).toEqual({ authorized: false, tier: 0, status: 'trial' })
    }

    const expires = nowSeconds() + 45 * DAY
    const key = vendor.issue({ tier: 'professional', expires_at: expires, machine: thisMachine() })
    // An ordinary key verifies without activating.
    const checked = await verify(service, { license_key: key })
    expect(checked.status).toBe(200)
    const checkedBody = await checked.json()
    expect(checkedBody.activated).toBe(false)
    if (variant === 'A') {
      expect(licenseVerifySchemaA.parse(checkedBody)).toEqual({
        valid: true,
        tier: 'professional',
        expires_at: new Date(expires * 1000).toISOString(),
        // The tier grants 2048 MB; the operator's cap (SERVICE__LIMITS__MAX_FILE_SIZE_MB, 500 by default) is what applies.
        limits: { max_file_size_mb: 500, max_batch_count: -1 },
      })
    } else {
      expect(licenseVerifySchemaB.parse(checkedBody)).toEqual({
        success: true,
        message: 'license key is valid (tier 2)',
        expires_at: expires,
      })
    }
    expect((await info(service)).tier).toBe(variant === 'A' ? 'trial' : 0)

    expect((await (await verify(service, { license_key: key }, ADMIN_KEY)).json()).activated).toBe(true)
    await service.close()

    const restarted = inProcessApp(env())
    const licensed = await info(restarted)
    if (variant === 'A') {
      expect(licenseInfoSchemaA.parse(licensed)).toMatchObject({
        mode: 'licensed',
        tier: 'professional',
        expires_at: new Date(expires * 1000).toISOString(),
        trial: { enabled: false },
        limits: { max_file_size_mb: 500, max_batch_count: -1, max_texture_size_mb: 500 },
      })
      expect(licensed.license_key).toBe(`********${key.slice(-6)}`)
    } else {
      expect(licenseInfoSchemaB.parse(licensed)).toMatchObject({
        authorized: true,
        tier: 2,
        status: 'active',
        license_expires_at: expires,
        days_until_expiry: 44,
      })
      expect((await (await restarted.call('/api/v1/capabilities')).json()).license).toEqual({ authorized: true, tier: 2, status: 'active' })
    }
    await restarted.close()
  })

  it.each([
    ['tampered', () => tamper(vendor.issue(), (p) => (p.tier = 'professional')), /signature does not match/],
    ['bound to another machine', () => vendor.issue({ machine: 'another-machine' }), /bound to machine another-machine/],
    ['expired', () => vendor.issue({ expires_at: nowSeconds() - DAY }), /expired at/],
    ['garbage', () => 'definitely not a licence', /not a Mos licence key/],
  ])('never accepts a %s key', async (_label, make, reason) => {
    const service = inProcessApp(
      testEnv(variant, dir.path, {
        SERVICE__LICENSE__PUBLIC_KEY: vendor.publicKeyBase64,
        SERVICE__STORAGE__DRIVER: 'memory',
        SERVICE__AUTH__ADMIN_KEYS: ADMIN_KEY,
      }),
    )
    try {
      const response = await verify(service, { license_key: make() }, ADMIN_KEY)
      const body = await response.json()
      if (variant === 'A') {
        expect(response.status).toBe(200)
        expect(licenseVerifySchemaA.parse(body)).toMatchObject({ valid: false, tier: 'trial' })
        expect(body.message).toMatch(reason)
      } else {
        expect(response.status).toBe(402)
        expect(licenseVerifySchemaB.parse(body).success).toBe(false)
        expect(body.error).toBe(`license key refused: ${body.message.replace(/^license key refused: /, '')}`)
        expect(body.message).toMatch(reason)
      }
      expect(body.activated ?? false).toBe(false)
      expect((await info(service)).tier).toBe(variant === 'A' ? 'trial' : 0)
    } finally {
      await service.close()
    }
  })

  it('answers 400 naming license_key when it is missing', async () => {
    const service = inProcessApp(env({ SERVICE__STORAGE__DRIVER: 'memory' }))
    try {
      for (const body of [{}, { license_key: '' }, { licence: 'x' }]) {
        const response = await verify(service, body)
        expect(response.status).toBe(400)
        expect(await response.json()).toEqual({ error: ERROR_TEXTS.missingField('license_key') })
      }
      const notJson = await service.call('/api/v1/license/verify', { method: 'POST', body: '{oops' })
      expect(notJson.status).toBe(400)
      expect((await service.call('/api/v1/license/info', {}, null)).status).toBe(401)
    } finally {
      await service.close()
    }
  })

  it('counts trial files across restarts and blocks at max_files', async () => {
    const trialDir = await tempDir()
    const trialEnv = testEnv(variant, trialDir.path, { SERVICE__LICENSE__TRIAL_MAX_FILES: '2' })
    const compress = async (service: ReturnType<typeof inProcessApp>) =>
      service.call('/api/v1/compress', { method: 'POST', body: await form({ engine: 'meshopt' }, [paths.box]) })
    try {
      const first = inProcessApp(trialEnv)
      expect((await compress(first)).status).toBe(200)
      // A refused request costs no trial file.
      expect((await first.call('/api/v1/compress', { method: 'POST', body: await form({}, [paths.box]) })).status).toBe(400)
      await first.close()

      const second = inProcessApp(trialEnv)
      expect((await compress(second)).status).toBe(200)
      const blocked = await compress(second)
      expect(blocked.status).toBe(402)
      expect(await blocked.json()).toEqual({ error: ERROR_TEXTS.trialExhausted(2) })
      await second.close()

      const third = inProcessApp(trialEnv)
      const stillBlocked = await compress(third)
      expect(stillBlocked.status).toBe(402)
      const trial = await info(third)
      if (variant === 'A') expect(trial.trial).toEqual({ enabled: true, used_files: 2, max_files: 2 })
      else expect(trial.trial).toEqual({ used_files: 2, max_files: 2 })
      await third.close()
    } finally {
      await trialDir.remove()
    }
  })

  it('falls back to the trial when the configured licence has expired, and says so', async () => {
    const expiredDir = await tempDir()
    const expiredAt = nowSeconds() - 2 * DAY
    const key = vendor.issue({ tier: 'standard', issued_at: expiredAt - 30 * DAY, expires_at: expiredAt })
    const keyFile = join(expiredDir.path, 'licence.key')
    await writeFile(keyFile, `${key}\n`)
    const service = inProcessApp(
      testEnv(variant, expiredDir.path, {
        SERVICE__LICENSE__PUBLIC_KEY: vendor.publicKeyBase64,
        SERVICE__LICENSE__KEY_FILE: keyFile,
        SERVICE__LICENSE__TRIAL_MAX_FILES: '1',
      }),
    )
    try {
      const state = await info(service)
      expect(state.status).toBe('expired')
      expect(state.message).toBe(`license expired at ${new Date(expiredAt * 1000).toISOString()}; trial limits apply`)
      if (variant === 'A') {
        expect(licenseInfoSchemaA.parse(state)).toMatchObject({
          mode: 'trial',
          tier: 'trial',
          expires_at: new Date(expiredAt * 1000).toISOString(),
        })
      } else {
        expect(licenseInfoSchemaB.parse(state)).toMatchObject({
          authorized: false,
          tier: 0,
          license_expires_at: expiredAt,
          days_until_expiry: -2,
        })
      }
      const compress = async () => service.call('/api/v1/compress', { method: 'POST', body: await form({ engine: 'draco' }, [paths.box]) })
      expect((await compress()).status).toBe(200)
      const blocked = await compress()
      expect(blocked.status).toBe(402)
      expect(await blocked.json()).toEqual({ error: ERROR_TEXTS.licenseExpiredTrialExhausted(new Date(expiredAt * 1000).toISOString(), 1) })
    } finally {
      await service.close()
      await expiredDir.remove()
    }
  })

  it('runs with a key from SERVICE__LICENSE__KEY', async () => {
    const key = vendor.issue({ tier: 'standard' })
    const service = inProcessApp(env({ SERVICE__STORAGE__DRIVER: 'memory', SERVICE__LICENSE__KEY: key }))
    try {
      const state = await info(service)
      expect(state.tier).toBe(variant === 'A' ? 'standard' : 1)
      expect(state.status).toBe('active')
    } finally {
      await service.close()
    }
  })
})

/**
 * Issue 20, item 11: with the trial used up, a malformed request still answers 400 with its own
 * text, and only a valid one is refused with 402 (validation comes before the licence). On the
 * compiled server from its entry point, in variant B, where the conformance suite saw 402s.
 */
describe.skipIf(!available)('a used-up trial on the real server (variant B)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let mos: MosProcess | undefined
  beforeAll(async () => {
    dir = await tempDir()
    mos = await startMos('trial-used-up', testEnv('B', dir.path, { SERVICE__LICENSE__TRIAL_MAX_FILES: '0' }))
  })
  afterAll(async () => {
    await stopMos(mos)
    await dir.remove()
  })
  const submit = async (path: string, fields: Record<string, string>, files: Parameters<typeof form>[1], fileField = 'file') => {
    const response = await fetchMos(mos!, `/api/v1${path}`, { method: 'POST', body: await form(fields, files, fileField) })
    return { status: response.status, body: await response.json() }
  }
  const text = { name: 'notes.txt', bytes: new TextEncoder().encode('hello') }

  it.each([
    ['/compress', 'file', { engine: 'meshopt' }, 'engine'],
    ['/convert', 'file', { target_format: 'stl' }, 'target_format'],
    ['/textures/optimize', 'file', { format: 'webp' }, 'format'],
    ['/repair', 'file', {}, undefined],
    ['/batch/compress', 'files', { engine: 'meshopt' }, 'engine'],
  ])('POST %s: missing file, missing field and bad format are 400s; a valid request is 402', async (path, fileField, valid, required) => {
    const fields: Record<string, string> = valid
    expect(await submit(path, fields, [], fileField)).toEqual({ status: 400, body: { error: ERROR_TEXTS.missingField(fileField) } })
    if (required) {
      const { [required]: _dropped, ...withoutRequired } = fields
      expect(await submit(path, withoutRequired, [paths.box], fileField)).toEqual({
        status: 400,
        body: { error: ERROR_TEXTS.missingField(required) },
      })
      const bad = await submit(path, { ...fields, [required]: 'zstd' }, [paths.box], fileField)
      expect(bad.status).toBe(400)
      expect(bad.body.error).toMatch(/^(invalid value for|unsupported format)/)
    }
    expect(await submit(path, fields, [text], fileField)).toEqual({ status: 400, body: { error: ERROR_TEXTS.unsupportedFormat('txt') } })
    expect(await submit(path, fields, [paths.box], fileField)).toEqual({ status: 402, body: { error: ERROR_TEXTS.trialExhausted(0) } })
    const info = await (await fetchMos(mos!, '/api/v1/license/info')).json()
    expect(info.trial).toEqual({ used_files: 0, max_files: 0 })
  })
})
