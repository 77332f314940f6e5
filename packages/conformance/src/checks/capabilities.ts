import {
  ENGINES,
  ERROR_TEXTS,
  MODEL_FORMATS,
  OUTPUT_FORMATS,
  TASK_TYPES,
  VARIANT_SCHEMAS,
  VARIANTS,
  type TaskType,
} from '@mos/sdk/contract'
import { expect, expectErrorText, expectJson, expectSchema, expectStatus } from '../assert.ts'
import type { Check } from '../check.ts'
import { isServed, OPERATION_PATHS } from '../context.ts'

/** Section 2.6 and 4.2: the capabilities document. */
export const capabilitiesChecks: Check[] = [
  {
    id: 'capabilities.document',
    group: 'capabilities',
    title: "GET /capabilities answers the variant's capabilities document",
    profile: 'core',
    variants: VARIANTS,
    async run(ctx) {
      const response = await ctx.http.get('/capabilities')
      expectStatus(response, 200)
      const doc = expectSchema(VARIANT_SCHEMAS[ctx.variant].capabilities, expectJson(response), 'the capabilities document')
      if ('features' in doc) {
        for (const engine of ENGINES) expect(doc.engines.includes(engine), `engines lacks "${engine}"`)
        for (const format of MODEL_FORMATS) expect(doc.formats.includes(format), `formats lacks "${format}"`)
        expect(doc.features.includes('compress'), 'features lacks "compress"')
        return `features: ${doc.features.join(', ')}`
      }
      for (const format of MODEL_FORMATS) expect(doc.formats.input.includes(format), `formats.input lacks "${format}"`)
      for (const format of OUTPUT_FORMATS.B) expect(doc.formats.output.includes(format), `formats.output lacks "${format}"`)
      return `output formats: ${doc.formats.output.join(', ')}`
    },
  },
  {
    id: 'capabilities.features-served',
    group: 'capabilities',
    title: 'Every advertised feature has its submit endpoint',
    profile: 'core',
    variants: ['A'],
    async run(ctx) {
      const features = (await ctx.capabilities())?.features
      expect(Array.isArray(features), 'capabilities.features is not a list')
      for (const feature of features as TaskType[]) {
        if (!TASK_TYPES.includes(feature)) continue
        expect(
          await isServed(ctx, 'POST', OPERATION_PATHS[feature]),
          `"${feature}" is advertised but POST /api/v1${OPERATION_PATHS[feature]} answers 404`,
        )
      }
    },
  },
  {
    id: 'capabilities.no-host-paths',
    group: 'capabilities',
    title: "B engines' binary_path names the encoder build, not a path on the server's disk (mos)",
    profile: 'mos',
    variants: ['B'],
    async run(ctx) {
      const engines = (await ctx.capabilities())?.engines
      expect(engines !== undefined && typeof engines === 'object', 'capabilities.engines is not an object')
      const paths = Object.entries(engines as Record<string, { binary_path?: unknown }>).map(
        ([name, engine]) => [name, engine?.binary_path] as const,
      )
      for (const [name, path] of paths) {
        // A POSIX or Windows absolute path, or an install folder: the server's file system layout, told to every key holder.
        const hostPath = typeof path === 'string' && (/^(\/|[A-Za-z]:[\\/]|\\\\)/.test(path) || path.includes('node_modules'))
        expect(!hostPath, `engines.${name}.binary_path is a host path: ${String(path)}`)
      }
      return paths.map(([name, path]) => `${name}: ${String(path)}`).join(', ')
    },
  },
  {
    id: 'capabilities.requires-key',
    group: 'capabilities',
    title: 'GET /capabilities without a key answers 401 (mos: capabilities are keyed)',
    profile: 'mos',
    variants: VARIANTS,
    async run(ctx) {
      expectErrorText(await ctx.http.get('/capabilities', { key: null }), 401, ERROR_TEXTS.unauthorized())
    },
  },
]
