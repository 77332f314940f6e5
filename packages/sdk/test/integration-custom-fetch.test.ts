import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fetch as nodeFetch } from 'node-fetch-native/node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { corpusFiles, shared } from '../../../test/support/corpus.ts'
import { localServiceEnv } from '../../../test/support/service-env.ts'
import { startMos, stopMos, type MosProcess } from '../../server/test/support/processes.ts'
import { createClient } from '../src/node.ts'
import { API_KEY } from './support/real-server.ts'

const corpus = corpusFiles({ knight: shared('glb', 'chr_knight.glb') })

/** A fetch that hands every request on to the runtime's own, noting what kind of body each upload was. */
function passingFetch() {
  const bodies: string[] = []
  const fetch = ((input, init) => {
    if (init?.method === 'POST') bodies.push(init.body?.constructor.name ?? 'none')
    return globalThis.fetch(input, init)
  }) as typeof globalThis.fetch
  return { bodies, fetch }
}

describe.skipIf(!corpus.available)('uploads through a fetch the caller gives (the compiled server)', () => {
  let mos: MosProcess
  let dataDir: string
  let size: number

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mos-sdk-custom-fetch-'))
    mos = await startMos('mos', localServiceEnv({ variant: 'A', dataDir, apiKeys: API_KEY }))
    size = (await stat(corpus.paths.knight)).size
  })
  afterAll(async () => {
    await stopMos(mos)
    await rm(dataDir, { recursive: true, force: true })
  })

  it('node-fetch, which cannot send a stream, gets the FormData: the file arrives whole and the task completes', async () => {
    const client = createClient({ baseURL: mos.url, apiKey: API_KEY, fetch: nodeFetch as typeof globalThis.fetch })
    const task = await client.compressAndWait({ file: corpus.paths.knight, engine: 'meshopt' }, { pollIntervalMs: 50 })
    expect(task).toMatchObject({ status: 'completed', input_filename: 'chr_knight.glb', input_size_bytes: size })
  })

  it('a fetch given gets the FormData by default and the stream with streamUploads; both arrive whole', async () => {
    for (const streamUploads of [undefined, true]) {
      const passing = passingFetch()
      const client = createClient({ baseURL: mos.url, apiKey: API_KEY, fetch: passing.fetch, streamUploads })
      const { task_id } = await client.compress({ file: corpus.paths.knight, engine: 'draco' })
      expect(passing.bodies).toEqual([streamUploads ? 'ReadableStream' : 'FormData'])
      expect(await client.getTask(task_id)).toMatchObject({ input_filename: 'chr_knight.glb', input_size_bytes: size })
    }
  })
})
