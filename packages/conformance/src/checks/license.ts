import { ERROR_TEXTS, VARIANT_SCHEMAS, VARIANTS } from '@mos/sdk/contract'
import { expect, expectError, expectErrorText, expectJson, expectSchema, expectStatus } from '../assert.ts'
import type { Check } from '../check.ts'

const needs = { endpoint: 'license' } as const
const BOGUS_KEY = 'CONFORMANCE-NOT-A-LICENSE-0000'

/** Sections 2.7, 4.13 and 4.14: licence documents. */
export const licenseChecks: Check[] = [
  {
    id: 'license.info',
    group: 'license',
    title: "GET /license/info answers the variant's info document",
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const response = await ctx.http.get('/license/info')
      expectStatus(response, 200)
      const info = expectSchema(VARIANT_SCHEMAS[ctx.variant].licenseInfo, expectJson(response), 'the license info document')
      if ('limits' in info) {
        for (const [name, value] of Object.entries(info.limits))
          expect(value === -1 || value > 0, `limits.${name} is ${value}: a positive number or -1 (unlimited)`)
        // Masked: only the final characters may show.
        const key = info.license_key
        if (key !== '')
          expect(
            /^[*•#xX.\-\s]{3,}.{0,8}$/.test(key),
            `license_key ${JSON.stringify(key)} is not masked (at most the final 8 characters may show)`,
          )
        expect(
          info.trial.used_files <= info.trial.max_files || info.trial.max_files === -1,
          `trial.used_files ${info.trial.used_files} exceeds max_files ${info.trial.max_files}`,
        )
        return `mode ${info.mode}, tier ${info.tier}`
      }
      return `tier ${info.tier}, status ${info.status}`
    },
  },
  {
    id: 'license.capabilities-agree',
    group: 'license',
    title: 'Variant B: capabilities.license says what /license/info says (authorized, tier, status) (mos)',
    profile: 'mos',
    variants: ['B'],
    needs,
    async run(ctx) {
      const info = (await ctx.http.get('/license/info')).json() as Record<string, unknown> | undefined
      const license = (await ctx.capabilities())?.license as Record<string, unknown> | undefined
      for (const field of ['authorized', 'tier', 'status']) {
        expect(
          license?.[field] === info?.[field],
          `capabilities.license.${field} is ${JSON.stringify(license?.[field])}, /license/info says ${JSON.stringify(info?.[field])}`,
        )
      }
    },
  },
  {
    id: 'license.verify.invalid',
    group: 'license',
    title: 'POST /license/verify with a key that is no licence: A answers valid=false; B success=false or 402',
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const response = await ctx.http.post('/license/verify', { json: { license_key: BOGUS_KEY } })
      if (ctx.variant === 'B' && response.status === 402) {
        expectError(response, 402)
        return 'answered 402'
      }
      expectStatus(response, 200)
      const verify = expectSchema(VARIANT_SCHEMAS[ctx.variant].licenseVerify, expectJson(response), 'the verify response')
      if ('valid' in verify) expect(verify.valid === false, 'a made-up key verified as valid')
      else expect(verify.success === false, 'a made-up key verified with success')
    },
  },
  {
    id: 'license.verify.missing-key',
    group: 'license',
    title: 'POST /license/verify without license_key answers 400 "missing required field: license_key"',
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      expectErrorText(await ctx.http.post('/license/verify', { json: {} }), 400, ERROR_TEXTS.missingField('license_key'))
    },
  },
  {
    id: 'license.verify.malformed',
    group: 'license',
    title: 'POST /license/verify with a body that is not JSON answers 400 "malformed request: …" (mos)',
    profile: 'mos',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const response = await ctx.http.post('/license/verify', { body: { bytes: '{"license_key": ', contentType: 'application/json' } })
      expectErrorText(response, 400, /^malformed request: /)
    },
  },
]
