import { VARIANT_SCHEMAS, VARIANTS } from '@mos/sdk/contract'
import { expectJson, expectSchema, expectStatus } from '../assert.ts'
import type { Check } from '../check.ts'

/** Section 2.5 and 4.1: the health document, served without a key. */
export const healthChecks: Check[] = [
  {
    id: 'health.document',
    group: 'health',
    title: "GET /health answers 200 without a key, with the variant's health document",
    profile: 'core',
    variants: VARIANTS,
    async run(ctx) {
      const response = await ctx.http.get('/health', { key: null })
      expectStatus(response, 200)
      expectSchema(VARIANT_SCHEMAS[ctx.variant].health, expectJson(response), 'the health document')
    },
  },
  {
    id: 'health.with-key',
    group: 'health',
    title: 'GET /health also answers 200 when a key is sent',
    profile: 'core',
    variants: VARIANTS,
    async run(ctx) {
      const response = await ctx.http.get('/health')
      expectStatus(response, 200)
      expectSchema(VARIANT_SCHEMAS[ctx.variant].health, expectJson(response), 'the health document')
    },
  },
]
