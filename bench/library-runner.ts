// The library baseline of the overhead section, in a warm process of its own: what a script that
// calls glTF-Transform does, timed inside that process. Kept out of the benchmark process, whose
// only other job is to be the service's client: the call's garbage (~100 MB on the 27 MB grid)
// would otherwise be collected during the next measured upload.
import { compress, loadPlatform, type CompressOptions } from '../packages/engines/src/index.ts'

interface Request {
  id: number
  name: string
  bytes?: Uint8Array
  engine: 'draco' | 'meshopt'
}

const platform = await loadPlatform()
const inputs = new Map<string, Uint8Array>()

process.on('message', async (request: Request) => {
  try {
    // A copy of its own: bytes arrive as a view into the message buffer, at any offset.
    if (request.bytes) inputs.set(request.name, new Uint8Array(request.bytes))
    const bytes = inputs.get(request.name)!
    const start = performance.now()
    const doc = await platform.io.readBinary(bytes)
    const options: CompressOptions = { engine: request.engine, meshoptEncoder: platform.meshoptEncoder }
    await doc.transform(compress(options))
    const output = await platform.io.writeBinary(doc)
    process.send!({ id: request.id, ms: performance.now() - start, size: output.byteLength })
  } catch (error) {
    process.send!({ id: request.id, error: (error as Error).message })
  }
})
process.send!({ ready: true })
