import { ERROR_TEXTS, TASK_TYPES, IMPLEMENTED_TASK_TYPES } from '@mos/sdk/contract'
import { expectErrorText, expectStatus } from '../assert.ts'
import type { Check } from '../check.ts'
import { OPERATION_PATHS } from '../context.ts'
import { uploadForm } from '../tasks.ts'

/** Variant B, sections 4.6, 4.8 and 7: diagnose and KTX2 are reserved and answer 501. */
const reserved = TASK_TYPES.filter((type) => !IMPLEMENTED_TASK_TYPES.B.includes(type))

export const reservedChecks: Check[] = reserved.flatMap((type): Check[] => {
  const path = OPERATION_PATHS[type]
  const send = async (ctx: Parameters<Check['run']>[0]) => {
    const fixtures = await ctx.fixtures()
    const file = type === 'texture_ktx2' ? fixtures.png : fixtures.small
    return ctx.once(`reserved ${type}`, () => ctx.http.post(path, { form: uploadForm([file], {}) }))
  }
  return [
    {
      id: `reserved.${type}`,
      group: 'reserved',
      title: `POST ${path} answers 501 in variant B`,
      profile: 'core',
      variants: ['B'],
      async run(ctx) {
        expectStatus(await send(ctx), 501)
      },
    },
    {
      id: `reserved.${type}.text`,
      group: 'reserved',
      title: `POST ${path}: the 501 body is {"error": "not implemented: …"} (mos)`,
      profile: 'mos',
      variants: ['B'],
      async run(ctx) {
        expectErrorText(await send(ctx), 501, ERROR_TEXTS.notImplemented(type))
      },
    },
  ]
})
