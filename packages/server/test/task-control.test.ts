import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe } from 'vitest'
import { throwAwayLicenceEnv } from '../../../test/support/service-env.ts'
import { writeBigMesh } from './support/big-mesh.ts'
import { tempDir, testEnv } from './support/harness.ts'
import { startMos, stopMos, type MosProcess } from './support/processes.ts'
import { describeTaskControl, taskControlInputs } from './support/task-control-suite.ts'

describe.skipIf(!taskControlInputs)('task control on one process (local queue, fs storage)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let mos: MosProcess | undefined
  let bigMesh = ''
  beforeAll(async () => {
    dir = await tempDir()
    bigMesh = join(dir.path, 'big-mesh.glb')
    await writeBigMesh(bigMesh, 500)
    mos = await startMos('task-control', {
      ...testEnv('A', join(dir.path, 'data'), { SERVICE__ENGINES__THREADS: '1' }),
      ...throwAwayLicenceEnv(),
    })
  }, 120_000)
  afterAll(async () => {
    await stopMos(mos, 10_000)
    await dir?.remove()
  }, 60_000)

  describeTaskControl(
    {
      api: () => mos!,
      workers: () => [mos!],
      filesOf: async (id) =>
        (await readdir(join(dir.path, 'data', 'files', 'tasks', id)).catch(() => [] as string[]))
          .map((name) => `tasks/${id}/${name}`)
          .sort(),
    },
    () => bigMesh,
  )
})
