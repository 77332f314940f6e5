import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import S3rver from '@20minutes/s3rver'

export interface TestS3 {
  endpoint: string
  bucket: string
  /** SERVICE__STORAGE__S3__* variables for this server. */
  env: Record<string, string>
  close(): Promise<void>
}

/**
 * An S3-protocol server on a free loopback port, with one empty bucket, in a temporary folder.
 * s3rver computes some request signatures differently from the AWS SDK (list calls), so signature
 * checks are off: the keys still travel, and real S3 checks them.
 */
export async function startTestS3(bucket = 'mos'): Promise<TestS3> {
  const directory = await mkdtemp(join(tmpdir(), 'mos-s3-'))
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory,
    allowMismatchedSignatures: true,
    configureBuckets: [{ name: bucket }],
  })
  const { port } = (await server.run()) as { port: number }
  const endpoint = `http://127.0.0.1:${port}`
  return {
    endpoint,
    bucket,
    env: {
      SERVICE__STORAGE__S3__ENDPOINT: endpoint,
      SERVICE__STORAGE__S3__BUCKET: bucket,
      SERVICE__STORAGE__S3__REGION: 'us-east-1',
      SERVICE__STORAGE__S3__ACCESS_KEY_ID: 'S3RVER',
      SERVICE__STORAGE__S3__SECRET_ACCESS_KEY: 'S3RVER',
    },
    async close() {
      await server.close()
      await rm(directory, { recursive: true, force: true })
    },
  }
}
