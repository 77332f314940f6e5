import { mkdtemp, rm, unlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import S3rver from '@20minutes/s3rver'

export interface TestS3 {
  endpoint: string
  bucket: string
  /** The folder holding the bucket's objects (`<directory>/<bucket>/<key>/object`), for tests that look for leftovers. */
  directory: string
  /** SERVICE__STORAGE__S3__* variables for this server. */
  env: Record<string, string>
  close(): Promise<void>
}

/**
 * An S3-protocol server on a free loopback port, with one empty bucket, in a temporary folder.
 * s3rver computes some request signatures differently from the AWS SDK (list calls), so signature
 * checks are off: the keys still travel, and real S3 checks them.
 *
 * Deleting an object leaves its folders in place. s3rver's own delete removes each parent folder it
 * finds empty with a recursive `rm`, which races with a concurrent upload into the same folder: the
 * upload is answered 200 and then deleted with the folder (tasks/<id>/input lost while another
 * task's refused upload was removed beside it). Real S3 has no folders, so there is nothing to race.
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
  keepFoldersOnDelete(server)
  const { port } = (await server.run()) as { port: number }
  const endpoint = `http://127.0.0.1:${port}`
  return {
    endpoint,
    bucket,
    directory,
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

interface FilesystemStore {
  getResourcePath(bucket: string, key: string, resource: string): string
  deleteObject(bucket: string, key: string): Promise<void>
}

function keepFoldersOnDelete(server: S3rver): void {
  const store = (server as unknown as { store: FilesystemStore }).store
  store.deleteObject = async (bucket, key) => {
    await Promise.all(
      ['object', 'object.md5', 'metadata.json'].map((resource) =>
        unlink(store.getResourcePath(bucket, key, resource)).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw error
        }),
      ),
    )
  }
}
