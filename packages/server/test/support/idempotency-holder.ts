// A process that claims an Idempotency-Key on Redis and is still handling its request when it is
// killed: what an API process leaves behind when it dies mid-submit (idempotent-submit.test.ts).
// argv: redis URL, key prefix, Idempotency-Key. Prints "handling" once its request's run began.
import { Redis } from 'ioredis'
import { createRedisIdempotencyStore } from '../../src/idempotency/idempotency-store.ts'
import { idempotent } from '../../src/idempotency/idempotent-submit.ts'
import { idempotentCompress } from './idempotent-request.ts'

const [url, prefix, key] = process.argv.slice(2) as [string, string, string]
const store = createRedisIdempotencyStore(new Redis(url), prefix)
void idempotent(idempotentCompress(store, key), () => {
  process.stdout.write('handling\n')
  return new Promise<never>(() => undefined)
})
