import S3rver from '@20minutes/s3rver'
import { S3Client, GetObjectCommand, ListObjectsV2Command, HeadObjectCommand, ListMultipartUploadsCommand, DeleteObjectsCommand } from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { Readable } from 'node:stream'
import { createStorage } from 'unstorage'
import s3Driver from 'unstorage/drivers/s3'

const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, allowMismatchedSignatures: true, directory: '/tmp/s3scratch', configureBuckets: [{ name: 'mos' }] })
const { port } = await server.run()
console.log('port', port)
const endpoint = `http://127.0.0.1:${port}`
const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } })
const big = Buffer.alloc(12 * 1024 * 1024, 7)
const up = new Upload({ client, params: { Bucket: 'mos', Key: 'tasks/a/input', Body: Readable.from([big.subarray(0, 6e6), big.subarray(6e6)]) }, partSize: 5 * 1024 * 1024, queueSize: 2 })
up.on('httpUploadProgress', (p) => console.log('progress', p.loaded, p.part))
await up.done()
const head = await client.send(new HeadObjectCommand({ Bucket: 'mos', Key: 'tasks/a/input' }))
console.log('size', head.ContentLength, head.LastModified)
const list = await client.send(new ListObjectsV2Command({ Bucket: 'mos', Prefix: 'tasks/', MaxKeys: 1 }))
console.log('list', list.Contents?.map((c) => c.Key), list.IsTruncated, list.NextContinuationToken)
try { const mu = await client.send(new ListMultipartUploadsCommand({ Bucket: 'mos' })); console.log('mu', mu.Uploads) } catch (e) { console.log('mu err', (e as Error).message) }
const storage = createStorage({ driver: s3Driver({ endpoint, bucket: 'mos', region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }) })
await storage.setItem('records:tasks:x', { a: 1 })
console.log('get', await storage.getItem('records:tasks:x'), await storage.getKeys('records'))
await storage.removeItem('records:tasks:x')
console.log('after rm', await storage.getItem('records:tasks:x'))
try { await client.send(new DeleteObjectsCommand({ Bucket: 'mos', Delete: { Objects: [{ Key: 'tasks/a/input' }] } })); console.log('bulk delete ok') } catch (e) { console.log('bulk err', (e as Error).message) }
await server.close()
