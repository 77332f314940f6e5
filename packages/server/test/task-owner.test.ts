import { describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { keyOwner } from '../src/tasks/task-owner.ts'
import { API_KEY, form, useInProcessApp } from './support/harness.ts'

const { available, paths } = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })

describe.skipIf(!available)('task owner', () => {
  const service = useInProcessApp('A')

  it('is a digest of the key, not the key, and differs between keys', async () => {
    expect(await keyOwner(API_KEY)).toMatch(/^[0-9a-f]{32}$/)
    expect(await keyOwner(API_KEY)).not.toContain(API_KEY)
    expect(await keyOwner('second-key')).not.toBe(await keyOwner(API_KEY))
  })

  it('is stored on the task and batch records and left out of their public JSON', async () => {
    const single = await (
      await service.call('/api/v1/compress', { method: 'POST', body: await form({ engine: 'draco' }, [paths.box]) })
    ).json()
    const stored = await service.context.storage.taskStore.get(single.task_id)
    expect(stored?.owner).toBe(await keyOwner(API_KEY))
    const record = await (await service.call(`/api/v1/tasks/${single.task_id}`)).json()
    expect(record).not.toHaveProperty('owner')
    expect(JSON.stringify(stored)).not.toContain(API_KEY)

    const batch = await (
      await service.call(
        '/api/v1/batch/compress',
        { method: 'POST', body: await form({ engine: 'meshopt' }, [paths.box], 'files') },
        'second-key',
      )
    ).json()
    expect(batch).toMatchObject({ total: 1 })
    expect((await service.context.storage.batches.get(batch.batch_id))?.owner).toBe(await keyOwner('second-key'))
    expect((await service.context.storage.taskStore.get(batch.tasks[0].task_id))?.owner).toBe(await keyOwner('second-key'))
  })
})
