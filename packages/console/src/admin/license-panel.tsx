import { useState } from 'preact/hooks'
import { postJson, RequestError } from '../api.ts'
import { KeyValues } from './key-values.tsx'
import { LoadState, useJson } from './use-json.tsx'

/** The verify answers' reasons start with these words (docs/licensing.md); the card says "not valid" itself. */
const REFUSED_PREFIX = 'license key refused: '

/** Why the service refused a key, in its own words without the prefix the card's sentence replaces. */
const reasonOf = (message: unknown) => (typeof message === 'string' ? message.replace(REFUSED_PREFIX, '') : '')

/**
 * What a verify answer says, in words: valid or not, with the service's reason (A answers 200 with
 * `valid` and `message`; B 200 with `success`, or 402 whose error carries the reason, see
 * `refusalOutcome`). A refused key's reason is what the administrator acts on (another machine,
 * expired, not a Mos key), so it is never dropped.
 */
export function verifyOutcome(answer: Record<string, unknown>): { ok: boolean; text: string } {
  const valid = answer.valid ?? answer.success
  if (valid === false) {
    const reason = reasonOf(answer.message)
    return { ok: false, text: `The key is not valid${reason ? `: ${reason}` : ''}.` }
  }
  // A names the tier; B's document has none, its message does ("license key is valid (tier 2)").
  const bTier = typeof answer.message === 'string' ? /\(tier \d\)/.exec(answer.message)?.[0] : undefined
  const tier = typeof answer.tier === 'string' ? ` (${answer.tier})` : bTier ? ` ${bTier}` : ''
  const activated = answer.activated === true ? ' It is now the licence in force.' : ''
  return { ok: true, text: `The key is valid${tier}.${activated}` }
}

/** What an expiry reads as where no key is in force (the service's `null`: a trial expires never). */
export const NO_KEY_EXPIRY = 'never: a trial without a licence key'

/**
 * The licence document (GET /admin/license, the variant's info document) as the panel shows it: the
 * expiry the service leaves `null` without a key in words, B's Unix seconds as a time, and no
 * `days until expiry` where nothing expires.
 */
export function licenceForDisplay(document: Record<string, unknown>): Record<string, unknown> {
  const shown = { ...document }
  if ('expires_at' in shown && shown.expires_at === null) shown.expires_at = NO_KEY_EXPIRY
  if ('license_expires_at' in shown) {
    const seconds = shown.license_expires_at
    shown.license_expires_at = typeof seconds === 'number' ? new Date(seconds * 1000).toISOString() : NO_KEY_EXPIRY
  }
  if (shown.days_until_expiry === null) delete shown.days_until_expiry
  return shown
}

/** A verify request that failed: B's 402 is a refused key (its error says why); anything else, the request's own failure. */
export function refusalOutcome(failure: Error): { ok: false; text: string } {
  if (failure instanceof RequestError && failure.status === 402)
    return { ok: false, text: `The key is not valid: ${reasonOf(failure.message)}.` }
  return { ok: false, text: `Verification refused: ${failure.message}` }
}

/** The licence in force with trial use, and a form to verify (and, valid, activate) a key. */
export function LicensePanel() {
  const license = useJson<Record<string, unknown>>('/admin/license')
  const [key, setKey] = useState('')
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null)
  const [busy, setBusy] = useState(false)
  const verify = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    try {
      setOutcome(verifyOutcome(await postJson<Record<string, unknown>>('/admin/license/verify', { license_key: key })))
      license.reload()
    } catch (failure) {
      setOutcome(refusalOutcome(failure as Error))
    } finally {
      setBusy(false)
    }
  }
  return (
    <section class="card" aria-labelledby="license-title" data-testid="license">
      <h2 id="license-title">Licence and trial</h2>
      <LoadState loaded={license} what="the licence" />
      {license.data ? <KeyValues value={licenceForDisplay(license.data)} label="Licence state" /> : null}
      <form class="inline-form" onSubmit={verify}>
        <label for="license-key">Licence key to verify</label>
        <input id="license-key" value={key} required onInput={(event) => setKey((event.target as HTMLInputElement).value)} />
        <button type="submit" disabled={busy}>
          {busy ? 'Verifying…' : 'Verify'}
        </button>
      </form>
      {outcome ? (
        <p role="status" class={outcome.ok ? 'ok' : 'error'} data-testid="license-outcome">
          {outcome.text}
        </p>
      ) : null}
    </section>
  )
}
