import type { Variant } from '@mos/sdk/contract'
import { VARIANTS } from '@mos/sdk/contract'
import { describeResponse, expect, expectStatus } from '../assert.ts'
import { fail, type Check } from '../check.ts'
import type { RunContext } from '../context.ts'
import { familySamples, parseExposition, type Exposition } from '../inspect/prometheus.ts'
import { heavyDraco } from './compress.ts'

/** Section 4.15: the metric families of each variant; distributions must be histograms or summaries. */
export const METRIC_FAMILIES: Record<Variant, { name: string; distribution?: boolean }[]> = {
  A: [
    { name: 'service_tasks_total' },
    { name: 'service_task_duration_seconds', distribution: true },
    { name: 'service_files_processed_total' },
    { name: 'service_compression_ratio', distribution: true },
    { name: 'service_active_tasks_gauge' },
  ],
  B: [
    { name: 'service_requests_total' },
    { name: 'service_active_tasks' },
    { name: 'service_queue_length' },
    { name: 'service_task_processing_duration_seconds', distribution: true },
    { name: 'service_tasks_completed_total' },
    { name: 'service_tasks_failed_total' },
    { name: 'service_errors_total' },
  ],
}

async function scrape(ctx: RunContext): Promise<Exposition> {
  const response = await ctx.http.get('/metrics')
  expectStatus(response, 200)
  const type = response.headers.get('content-type') ?? ''
  expect(/^(text\/plain|application\/openmetrics-text)\b/i.test(type), `Content-Type is "${type}", not the Prometheus text format`)
  try {
    return parseExposition(response.text())
  } catch (error) {
    fail(`the metrics are not in the Prometheus text format: ${(error as Error).message} (${describeResponse(response)})`)
  }
}

const needs = { endpoint: 'metrics' } as const

export const metricsChecks: Check[] = [
  {
    id: 'metrics.format',
    group: 'metrics',
    title: 'GET /metrics answers the Prometheus text format',
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const exposition = await scrape(ctx)
      expect(exposition.samples.length > 0, 'no sample at all')
    },
  },
  {
    id: 'metrics.families',
    group: 'metrics',
    title: 'Every metric family of the variant is exposed; distributions as histograms or summaries',
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const exposition = await scrape(ctx)
      const missing: string[] = []
      for (const family of METRIC_FAMILIES[ctx.variant]) {
        const samples = familySamples(exposition, family.name)
        if (samples.length === 0 && !exposition.types.has(family.name)) {
          missing.push(family.name)
          continue
        }
        if (family.distribution) {
          const type = exposition.types.get(family.name)
          expect(
            type === undefined || type === 'histogram' || type === 'summary',
            `${family.name} is declared ${type}, expected histogram or summary`,
          )
        }
      }
      expect(missing.length === 0, `missing metric families: ${missing.join(', ')}`)
    },
  },
  {
    id: 'metrics.counts-tasks',
    group: 'metrics',
    title: 'After a compress task completes, the task counters show it',
    profile: 'core',
    variants: VARIANTS,
    needs: { endpoint: 'metrics', feature: 'compress' },
    async run(ctx) {
      const run = await heavyDraco(ctx)
      expect(run.final.status === 'completed', `the compress task ended ${run.final.status}`)
      const exposition = await scrape(ctx)
      if (ctx.variant === 'A') {
        const done = exposition.samples.filter(
          (s) => s.name === 'service_tasks_total' && s.labels.type === 'compress' && s.labels.status === 'completed',
        )
        expect(
          done.some((s) => s.value >= 1),
          `no service_tasks_total{type="compress",status="completed"} ≥ 1 (${JSON.stringify(familySamples(exposition, 'service_tasks_total').slice(0, 5))})`,
        )
        expect(
          familySamples(exposition, 'service_files_processed_total').some((s) => s.value >= 1),
          'service_files_processed_total is not ≥ 1',
        )
      } else {
        expect(
          familySamples(exposition, 'service_tasks_completed_total').some((s) => s.value >= 1),
          'service_tasks_completed_total is not ≥ 1',
        )
        expect(
          familySamples(exposition, 'service_requests_total').some((s) => s.value >= 1),
          'service_requests_total is not ≥ 1',
        )
      }
    },
  },
]
