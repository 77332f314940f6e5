import { VARIANTS } from '@mos/sdk/contract'
import { expect } from '../assert.ts'
import type { Check, CheckNeeds } from '../check.ts'
import type { RunContext } from '../context.ts'
import type { RequestOptions } from '../http.ts'
import { UNKNOWN_ID } from './auth.ts'
import { smallMeshopt } from './compress.ts'

/** A GET route of the contract, and what it needs to be there. */
interface GetRoute {
  name: string
  path: (ctx: RunContext) => Promise<string>
  options?: RequestOptions
  needs?: CheckNeeds
  /** The body is the same from one request to the next (not health's uptime, the licence's trial count, metrics). */
  stable?: boolean
}

const fixed = (path: string) => async () => path
const completedId = async (ctx: RunContext) => (await smallMeshopt(ctx)).id

const ROUTES: GetRoute[] = [
  { name: 'health', path: fixed('/health'), options: { key: null } },
  { name: 'capabilities', path: fixed('/capabilities'), stable: true },
  { name: 'task', path: async (ctx) => `/tasks/${await completedId(ctx)}`, needs: { feature: 'compress' }, stable: true },
  { name: 'download', path: async (ctx) => `/tasks/${await completedId(ctx)}/download`, needs: { feature: 'compress' }, stable: true },
  { name: 'task-unknown', path: fixed(`/tasks/${UNKNOWN_ID}`), stable: true },
  { name: 'batch-unknown', path: fixed(`/batch/${UNKNOWN_ID}`), needs: { endpoint: 'batch' }, stable: true },
  { name: 'license-info', path: fixed('/license/info'), needs: { endpoint: 'license' } },
  { name: 'metrics', path: fixed('/metrics'), needs: { endpoint: 'metrics' } },
]

/**
 * HEAD where GET is served: GET's status and Content-Type, no body, and a Content-Length, where
 * one is sent and the body does not change between requests, equal to GET's body (RFC 9110 §9.3.2, §8.6). RFC 9110 §9.1 has every general-purpose
 * server support HEAD, but the contract names GET alone, so these are mos (docs/api.md decides it).
 */
export const headChecks: Check[] = ROUTES.map((route) => ({
  id: `head.${route.name}`,
  group: 'head',
  title: `HEAD of the GET ${route.name} route answers GET's status and Content-Type with no body (mos)`,
  profile: 'mos',
  variants: VARIANTS,
  ...(route.needs ? { needs: route.needs } : {}),
  async run(ctx) {
    const path = await route.path(ctx)
    const get = await ctx.http.get(path, route.options)
    const head = await ctx.http.request('HEAD', path, route.options)
    expect(head.status === get.status, `HEAD ${path} answered ${head.status} where GET answered ${get.status}`)
    expect(head.bytes.byteLength === 0, `HEAD ${path} sent a body of ${head.bytes.byteLength} bytes`)
    const type = (response: typeof get) => response.headers.get('content-type')
    expect(type(head) === type(get), `HEAD ${path} has Content-Type ${type(head)} where GET has ${type(get)}`)
    const length = head.headers.get('content-length')
    expect(
      !route.stable || length === null || Number(length) === get.bytes.byteLength,
      `HEAD ${path} has Content-Length ${length} where GET's body is ${get.bytes.byteLength} bytes`,
    )
    return `${get.status}`
  },
}))
