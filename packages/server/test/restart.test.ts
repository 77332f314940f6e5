import { completedTaskSchema, submitResponseSchema } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { form, realServer, tempDir, testEnv, waitForTask } from './support/harness.ts'

const { available, paths } = corpusFiles({ engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb') })

describe.skipIf(!available)('restart', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  beforeAll(async () => {
    dir = await tempDir()
  })
  afterAll(() => dir.remove())

  it('runs tasks left pending or processing when the process stopped', async () => {
    // One thread, several tasks: when the server stops, one is processing and the rest are pending.
    const env = testEnv('A', dir.path, { SERVICE__ENGINES__THREADS: '1' })
    const first = await realServer(env)
    const ids: string[] = []
    for (let i = 0; i < 4; i++) {
      const response = await first.call('/api/v1/compress', {
        method: 'POST',
        body: await form({ engine: 'draco', level: 10 }, [paths.engine]),
      })
      ids.push(submitResponseSchema.parse(await response.json()).task_id)
    }
    const before = await Promise.all(ids.map(async (id) => (await (await first.call(`/api/v1/tasks/${id}`)).json()).status))
    expect(before).toContain('pending')
    await first.close({ drain: false })

    const second = await realServer(env)
    try {
      for (const id of ids) {
        const record = completedTaskSchema.parse(await waitForTask(second.call, id))
        const download = await second.call(`/api/v1/tasks/${id}/download`)
        expect((await download.arrayBuffer()).byteLength).toBe(record.output.size_bytes)
      }
    } finally {
      await second.close()
    }
  })
})
