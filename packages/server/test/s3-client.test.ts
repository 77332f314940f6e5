import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestS3, type TestS3 } from '../../../test/support/s3-server.ts'
import { ConfigError, loadConfig } from '../src/config/load.ts'
import { createS3Client, s3Credentials, type S3ClientOptions } from '../src/storage/s3-client.ts'

const text = async (body: ReadableStream<Uint8Array> | undefined) => (body ? new Response(body).text() : undefined)
const bytesOf = async (body: ReadableStream<Uint8Array> | undefined) => new Uint8Array(await new Response(body).arrayBuffer())

/** `bytes` as a network upload arrives (a web stream): uneven chunks, optionally failing after `failAfter` bytes. */
const streamOf = (bytes: Uint8Array, failAfter = Infinity) => {
  let at = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close()
      if (at > failAfter) return controller.error(new Error('client went away'))
      controller.enqueue(bytes.subarray(at, (at += 300_000 + (at % 77_777))))
    },
  })
}

describe('s3 client (fetch + SigV4) against an S3-protocol server', () => {
  let s3: TestS3
  let options: S3ClientOptions
  beforeAll(async () => {
    s3 = await startTestS3()
    options = { endpoint: s3.endpoint, bucket: s3.bucket, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
  })
  afterAll(() => s3?.close())

  it('puts, gets, heads and deletes objects; absent keys are undefined, not errors', async () => {
    const client = createS3Client(options)
    expect(await client.put('a/one.json', '{"n":1}')).toBe(7)
    expect(await text(await client.get('a/one.json'))).toBe('{"n":1}')
    const head = await client.head('a/one.json')
    expect(head).toMatchObject({ key: 'a/one.json', size: 7 })
    expect(Math.abs(head!.modifiedAt - Date.now())).toBeLessThan(60_000)
    expect(await client.get('a/none')).toBeUndefined()
    expect(await client.head('a/none')).toBeUndefined()
    await client.delete(['a/one.json', 'a/none'])
    expect(await client.head('a/one.json')).toBeUndefined()
  })

  // No '&' here: s3rver escapes it twice in listings (real S3 once, which the client reads).
  it('keeps keys with spaces, plus signs, percent signs and non-ASCII letters intact', async () => {
    const client = createS3Client(options)
    const keys = ['odd/a b+c%20d.txt', 'odd/zürich – model (1).glb']
    for (const key of keys) await client.put(key, key)
    for (const key of keys) expect(await text(await client.get(key))).toBe(key)
    const listed: string[] = []
    for await (const item of client.list('odd/')) listed.push(item.key)
    expect(listed.sort()).toEqual([...keys].sort())
    await client.delete(keys)
    for (const key of keys) expect(await client.head(key)).toBeUndefined()
  })

  it('lists under a prefix only, page after page', async () => {
    const client = createS3Client({ ...options, pageSize: 2 })
    for (let i = 0; i < 5; i++) await client.put(`paged/k-${i}`, String(i))
    await client.put('paged-not/x', 'x')
    const listed: string[] = []
    for await (const item of client.list('paged/')) listed.push(item.key)
    expect(listed.sort()).toEqual(['paged/k-0', 'paged/k-1', 'paged/k-2', 'paged/k-3', 'paged/k-4'])
  })

  it('sends a stream longer than one part as a multipart upload, and a short one in one PUT', async () => {
    const sent: string[] = []
    const counting = (request: Request) => {
      const url = new URL(request.url)
      sent.push(`${request.method} ${url.pathname.split('/').pop()}${url.search.replace(/uploadId=[^&]+/, 'uploadId')}`)
      return fetch(request)
    }
    const client = createS3Client({ ...options, partBytes: 5 * 1024 * 1024, fetch: counting })
    const big = new Uint8Array(randomBytes(11 * 1024 * 1024 + 999))
    expect(await client.put('multi/big', streamOf(big))).toBe(big.length)
    expect(sent).toEqual([
      'POST big?uploads',
      'PUT big?uploadId&partNumber=1',
      'PUT big?uploadId&partNumber=2',
      'PUT big?uploadId&partNumber=3', // 5 + 5 + 1 MiB
      'POST big?uploadId',
    ])
    expect((await client.head('multi/big'))?.size).toBe(big.length)
    expect(Buffer.compare(await bytesOf(await client.get('multi/big')), big)).toBe(0)

    // Bytes already in memory: the same parts, as views of them.
    sent.length = 0
    expect(await client.put('multi/big', big)).toBe(big.length)
    expect(sent.filter((line) => line.startsWith('PUT big?uploadId&partNumber='))).toHaveLength(3)
    expect(Buffer.compare(await bytesOf(await client.get('multi/big')), big)).toBe(0)

    sent.length = 0
    const small = new Uint8Array(randomBytes(100_000))
    expect(await client.put('multi/small', streamOf(small))).toBe(small.length)
    expect(sent).toEqual(['PUT small'])
    expect(Buffer.compare(await bytesOf(await client.get('multi/small')), small)).toBe(0)
  })

  it('reuses its part buffers only after a part is sent: a stream of many parts, some sent twice after a 503, comes back byte for byte', async () => {
    // The first attempt of every third part (1, 4, 7) is held until two more part requests have gone
    // out (later parts read meanwhile, into buffers a too-early reuse would hand them), then answered
    // 503: its retry must send the bytes it had. Only first attempts are refused, so a retry never
    // runs out of tries whatever the timing. (The 2 s bound only keeps a stalled upload from hanging.)
    let partRequests = 0
    const refused = new Set<string>()
    const flaky = async (request: Request) => {
      const part = new URL(request.url).searchParams.get('partNumber')
      if (part === null) return fetch(request)
      const index = partRequests++
      if (Number(part) % 3 !== 1 || refused.has(part)) return fetch(request)
      refused.add(part)
      const deadline = Date.now() + 2000
      while (partRequests < index + 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5))
      await request.arrayBuffer()
      return new Response('<Error><Code>SlowDown</Code></Error>', { status: 503 })
    }
    const client = createS3Client({ ...options, partBytes: 5 * 1024 * 1024, queueSize: 3, fetch: flaky })
    const bytes = new Uint8Array(randomBytes(37 * 1024 * 1024 + 4321))
    expect(await client.put('reuse/big', streamOf(bytes))).toBe(bytes.length)
    expect([...refused].sort()).toEqual(['1', '4', '7'])
    expect(Buffer.compare(await bytesOf(await client.get('reuse/big')), bytes)).toBe(0)
  })

  it('leaves no object when the stream fails mid-upload', async () => {
    const client = createS3Client({ ...options, partBytes: 5 * 1024 * 1024 })
    const bytes = new Uint8Array(randomBytes(12 * 1024 * 1024))
    await expect(client.put('multi/broken', streamOf(bytes, 7 * 1024 * 1024))).rejects.toThrow('client went away')
    expect(await client.head('multi/broken')).toBeUndefined()
    expect((await client.listUploads('multi/')).filter((upload) => upload.key === 'multi/broken')).toEqual([])
  })

  it('names the operation, the key and the answer in its errors', async () => {
    const client = createS3Client({ ...options, bucket: 'no-such-bucket' })
    await expect(client.put('k/1', 'x')).rejects.toThrow(/^\[mos\] \[s3\] put k\/1: 404 NoSuchBucket$/)
    await expect(client.list('k/').next()).rejects.toThrow(/^\[mos\] \[s3\] list k\/: 404 NoSuchBucket$/)
    // A port nothing listens on (taken, then given back).
    const closed = createServer().listen(0, '127.0.0.1')
    await once(closed, 'listening')
    const port = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    const nobody = createS3Client({ ...options, endpoint: `http://127.0.0.1:${port}`, retries: 1 })
    await expect(nobody.get('k/2')).rejects.toThrow(/^\[mos\] \[s3\] get k\/2: fetch failed \(.*ECONNREFUSED.*\)$/)
  })
})

describe('s3 credentials', () => {
  const credentialsOf = (env: Record<string, string>) => s3Credentials(loadConfig({ SERVICE__STORAGE__DRIVER: 's3', ...env }).storage.s3)
  const aws = { AWS_ACCESS_KEY_ID: 'env-id', AWS_SECRET_ACCESS_KEY: 'env-secret', AWS_SESSION_TOKEN: 'env-token' }

  it('takes the settings first, else the AWS_* environment variables, else stops start-up', () => {
    expect(credentialsOf({ ...aws, SERVICE__STORAGE__S3__ACCESS_KEY_ID: 'id', SERVICE__STORAGE__S3__SECRET_ACCESS_KEY: 'secret' })).toEqual(
      {
        accessKeyId: 'id',
        secretAccessKey: 'secret',
      },
    )
    expect(credentialsOf(aws)).toEqual({ accessKeyId: 'env-id', secretAccessKey: 'env-secret', sessionToken: 'env-token' })
    expect(() => credentialsOf({})).toThrow(ConfigError)
    expect(() => credentialsOf({ AWS_ACCESS_KEY_ID: 'only-id' })).toThrow(/AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/)
  })

  it('signs with the session token of temporary credentials', async () => {
    const seen: Request[] = []
    const client = createS3Client({
      ...credentialsOf({ ...aws, SERVICE__STORAGE__S3__ENDPOINT: 'http://127.0.0.1:1' }),
      endpoint: 'http://127.0.0.1:1',
      bucket: 'b',
      region: 'us-east-1',
      retries: 0,
      fetch: async (request) => {
        seen.push(request)
        return new Response(null, { status: 404 })
      },
    })
    expect(await client.head('k')).toBeUndefined()
    expect(seen[0]?.headers.get('x-amz-security-token')).toBe('env-token')
    expect(seen[0]?.headers.get('authorization')).toMatch(
      /^AWS4-HMAC-SHA256 Credential=env-id\/\d{8}\/us-east-1\/s3\/aws4_request, SignedHeaders=[^,]*x-amz-security-token/,
    )
  })
})
