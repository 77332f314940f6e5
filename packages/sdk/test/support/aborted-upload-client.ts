// A process that uploads one file with @mos/sdk/node and gives up on it (aborted-upload.test.ts):
// `node --import tsx aborted-upload-client.ts <baseURL> <file> signal|timeout`. With `signal` it
// aborts on SIGUSR2; with `timeout` the client's 500 ms time limit ends the stalled upload. It
// prints JSON lines: the rejection, then, once told to go on (a line on stdin), what it read from
// disk after the rejection when nothing is left to keep it running.
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { createClient } from '../../src/node.ts'

const [baseURL, file, mode] = process.argv.slice(2) as [string, string, 'signal' | 'timeout']

/** Bytes this process has read so far (files, sockets, pipes): Linux's `rchar`. */
const bytesRead = () => Number(/^rchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))?.[1])
const print = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`)

const controller = new AbortController()
process.on('SIGUSR2', () => controller.abort())
const mos = createClient({ baseURL, apiKey: 'key', maxRetries: 0, timeout: mode === 'timeout' ? 500 : 0 })
const error = await mos.compress({ file, engine: 'draco' }, { signal: controller.signal }).catch((caught: Error) => caught)
const readAtRejection = bytesRead()
print({ rejected: error.constructor.name, message: error.message })

const input = createInterface({ input: process.stdin })
await new Promise((resolve) => input.once('line', resolve))
input.close()
process.stdin.destroy()
// Runs once the event loop has nothing left: what the SDK left behind would keep it from coming.
process.once('beforeExit', () => print({ readAfterRejection: bytesRead() - readAtRejection }))
