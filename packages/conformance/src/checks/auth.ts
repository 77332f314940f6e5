import { ERROR_TEXTS, IMPLEMENTED_TASK_TYPES, VARIANTS, type Variant } from '@mos/sdk/contract'
import { expectErrorText } from '../assert.ts'
import type { Check, CheckNeeds, Profile } from '../check.ts'
import type { RunContext } from '../context.ts'
import type { HttpResponse, RequestOptions } from '../http.ts'
import { uploadForm } from '../tasks.ts'

interface KeyedEndpoint {
  name: string
  profile: Profile
  variants: readonly Variant[]
  needs?: CheckNeeds
  send(ctx: RunContext, key: RequestOptions['key']): Promise<HttpResponse>
}

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'

/** A valid submission (only the key varies), so a 401 can only come from the key. */
function submitEndpoint(
  name: string,
  path: string,
  fields: Record<string, string>,
  file: 'small' | 'png',
  type: (typeof IMPLEMENTED_TASK_TYPES)['A'][number],
  fileField = 'file',
): KeyedEndpoint {
  return {
    name,
    profile: 'core',
    variants: VARIANTS.filter((v) => IMPLEMENTED_TASK_TYPES[v].includes(type)),
    needs: { feature: type },
    async send(ctx, key) {
      const fixtures = await ctx.fixtures()
      return ctx.http.post(path, { key, form: uploadForm([fixtures[file]], fields, { fileField }) })
    },
  }
}

/** Section 5: every business endpoint wants X-API-Key. Contract-keyed ones are core; the rest mos. */
const KEYED: KeyedEndpoint[] = [
  submitEndpoint('compress', '/compress', { engine: 'draco' }, 'small', 'compress'),
  submitEndpoint('convert', '/convert', { target_format: 'obj' }, 'small', 'convert'),
  submitEndpoint('repair', '/repair', {}, 'small', 'repair'),
  submitEndpoint('diagnose', '/diagnose', {}, 'small', 'diagnose'),
  submitEndpoint('textures-optimize', '/textures/optimize', { format: 'webp' }, 'png', 'texture_optimize'),
  submitEndpoint('textures-ktx2', '/textures/ktx2', {}, 'png', 'texture_ktx2'),
  {
    ...submitEndpoint('batch-compress', '/batch/compress', { engine: 'draco' }, 'small', 'compress', 'files'),
    needs: { endpoint: 'batch' },
  },
  { name: 'task', profile: 'core', variants: VARIANTS, send: (ctx, key) => ctx.http.get(`/tasks/${UNKNOWN_ID}`, { key }) },
  { name: 'download', profile: 'core', variants: VARIANTS, send: (ctx, key) => ctx.http.get(`/tasks/${UNKNOWN_ID}/download`, { key }) },
  {
    name: 'batch',
    profile: 'core',
    variants: VARIANTS,
    needs: { endpoint: 'batch' },
    send: (ctx, key) => ctx.http.get(`/batch/${UNKNOWN_ID}`, { key }),
  },
  {
    name: 'license-info',
    profile: 'mos',
    variants: VARIANTS,
    needs: { endpoint: 'license' },
    send: (ctx, key) => ctx.http.get('/license/info', { key }),
  },
  {
    name: 'license-verify',
    profile: 'mos',
    variants: VARIANTS,
    needs: { endpoint: 'license' },
    send: (ctx, key) => ctx.http.post('/license/verify', { key, json: { license_key: 'conformance-check' } }),
  },
  {
    name: 'metrics',
    profile: 'mos',
    variants: VARIANTS,
    needs: { endpoint: 'metrics' },
    send: (ctx, key) => ctx.http.get('/metrics', { key }),
  },
]

const WRONG_KEY = 'conformance-wrong-key-0000'

export const authChecks: Check[] = KEYED.flatMap((endpoint): Check[] => [
  {
    id: `auth.missing-key.${endpoint.name}`,
    group: 'auth',
    title: `${endpoint.name}: no X-API-Key answers 401 with the contract's text`,
    profile: endpoint.profile,
    variants: endpoint.variants,
    ...(endpoint.needs ? { needs: endpoint.needs } : {}),
    async run(ctx) {
      expectErrorText(await endpoint.send(ctx, null), 401, ERROR_TEXTS.unauthorized())
    },
  },
  {
    id: `auth.wrong-key.${endpoint.name}`,
    group: 'auth',
    title: `${endpoint.name}: a wrong X-API-Key answers 401 with the contract's text`,
    profile: endpoint.profile,
    variants: endpoint.variants,
    ...(endpoint.needs ? { needs: endpoint.needs } : {}),
    async run(ctx) {
      expectErrorText(await endpoint.send(ctx, WRONG_KEY), 401, ERROR_TEXTS.unauthorized())
    },
  },
]).concat([
  {
    id: 'auth.before-validation',
    group: 'auth',
    title: 'A keyless request with an invalid body still answers 401 (mos: the key is checked first)',
    profile: 'mos',
    variants: VARIANTS,
    async run(ctx) {
      expectErrorText(await ctx.http.post('/compress', { key: null, form: new FormData() }), 401, ERROR_TEXTS.unauthorized())
    },
  },
])

export { UNKNOWN_ID }
