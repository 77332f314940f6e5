import { readFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createClient, verifyWebhookSignature } from '@mos/sdk'
import { EXTENSION_HEADERS, submitResponseSchema, type TaskRecord } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { REDIS_URL, redisAvailable, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'
import { API_KEY, fetchMos, form, inProcessApp, tempDir, testEnv } from './support/harness.ts'
import { sharedRedisEnv, startMos, startMosGroup, stopMos, type MosProcess } from './support/processes.ts'

const { available, paths } = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })
const SECRET = 'whsec_test_secret_0123456789'
const hasRedis = await redisAvailable()

interface Delivery {
  body: string
  signature: string | undefined
  eventId: string | undefined
}

/** A webhook receiver on 127.0.0.1: records every delivery and answers each with the next status of `statuses` (then 200). */
async function startReceiver() {
  const deliveries: Delivery[] = []
  const statuses: number[] = []
  const waiters: (() => void)[] = []
  const server: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk: Buffer) => (body += chunk.toString()))
    req.on('end', () => {
      deliveries.push({
        body,
        signature: req.headers[EXTENSION_HEADERS.signature.toLowerCase()] as string | undefined,
        eventId: req.headers[EXTENSION_HEADERS.eventId.toLowerCase()] as string | undefined,
      })
      res.writeHead(statuses.shift() ?? 200).end()
      for (const wake of waiters.splice(0)) wake()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  return {
    url,
    deliveries,
    statuses,
    /** Resolves once `count` deliveries have arrived. */
    async received(count: number): Promise<Delivery[]> {
      while (deliveries.length < count) await new Promise<void>((resolve) => waiters.push(resolve))
      return deliveries.slice(0, count)
    },
    reset() {
      deliveries.length = 0
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

describe.skipIf(!available)('webhooks', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let mos: MosProcess
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  beforeAll(async () => {
    dir = await tempDir()
    receiver = await startReceiver()
    mos = await startMos(
      'webhooks',
      testEnv('A', dir.path, {
        SERVICE__WEBHOOKS__SECRET: SECRET,
        SERVICE__WEBHOOKS__ALLOW_PRIVATE: 'true',
        SERVICE__WEBHOOKS__FIRST_RETRY_SECONDS: '0.2',
      }),
    )
  }, 60_000)
  afterAll(async () => {
    await stopMos(mos, 5000)
    await receiver?.close()
    await dir?.remove()
  })

  const submit = async (file: string | { name: string; bytes: Uint8Array }, callbackUrl: string) => {
    const response = await fetchMos(mos, '/api/v1/compress', {
      method: 'POST',
      body: await form({ engine: 'draco', callback_url: callbackUrl }, [file]),
    })
    expect(response.status).toBe(200)
    return submitResponseSchema.parse(await response.json()).task_id
  }

  it('POSTs the completed record, signed with the secret and named by an event id', async () => {
    receiver.reset()
    const id = await submit(paths.box, receiver.url)
    const [delivery] = await receiver.received(1)
    const record = JSON.parse(delivery!.body) as TaskRecord
    expect(record).toMatchObject({ task_id: id, status: 'completed', progress: 100 })
    expect(await verifyWebhookSignature(delivery!.body, delivery!.signature, SECRET)).toBe(true)
    expect(await verifyWebhookSignature(delivery!.body, delivery!.signature, 'another secret')).toBe(false)
    expect(delivery!.eventId).toBe(`${id}.completed`)
    // The record delivered is the record the API answers with.
    expect(await (await fetchMos(mos, `/api/v1/tasks/${id}`)).json()).toEqual(record)
  }, 60_000)

  it('takes callback_url from the SDK as a typed field', async () => {
    receiver.reset()
    const client = createClient({ baseURL: mos.url, apiKey: API_KEY, variant: 'A' })
    const bytes = new Uint8Array(await readFile(paths.box))
    const { task_id: id } = await client.compress({ file: bytes, filename: 'box.glb', engine: 'draco', callback_url: receiver.url })
    const [delivery] = await receiver.received(1)
    expect(JSON.parse(delivery!.body)).toMatchObject({ task_id: id, status: 'completed' })
  }, 60_000)

  it('POSTs the failed record of a task that failed', async () => {
    receiver.reset()
    const id = await submit({ name: 'broken.glb', bytes: new TextEncoder().encode('glTF not really') }, receiver.url)
    const [delivery] = await receiver.received(1)
    // The error names what is wrong with the input (its header's version field holds ' not'), not a version Mos lacks.
    expect(JSON.parse(delivery!.body)).toMatchObject({
      task_id: id,
      status: 'failed',
      error: "not a valid GLB: the header's version field holds 1953459744 (a GLB says 2)",
    })
    expect(await verifyWebhookSignature(delivery!.body, delivery!.signature, SECRET)).toBe(true)
  }, 60_000)

  it('retries after the receiver fails (500, then 200), with the same event id', async () => {
    receiver.reset()
    receiver.statuses.push(500, 503)
    const id = await submit(paths.box, receiver.url)
    const deliveries = await receiver.received(3)
    expect(deliveries.map((d) => d.eventId)).toEqual([`${id}.completed`, `${id}.completed`, `${id}.completed`])
    expect(new Set(deliveries.map((d) => d.body)).size).toBe(1)
    for (const d of deliveries) expect(await verifyWebhookSignature(d.body, d.signature, SECRET)).toBe(true)
  }, 60_000)
})

describe.skipIf(!available)('callback_url is checked at submit', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let guarded: ReturnType<typeof inProcessApp>
  let unconfigured: ReturnType<typeof inProcessApp>
  beforeAll(async () => {
    dir = await tempDir()
    guarded = inProcessApp(testEnv('A', `${dir.path}/guarded`, { SERVICE__WEBHOOKS__SECRET: SECRET }))
    unconfigured = inProcessApp(testEnv('B', `${dir.path}/unconfigured`))
  })
  afterAll(async () => {
    await guarded?.close()
    await unconfigured?.close()
    await dir?.remove()
  })
  const submit = async (app: ReturnType<typeof inProcessApp>, callbackUrl: string) =>
    app.call('/api/v1/compress', { method: 'POST', body: await form({ engine: 'draco', callback_url: callbackUrl }, [paths.box]) })

  it('refuses loopback, private, link-local and names that resolve to them, v4 and v6', async () => {
    const urls = [
      'http://127.0.0.1:9/hook',
      'http://10.1.2.3/hook',
      'http://192.168.1.1/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://100.64.0.1/hook',
      'http://[::1]:8080/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://[fe80::1]/hook',
      'http://localhost:8080/hook',
    ]
    for (const url of urls) {
      const response = await submit(guarded, url)
      expect(response.status, url).toBe(400)
      expect(await response.json(), url).toEqual({
        error: 'invalid value for callback_url: a URL that does not reach a loopback, private or link-local address',
      })
    }
  })

  it('refuses what is not an http(s) URL, and callback_url where webhooks are not configured', async () => {
    for (const url of ['ftp://example.com/hook', 'not a url', 'file:///etc/passwd']) {
      const response = await submit(guarded, url)
      expect(response.status, url).toBe(400)
      expect(await response.json(), url).toEqual({ error: 'invalid value for callback_url: an absolute http:// or https:// URL' })
    }
    const response = await submit(unconfigured, 'https://example.com/hook')
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({ error: 'invalid value for callback_url: webhooks are not configured on this deployment' })
  })
})

describe.skipIf(!available)('webhooks survive a restart', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let mos: MosProcess | undefined
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  // The retry waits 3 s: time to kill the process between the failed attempt and the retry.
  const env = () =>
    testEnv('A', dir.path, {
      SERVICE__WEBHOOKS__SECRET: SECRET,
      SERVICE__WEBHOOKS__ALLOW_PRIVATE: 'true',
      SERVICE__WEBHOOKS__FIRST_RETRY_SECONDS: '3',
    })
  beforeAll(async () => {
    dir = await tempDir()
    receiver = await startReceiver()
  })
  afterAll(async () => {
    await stopMos(mos, 5000)
    await receiver?.close()
    await dir?.remove()
  })

  it('a delivery that failed before the process was killed arrives after the restart', async () => {
    mos = await startMos('webhooks-before', env())
    receiver.statuses.push(500)
    const response = await fetchMos(mos, '/api/v1/compress', {
      method: 'POST',
      body: await form({ engine: 'draco', callback_url: receiver.url }, [paths.box]),
    })
    const id = submitResponseSchema.parse(await response.json()).task_id
    await receiver.received(1)
    mos.child.kill('SIGKILL')
    await mos.exited
    mos = await startMos('webhooks-after', env())
    const [failed, delivered] = await receiver.received(2)
    expect(delivered!.eventId).toBe(`${id}.completed`)
    expect(delivered!.body).toBe(failed!.body)
    expect(JSON.parse(delivered!.body)).toMatchObject({ task_id: id, status: 'completed' })
    expect(await verifyWebhookSignature(delivered!.body, delivered!.signature, SECRET)).toBe(true)
  }, 60_000)
})

describe.skipIf(!available || !hasRedis)('webhooks in a cluster: API process and worker process on Redis', () => {
  const prefix = uniquePrefix('webhooks')
  let dir: Awaited<ReturnType<typeof tempDir>>
  let processes: MosProcess[] = []
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  beforeAll(async () => {
    dir = await tempDir()
    receiver = await startReceiver()
    const env = {
      ...sharedRedisEnv({ redisUrl: REDIS_URL, prefix, dataDir: dir.path, apiKeys: API_KEY }),
      SERVICE__WEBHOOKS__SECRET: SECRET,
      SERVICE__WEBHOOKS__ALLOW_PRIVATE: 'true',
      SERVICE__WEBHOOKS__FIRST_RETRY_SECONDS: '0.2',
    }
    processes = await startMosGroup([
      ['api', { ...env, SERVICE__SERVER__ROLE: 'api' }],
      ['worker', { ...env, SERVICE__SERVER__ROLE: 'worker' }],
    ])
  }, 60_000)
  afterAll(async () => {
    await Promise.allSettled(processes.map((p) => stopMos(p, 5000)))
    await receiver?.close()
    await removeRedisKeys(prefix)
    await dir?.remove()
  })

  it('the worker that finished the task delivers it, retrying after a 500', async () => {
    receiver.statuses.push(500)
    const response = await fetchMos(processes[0]!, '/api/v1/compress', {
      method: 'POST',
      body: await form({ engine: 'draco', callback_url: receiver.url }, [paths.box]),
    })
    const id = submitResponseSchema.parse(await response.json()).task_id
    const deliveries = await receiver.received(2)
    expect(deliveries.map((d) => d.eventId)).toEqual([`${id}.completed`, `${id}.completed`])
    expect(JSON.parse(deliveries[1]!.body)).toMatchObject({ task_id: id, status: 'completed' })
    expect(await verifyWebhookSignature(deliveries[1]!.body, deliveries[1]!.signature, SECRET)).toBe(true)
  }, 60_000)
})
