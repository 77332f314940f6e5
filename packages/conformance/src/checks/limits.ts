import { ERROR_TEXTS, LIMIT_EXCEEDED_STATUS, VARIANTS } from '@mos/sdk/contract'
import { describeResponse, expect, expectErrorText } from '../assert.ts'
import { fail, type Check } from '../check.ts'
import type { RunContext } from '../context.ts'
import type { HttpResponse } from '../http.ts'
import { submit } from '../tasks.ts'
import { UNKNOWN_ID } from './auth.ts'

const MB = 1024 * 1024

/**
 * Keyed requests in a row until the first 429 (at most limit + 2), once per run; how many were
 * answered before it, counted from the last window roll-over the deployment announced.
 */
function burst(ctx: RunContext): Promise<{ accepted: number; response: HttpResponse }> {
  return ctx.once('rate-limit burst', async () => {
    const limit = ctx.settings.rateLimit!
    let accepted = 0
    let window: string | null = null
    for (let i = 0; i < limit + 2; i++) {
      const response = await ctx.http.get(`/tasks/${UNKNOWN_ID}`, { waitOn429: false })
      if (response.status === 429) return { accepted, response }
      const reset = response.headers.get('x-ratelimit-reset')
      if (reset !== window) {
        if (window !== null) accepted = 0
        window = reset
      }
      accepted++
    }
    fail(
      `no 429 after ${limit + 2} requests in a row (last: ${describeResponse(await ctx.http.get(`/tasks/${UNKNOWN_ID}`, { waitOn429: false }))})`,
    )
  })
}

/** Sections 2.8, 7 and 8: the plan's size limit and the per-key rate limit, given by flags. */
export const limitChecks: Check[] = [
  {
    id: 'limits.file-size',
    group: 'limits',
    title: 'An upload just over max_file_size_mb is refused: 413 (A) / 402 (B), "file size <n>MB exceeds limit of <m>MB …"',
    profile: 'core',
    variants: VARIANTS,
    needs: { feature: 'compress', setting: 'maxFileSizeMb' },
    async run(ctx) {
      const limit = ctx.settings.maxFileSizeMb!
      const bytes = new Uint8Array(limit * MB + 64 * 1024)
      const response = await submit(ctx, '/compress', { engine: 'draco' }, [{ name: 'conformance-oversize.glb', bytes }])
      const pattern = new RegExp(`^file size (\\d+(?:\\.\\d+)?)MB exceeds limit of ${limit}MB for current license tier$`)
      expectErrorText(response, LIMIT_EXCEEDED_STATUS[ctx.variant], pattern)
      const reported = Number(pattern.exec((response.json() as { error: string }).error)![1])
      expect(reported >= limit, `the text reports ${reported}MB for a file of ${(bytes.byteLength / MB).toFixed(2)}MB`)
    },
  },
  {
    id: 'limits.rate-headers',
    group: 'limits',
    title: 'Every keyed answer carries X-RateLimit-Limit, -Remaining and -Reset, not only the 429 (mos)',
    profile: 'mos',
    variants: ['A'],
    async run(ctx) {
      const response = await ctx.http.get(`/tasks/${UNKNOWN_ID}`)
      const limit = response.headers.get('x-ratelimit-limit')
      const remaining = response.headers.get('x-ratelimit-remaining')
      const reset = response.headers.get('x-ratelimit-reset')
      expect(
        [limit, remaining, reset].every((value) => value !== null && /^\d+$/.test(value)),
        `rate-limit headers: Limit ${limit}, Remaining ${remaining}, Reset ${reset}`,
      )
      expect(
        Number(remaining) < Number(limit),
        `X-RateLimit-Remaining ${remaining} is not below X-RateLimit-Limit ${limit} after a request`,
      )
    },
  },
  {
    id: 'limits.rate',
    group: 'limits',
    title: 'More than rate-limit requests a minute answer 429 with the text and X-RateLimit-Limit/Remaining/Reset',
    profile: 'core',
    variants: ['A'],
    needs: { setting: 'rateLimit' },
    last: true,
    async run(ctx) {
      const limit = ctx.settings.rateLimit!
      const { accepted, response } = await burst(ctx)
      expect(accepted <= limit, `${accepted} requests were answered before the 429, the limit is ${limit}`)
      expectErrorText(response, 429, ERROR_TEXTS.rateLimited(limit))
      const header = (name: string) => response.headers.get(name)
      expect(header('x-ratelimit-limit') === String(limit), `X-RateLimit-Limit is ${header('x-ratelimit-limit')}, expected ${limit}`)
      expect(header('x-ratelimit-remaining') === '0', `X-RateLimit-Remaining is ${header('x-ratelimit-remaining')}, expected 0`)
      const reset = header('x-ratelimit-reset') ?? ''
      expect(/^\d+$/.test(reset), `X-RateLimit-Reset is ${JSON.stringify(reset)}, not an integer timestamp`)
      const resetMs = Number(reset) > 1e12 ? Number(reset) : Number(reset) * 1000
      expect(
        resetMs > Date.now() - 5000 && resetMs <= Date.now() + 61_000 + 5000,
        `X-RateLimit-Reset ${reset} is not an instant within the next minute`,
      )
      return `429 after ${accepted} requests`
    },
  },
  {
    id: 'limits.rate.retry-after',
    group: 'limits',
    title: 'The 429 carries Retry-After in whole seconds, at most a minute (mos)',
    profile: 'mos',
    variants: ['A'],
    needs: { setting: 'rateLimit' },
    last: true,
    async run(ctx) {
      const retryAfter = (await burst(ctx)).response.headers.get('retry-after') ?? ''
      expect(/^\d+$/.test(retryAfter) && Number(retryAfter) <= 61, `Retry-After is ${JSON.stringify(retryAfter)}`)
    },
  },
]
