import { API_PREFIX, ERROR_TEXTS, VARIANTS } from '@mos/sdk/contract'
import { expectError, expectErrorText } from '../assert.ts'
import type { Check, CheckNeeds } from '../check.ts'
import type { RunContext } from '../context.ts'
import type { HttpResponse } from '../http.ts'
import { UNKNOWN_ID } from './auth.ts'

const ask = (ctx: RunContext, path: string) => ctx.once(`GET ${path}`, () => ctx.http.get(path))

function notFound(id: string, title: string, path: string, text: string, needs?: CheckNeeds): Check[] {
  const base = { group: 'not-found', variants: VARIANTS, ...(needs ? { needs } : {}) }
  return [
    {
      ...base,
      id,
      title: `${title} answers 404 with an error body`,
      profile: 'core',
      async run(ctx) {
        expectError(await ask(ctx, path), 404)
      },
    },
    {
      ...base,
      id: `${id}.text`,
      title: `${title}: the 404 text is "${text}" (mos)`,
      profile: 'mos',
      async run(ctx) {
        expectErrorText(await ask(ctx, path), 404, text)
      },
    },
  ]
}

/** Sections 4.9, 4.12 and 7: unknown ids answer 404. */
export const notFoundChecks: Check[] = [
  ...notFound('not-found.task', 'GET /tasks/{unknown id}', `/tasks/${UNKNOWN_ID}`, ERROR_TEXTS.taskNotFound(UNKNOWN_ID)),
  ...notFound(
    'not-found.download',
    'GET /tasks/{unknown id}/download',
    `/tasks/${UNKNOWN_ID}/download`,
    ERROR_TEXTS.taskNotFound(UNKNOWN_ID),
  ),
  ...notFound('not-found.batch', 'GET /batch/{unknown id}', `/batch/${UNKNOWN_ID}`, ERROR_TEXTS.batchNotFound(UNKNOWN_ID), {
    endpoint: 'batch',
  }),
  {
    id: 'not-found.route',
    group: 'not-found',
    title: 'An unknown path under /api/v1 answers 404 "not found: <path>" (mos)',
    profile: 'mos',
    variants: VARIANTS,
    async run(ctx) {
      const response: HttpResponse = await ctx.http.get('/conformance-no-such-route')
      expectErrorText(response, 404, ERROR_TEXTS.routeNotFound(`${API_PREFIX}/conformance-no-such-route`))
    },
  },
]
