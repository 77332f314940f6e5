import { completedTaskSchema, failedTaskSchema, healthSchemaB, submitResponseSchema, type Variant } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { API_KEY, form, useInProcessApp, inProcessApp, tempDir, testEnv, VARIANTS, waitForTask } from './support/harness.ts'
import { parsePrometheus, sampleSum, sampleValue } from './support/prometheus.ts'

const { available, paths } = corpusFiles({
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
})
const broken = { name: 'broken.glb', bytes: new Uint8Array(8_000).map((_, i) => (i * 31 + 7) % 253) }

/** Exactly the families of section 4.15 per variant. */
const FAMILIES: Record<Variant, Record<string, string>> = {
  A: {
    service_tasks_total: 'counter',
    service_task_duration_seconds: 'histogram',
    service_files_processed_total: 'counter',
    service_compression_ratio: 'histogram',
    service_active_tasks_gauge: 'gauge',
  },
  B: {
    service_requests_total: 'counter',
    service_active_tasks: 'gauge',
    service_queue_length: 'gauge',
    service_task_processing_duration_seconds: 'histogram',
    service_tasks_completed_total: 'counter',
    service_tasks_failed_total: 'counter',
    service_errors_total: 'counter',
  },
}

const seconds = (from: string | undefined, to: string) => (Date.parse(to) - Date.parse(from!)) / 1000

describe.skipIf(!available).each(VARIANTS)('metrics in variant %s', (variant) => {
  const service = useInProcessApp(variant)

  const scrape = async () => {
    const response = await service.call('/api/v1/metrics')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    const text = await response.text()
    return { text, ...parsePrometheus(text) }
  }
  const submit = async (file: NonNullable<Parameters<typeof form>[1]>[number]) =>
    submitResponseSchema.parse(
      await (await service.call('/api/v1/compress', { method: 'POST', body: await form({ engine: 'draco' }, [file]) })).json(),
    ).task_id

  it('needs the key by default', async () => {
    const response = await service.call('/api/v1/metrics', {}, null)
    expect(response.status).toBe(401)
  })

  it('shows exactly the variant families, the process metrics, and the counts and durations of real tasks', async () => {
    const ids = [await submit(paths.box), await submit(broken)]
    const [done, failed] = [
      completedTaskSchema.parse(await waitForTask(service.call, ids[0]!)),
      failedTaskSchema.parse(await waitForTask(service.call, ids[1]!)),
    ]
    const failedRecord = (await (await service.call(`/api/v1/tasks/${ids[1]}`)).json()) as { started_at: string }
    const durations = seconds(done.started_at, done.completed_at) + seconds(failedRecord.started_at, failed.failed_at)

    const { text, families, samples } = await scrape()
    const ours = Object.fromEntries([...families].filter(([name]) => name.startsWith('service_')))
    expect(ours).toEqual(FAMILIES[variant])
    expect(families.get('process_cpu_user_seconds_total')).toBe('counter')
    expect(families.get('nodejs_heap_size_total_bytes')).toBe('gauge')
    for (const id of ids) expect(text).not.toContain(id)
    expect(text).not.toContain(API_KEY)

    if (variant === 'A') {
      expect(sampleValue(samples, 'service_tasks_total', { type: 'compress', status: 'completed' })).toBe(1)
      expect(sampleValue(samples, 'service_tasks_total', { type: 'compress', status: 'failed' })).toBe(1)
      expect(sampleValue(samples, 'service_task_duration_seconds_count', { type: 'compress' })).toBe(2)
      expect(sampleValue(samples, 'service_task_duration_seconds_sum', { type: 'compress' })).toBeCloseTo(durations, 2)
      expect(sampleValue(samples, 'service_files_processed_total')).toBe(1)
      expect(sampleValue(samples, 'service_compression_ratio_count', { type: 'compress' })).toBe(1)
      expect(sampleValue(samples, 'service_compression_ratio_sum', { type: 'compress' })).toBeCloseTo(done.output.compression_ratio!, 6)
      expect(sampleValue(samples, 'service_compression_ratio_bucket', { type: 'compress', le: '+Inf' })).toBe(1)
      expect(sampleValue(samples, 'service_active_tasks_gauge')).toBe(0)
    } else {
      expect(sampleValue(samples, 'service_tasks_completed_total', { type: 'compress' })).toBe(1)
      expect(sampleValue(samples, 'service_tasks_failed_total', { type: 'compress' })).toBe(1)
      expect(sampleValue(samples, 'service_task_processing_duration_seconds_count', { type: 'compress' })).toBe(2)
      expect(sampleValue(samples, 'service_task_processing_duration_seconds_sum', { type: 'compress' })).toBeCloseTo(durations, 2)
      expect(sampleValue(samples, 'service_active_tasks')).toBe(0)
      expect(sampleValue(samples, 'service_queue_length')).toBe(0)
      // The 401 of the previous test and the submits, polls and this scrape's predecessors are counted.
      expect(sampleValue(samples, 'service_errors_total', { status: '401' })).toBe(1)
      expect(sampleSum(samples, 'service_requests_total', { method: 'POST', status: '200' })).toBe(2)
    }
  })

  it.runIf(variant === 'B')('counts requests and errors exactly', async () => {
    const before = (await scrape()).samples
    await service.call('/api/v1/capabilities')
    await service.call('/api/v1/capabilities')
    await service.call('/api/v1/tasks/nope')
    await service.call('/api/v1/capabilities', {}, 'wrong')
    const after = (await scrape()).samples
    const delta = (name: string, labels: Record<string, string> = {}) => sampleSum(after, name, labels) - sampleSum(before, name, labels)
    // Four requests plus the first scrape.
    expect(delta('service_requests_total')).toBe(5)
    expect(delta('service_requests_total', { method: 'GET', status: '200' })).toBe(3)
    expect(delta('service_errors_total', { status: '404' })).toBe(1)
    expect(delta('service_errors_total', { status: '401' })).toBe(1)
    expect(delta('service_errors_total')).toBe(2)
  })
})

describe.skipIf(!available)('metrics without a key, and live health in variant B', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let service: ReturnType<typeof inProcessApp>

  beforeAll(async () => {
    dir = await tempDir()
    service = inProcessApp(testEnv('B', dir.path, { SERVICE__METRICS__REQUIRE_KEY: 'false', SERVICE__ENGINES__THREADS: '1' }))
  })
  afterAll(async () => {
    await service.close()
    await dir.remove()
  })

  it('serves metrics without a key when the setting says so', async () => {
    const response = await service.call('/api/v1/metrics', {}, null)
    expect(response.status).toBe(200)
    expect(parsePrometheus(await response.text()).families.has('service_requests_total')).toBe(true)
  })

  it('reports real uptime, running and waiting tasks, and the package version', async () => {
    const { version } = (await import('../package.json', { with: { type: 'json' } })).default
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const response = await service.call('/api/v1/compress', {
        method: 'POST',
        body: await form({ engine: 'draco', level: 10 }, [paths.engine]),
      })
      ids.push(submitResponseSchema.parse(await response.json()).task_id)
    }
    const busy = healthSchemaB.parse(await (await service.call('/api/v1/health', {}, null)).json())
    // One worker thread: one task runs, the other two wait.
    expect(busy).toMatchObject({ status: 'healthy', version, active_tasks: 1, queue_length: 2 })
    expect(busy.uptime_seconds).toBeGreaterThanOrEqual(1)
    const gauges = parsePrometheus(await (await service.call('/api/v1/metrics', {}, null)).text()).samples
    expect(sampleValue(gauges, 'service_active_tasks')).toBe(1)
    expect(sampleValue(gauges, 'service_queue_length')).toBe(2)

    for (const id of ids) expect((await waitForTask(service.call, id, 120_000)).status).toBe('completed')
    const idle = healthSchemaB.parse(await (await service.call('/api/v1/health', {}, null)).json())
    expect(idle).toMatchObject({ active_tasks: 0, queue_length: 0 })
    expect(Math.abs(idle.uptime_seconds - (Date.now() - service.context.startedAt) / 1000)).toBeLessThanOrEqual(1)
  })
})
