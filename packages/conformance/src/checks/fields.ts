import {
  batchCompressFieldSpecs,
  compressFieldSpecs,
  conditionValues,
  convertFieldSpecs,
  describeCondition,
  describeRule,
  ERROR_TEXTS,
  IMPLEMENTED_TASK_TYPES,
  OPERATION_ENDPOINTS,
  submitResponseSchema,
  textureKtx2FieldSpecs,
  textureOptimizeFieldSpecs,
  VARIANTS,
  type FieldSpec,
  type TaskType,
  type Variant,
} from '@mos/sdk/contract'
import { expect, expectError, expectErrorText, expectJson, expectSchema, expectStatus } from '../assert.ts'
import type { Check, CheckNeeds, Profile } from '../check.ts'
import { compressionAsked, expectCompressedGlb } from '../inspect/compressed.ts'
import type { RunContext } from '../context.ts'
import type { Fixture, Fixtures } from '../fixtures/index.ts'
import { download, uploadForm, waitForTask, type Fields } from '../tasks.ts'

/** One submit endpoint's form rules, as the contract's field specs give them. */
interface FormRules {
  /** Check id prefix. */
  name: string
  path: string
  type: TaskType
  needs: CheckNeeds
  fileField: string
  file: keyof Pick<Fixtures, 'small' | 'png'>
  /** Fields that make the request valid; each case changes one of them. */
  valid: Fields
  specs: (variant: Variant) => readonly FieldSpec[]
  /**
   * Accept one value of each Mos extension field, not each value and bound: where another endpoint's
   * checks accept them all through the same specs, and this one only passes the fields on.
   */
  acceptExtensionsOnce?: boolean
}

/**
 * A task operation's form rules: its path and type come from the contract's endpoint list, so a
 * rule names only what it checks (which fixture, which valid fields, which specs).
 */
function operationRules(type: TaskType, name: string, rest: Pick<FormRules, 'file' | 'valid' | 'specs'>): FormRules {
  const endpoint = OPERATION_ENDPOINTS.find((e) => e.type === type)!
  return { name, path: endpoint.path, type, needs: { feature: type }, fileField: 'file', ...rest }
}

const RULES: FormRules[] = [
  operationRules('compress', 'compress', { file: 'small', valid: { engine: 'draco' }, specs: compressFieldSpecs }),
  operationRules('convert', 'convert', { file: 'small', valid: { target_format: 'glb' }, specs: () => convertFieldSpecs() }),
  operationRules('repair', 'repair', { file: 'small', valid: {}, specs: () => [] }),
  operationRules('diagnose', 'diagnose', { file: 'small', valid: {}, specs: () => [] }),
  operationRules('texture_optimize', 'textures-optimize', {
    file: 'png',
    valid: { format: 'webp' },
    specs: () => textureOptimizeFieldSpecs('webp'),
  }),
  operationRules('texture_optimize', 'textures-optimize-png', {
    file: 'png',
    valid: { format: 'png' },
    specs: () => textureOptimizeFieldSpecs('png').slice(1),
  }),
  operationRules('texture_ktx2', 'textures-ktx2', { file: 'png', valid: {}, specs: () => textureKtx2FieldSpecs(false) }),
  operationRules('texture_ktx2', 'textures-ktx2-uastc', {
    file: 'png',
    valid: { uastc: 'true' },
    specs: () => textureKtx2FieldSpecs(true).slice(1),
  }),
  {
    name: 'batch',
    path: '/batch/compress',
    type: 'compress',
    needs: { endpoint: 'batch' },
    fileField: 'files',
    file: 'small',
    valid: { engine: 'draco' },
    specs: batchCompressFieldSpecs,
    // Every accepted case is a task, and a fresh unlicensed deployment processes 100 files: compress's
    // checks accept each value and bound of the extension fields (the same specs), so the batch's
    // show that it passes each on with one (a run of the mos profile stays inside the trial).
    acceptExtensionsOnce: true,
  },
]

/** Ranges the contract leaves "not shown"; the service documents its own (docs/api.md): mos profile. */
const UNSTATED_RANGES = new Set([
  'normal_quantization_bits',
  'texcoord_quantization_bits',
  'color_quantization_bits',
  'generic_quantization_bits',
])

interface Case {
  id: string
  /** Profile of the status check (default core). */
  profile?: Profile
  title: string
  fields: Fields
  /** How the form departs from the fields and one file: no file part, a 0-byte one, a second one, the first field twice. */
  form?: 'no-file' | 'empty-file' | 'file-twice' | 'field-twice'
  filename?: string
  /** Expected: accepted (200 pending), or refused with 400 and this text. */
  expect: { accepted: true } | { accepted: false; text: string; textProfile: Profile }
}

/** Fields made valid for a spec's condition (e.g. engine=meshopt for the meshopt level, texture_format=jpeg for its quality). */
function fieldsFor(rules: FormRules, spec: FieldSpec): Fields {
  if (spec.onlyWith) return { ...rules.valid, [spec.onlyWith.field]: conditionValues(spec.onlyWith)[0]! }
  return { ...rules.valid }
}

/** The cases every form has, whatever its fields: no file part, and a file of an unknown format. */
function fileCases(rules: FormRules): Case[] {
  return [
    {
      id: 'missing.file',
      title: 'no file part',
      fields: rules.valid,
      form: 'no-file',
      expect: { accepted: false, text: ERROR_TEXTS.missingField(rules.fileField), textProfile: 'core' },
    },
    {
      id: 'unsupported-extension',
      title: 'a file with an unsupported extension (.xyz)',
      fields: rules.valid,
      filename: 'conformance.xyz',
      expect: { accepted: false, text: ERROR_TEXTS.unsupportedFormat('xyz'), textProfile: 'core' },
    },
    ...ambiguousFormCases(rules),
  ]
}

/**
 * Forms the contract does not rule on, refused as docs/api.md decides (mos): a 0-byte file is
 * missing, not a task that fails; a field or a single-file route's file given twice is ambiguous.
 */
function ambiguousFormCases(rules: FormRules): Case[] {
  const twice = ERROR_TEXTS.invalidField
  const refused = (text: string) => ({ accepted: false as const, text, textProfile: 'mos' as const })
  const [field] = Object.keys(rules.valid)
  return [
    {
      id: 'empty-file',
      profile: 'mos',
      title: `a ${rules.fileField} part of 0 bytes`,
      fields: rules.valid,
      form: 'empty-file',
      expect: refused(ERROR_TEXTS.missingField(rules.fileField)),
    },
    // A batch's files repeat by design.
    ...(rules.fileField === 'file'
      ? [
          {
            id: 'file-twice',
            profile: 'mos' as const,
            title: 'a second file part',
            fields: rules.valid,
            form: 'file-twice' as const,
            expect: refused(twice('file', 'given more than once')),
          },
        ]
      : []),
    ...(field
      ? [
          {
            id: 'field-twice',
            profile: 'mos' as const,
            title: `${field} given twice (the same value)`,
            fields: rules.valid,
            form: 'field-twice' as const,
            expect: refused(twice(field, 'given more than once')),
          },
        ]
      : []),
  ]
}

/** A case that sends `base` with the spec's field set to `value`, expecting it refused with `text`. */
function refusedCase(
  spec: FieldSpec,
  base: Fields,
  id: string,
  title: string,
  value: string | number,
  text = ERROR_TEXTS.invalidField(spec.name, describeRule(spec)),
  profile: Profile = 'core',
): Case {
  return {
    id: `field.${spec.name}.${id}`,
    profile,
    title: `${spec.name}=${value} (${title})`,
    fields: { ...base, [spec.name]: value },
    expect: { accepted: false, text, textProfile: 'mos' },
  }
}

/** A case that sends `base` with the spec's field set to `value`, expecting it accepted. */
function acceptedCase(spec: FieldSpec, base: Fields, id: string, value: string | number, profile: Profile = 'core'): Case {
  return {
    id: `field.${spec.name}.${id}`,
    profile,
    title: `${spec.name}=${value} is accepted`,
    fields: { ...base, [spec.name]: value },
    expect: { accepted: true },
  }
}

/** A required field left out of otherwise valid fields. */
function missingCase(spec: FieldSpec, base: Fields): Case {
  const fields = { ...base }
  delete fields[spec.name]
  return {
    id: `missing.${spec.name}`,
    title: `no ${spec.name}`,
    fields,
    expect: { accepted: false, text: ERROR_TEXTS.missingField(spec.name), textProfile: 'core' },
  }
}

/** Values just outside the spec's rule (refused) and on its bounds or in its list (accepted). */
function valueCases(spec: FieldSpec, base: Fields): Case[] {
  const refuse = (id: string, title: string, value: string | number, text?: string, profile?: Profile) =>
    refusedCase(spec, base, id, title, value, text, profile)
  const accept = (id: string, value: string | number, profile?: Profile) => acceptedCase(spec, base, id, value, profile)
  switch (spec.kind) {
    case 'integer': {
      const rangeProfile: Profile = UNSTATED_RANGES.has(spec.name) ? 'mos' : 'core'
      return [
        refuse('below-min', `below ${spec.min}`, spec.min - 1, undefined, rangeProfile),
        refuse('above-max', `above ${spec.max}`, spec.max + 1, undefined, rangeProfile),
        refuse('fraction', 'not an integer', spec.min + 0.5),
        refuse('not-a-number', 'not a number', 'seven'),
        accept('accepts-min', spec.min, rangeProfile),
        accept('accepts-max', spec.max, rangeProfile),
      ]
    }
    case 'number':
      return [
        refuse(
          spec.minExclusive ? 'at-min' : 'below-min',
          `${spec.minExclusive ? 'at' : 'below'} ${spec.min}`,
          spec.minExclusive ? spec.min : spec.min - 1,
        ),
        refuse('above-max', `above ${spec.max}`, spec.max + 1),
        refuse('not-a-number', 'not a number', 'seven'),
        accept('accepts-max', spec.max),
      ]
    case 'enum':
      return [
        refuse(
          'unknown',
          'not an allowed value',
          'conformance-bogus',
          spec.unsupportedFormatError ? ERROR_TEXTS.unsupportedFormat('conformance-bogus') : undefined,
        ),
        ...(spec.unsupportedFormatError ? [] : spec.values.map((value) => accept(`accepts-${value}`, value))),
      ]
    case 'boolean':
      return [refuse('not-a-boolean', 'not a boolean', 'maybe')]
  }
}

/**
 * A field that applies only with some values of another field, sent with a value outside them (the
 * other engine; a texture_format it does not apply to): refused (mos wording).
 */
function onlyWithCases(rules: FormRules, spec: FieldSpec, specs: readonly FieldSpec[]): Case[] {
  if (!spec.onlyWith) return []
  const condition = spec.onlyWith
  const other = specs.find((candidate) => candidate.name === condition.field)
  const outside = other?.kind === 'enum' ? other.values.find((value) => !conditionValues(condition).includes(value)) : undefined
  if (!outside) return []
  const value = spec.kind === 'enum' ? spec.values[0]! : spec.kind === 'boolean' ? 'true' : spec.max
  return [
    {
      id: `field.${spec.name}.only-with-${conditionValues(condition).join('-')}`,
      profile: 'mos',
      title: `${spec.name} with ${condition.field}=${outside}`,
      fields: { ...rules.valid, [condition.field]: outside, [spec.name]: value },
      expect: {
        accepted: false,
        text: ERROR_TEXTS.invalidField(spec.name, `applies only when ${describeCondition(condition)}`),
        textProfile: 'mos',
      },
    },
  ]
}

/** Every case of one field spec, in the order the checks list them. */
function specCases(rules: FormRules, spec: FieldSpec, specs: readonly FieldSpec[]): Case[] {
  const base = fieldsFor(rules, spec)
  const values = valueCases(spec, base)
  const accepted = values.filter((c) => c.expect.accepted)
  const kept = rules.acceptExtensionsOnce && spec.extension ? values.filter((c) => !c.expect.accepted || c === accepted[0]) : values
  const cases = [...(spec.required ? [missingCase(spec, base)] : []), ...kept, ...onlyWithCases(rules, spec, specs)]
  // A Mos extension field is not in the published interface: another deployment need not have it.
  if (spec.extension) for (const c of cases) c.profile = 'mos'
  return cases
}

function casesOf(rules: FormRules, variant: Variant): Case[] {
  const specs = rules.specs(variant)
  return [...fileCases(rules), ...specs.flatMap((spec) => specCases(rules, spec, specs))]
}

async function send(ctx: RunContext, rules: FormRules, c: Case) {
  return ctx.once(`fields ${rules.name} ${c.id}`, async () => {
    const fixtures = await ctx.fixtures()
    const file = fixtures[rules.file]
    const files: Fixture[] =
      c.form === 'no-file'
        ? []
        : c.form === 'empty-file'
          ? [{ ...file, bytes: new Uint8Array(0) }]
          : c.form === 'file-twice'
            ? [file, file]
            : [file]
    const form = uploadForm(files, c.fields, { fileField: rules.fileField, ...(c.filename ? { filename: c.filename } : {}) })
    const [name, value] = Object.entries(c.fields)[0] ?? []
    if (c.form === 'field-twice' && name !== undefined) form.append(name, String(value))
    return ctx.http.post(rules.path, { form })
  })
}

/**
 * Section 4 and 7, generated from the contract's field specs: each missing required field and each
 * bad value answers 400 with an error body (exact texts: core where the contract gives the pattern,
 * mos otherwise); boundary values are accepted.
 */
export const fieldChecks: Check[] = RULES.flatMap((rules) => {
  const variants = VARIANTS.filter((v) => rules.needs.endpoint || IMPLEMENTED_TASK_TYPES[v].includes(rules.type))
  // Cases differ per variant only through the specs (compress level); build them per variant.
  return variants.flatMap((variant) =>
    casesOf(rules, variant).flatMap((c): Check[] => {
      const id = `${rules.name}.${c.id}`
      const common = { group: `fields.${rules.name}`, variants: [variant], needs: rules.needs }
      if (c.expect.accepted) {
        return [
          {
            ...common,
            id,
            profile: c.profile ?? 'core',
            title: `${rules.path}: ${c.title} (the task completes)`,
            async run(ctx) {
              const response = await send(ctx, rules, c)
              expectStatus(response, 200)
              if (rules.fileField !== 'file') return
              const { task_id: id } = expectSchema(submitResponseSchema, expectJson(response), `the ${rules.path} response`)
              // Accepted must also mean done: the task completes, and a compress result is compressed.
              const run = await waitForTask(ctx, id, rules.type)
              expect(run.final.status === 'completed', `the task ended ${run.final.status}: ${JSON.stringify(run.final.error)}`)
              if (rules.type === 'compress' && c.fields.level !== 0) {
                await expectCompressedGlb((await download(ctx, id)).bytes, compressionAsked(c.fields))
              }
            },
          },
        ]
      }
      const { text, textProfile } = c.expect
      const checks: Check[] = [
        {
          ...common,
          id,
          profile: c.profile ?? 'core',
          title: `${rules.path}: ${c.title} answers 400 with an error body`,
          async run(ctx) {
            expectError(await send(ctx, rules, c), 400)
          },
        },
        {
          ...common,
          id: `${id}.text`,
          profile: textProfile,
          title: `${rules.path}: ${c.title}: the text is "${text}"`,
          async run(ctx) {
            expectErrorText(await send(ctx, rules, c), 400, text)
          },
        },
      ]
      return checks
    }),
  )
})
