import { describe, expect, it } from 'vitest'
import { RequestError } from '../src/api.ts'
import { refusalOutcome, verifyOutcome } from '../src/admin/license-panel.tsx'

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
