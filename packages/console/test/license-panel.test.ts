import { describe, expect, it } from 'vitest'
import { RequestError } from '../src/api.ts'
import { licenceForDisplay, NO_KEY_EXPIRY, refusalOutcome, verifyOutcome } from '../src/admin/license-panel.tsx'

describe("the licence panel's verify outcome", () => {
  it("gives a refused key's reason, as variant A answers it", () => {
    expect(verifyOutcome({ valid: false, tier: 'trial', message: 'license key refused: not a Mos licence key', activated: false })).toEqual(
      { ok: false, text: 'The key is not valid: not a Mos licence key.' },
    )
  })

  it("gives a refused key's reason, as variant B's 402 says it", () => {
    expect(refusalOutcome(new RequestError(402, 'license key refused: expired at 2026-01-01T00:00:00.000Z'))).toEqual({
      ok: false,
      text: 'The key is not valid: expired at 2026-01-01T00:00:00.000Z.',
    })
    expect(refusalOutcome(new RequestError(403, 'CSRF token missing'))).toEqual({
      ok: false,
      text: 'Verification refused: CSRF token missing',
    })
  })

  it('says a valid key is valid, its tier, and whether it became the licence in force', () => {
    expect(verifyOutcome({ valid: true, tier: 'standard', message: 'license key is valid', activated: true })).toEqual({
      ok: true,
      text: 'The key is valid (standard). It is now the licence in force.',
    })
    expect(verifyOutcome({ success: true, message: 'license key is valid (tier 2)', activated: false })).toEqual({
      ok: true,
      text: 'The key is valid (tier 2).',
    })
  })
})

describe("the licence panel's document", () => {
  it('says a trial without a key expires never, in both variants', () => {
    expect(licenceForDisplay({ mode: 'trial', tier: 'trial', expires_at: null })).toEqual({
      mode: 'trial',
      tier: 'trial',
      expires_at: NO_KEY_EXPIRY,
    })
    expect(licenceForDisplay({ status: 'trial', license_expires_at: null, days_until_expiry: null, tier: 0 })).toEqual({
      status: 'trial',
      license_expires_at: NO_KEY_EXPIRY,
      tier: 0,
    })
  })

  it("keeps a key's expiry, variant B's seconds as a time", () => {
    expect(licenceForDisplay({ mode: 'licensed', expires_at: '2027-01-01T00:00:00.000Z' }).expires_at).toBe('2027-01-01T00:00:00.000Z')
    expect(licenceForDisplay({ status: 'active', license_expires_at: 1_798_761_600, days_until_expiry: 30 })).toEqual({
      status: 'active',
      license_expires_at: '2027-01-01T00:00:00.000Z',
      days_until_expiry: 30,
    })
  })
})
