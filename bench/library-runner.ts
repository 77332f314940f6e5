// The library baseline of the overhead section, in a warm process of its own: what a script that
// calls glTF-Transform does with a file (read it, transform, write the result), timed inside that
// process. Kept out of the benchmark process, whose only other job is to be the service's client:
// the call's garbage (~100 MB on the 27 MB grid) would otherwise be collected during the next
// measured upload.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compress, loadPlatform, type CompressOptions } from '../packages/engines/src/index.ts'

interface Request {
  id: number
  name: string
  bytes?: Uint8Array
  engine: 'draco' | 'meshopt'
}

const platform = await loadPlatform()
const dir = mkdtempSync(join(tmpdir(), 'mos-library-'))
const inputs = new Map<string, string>()
process.on('SIGTERM', () => {
  rmSync(dir, { recursive: true, force: true })
  process.exit(0)
})

process.on('message', async (request: Request) => {
  try {
    if (request.bytes) {
      inputs.set(request.name, join(dir, `${inputs.size}.glb`))
      writeFileSync(inputs.get(request.name)!, request.bytes)
    }
    const start = performance.now()
    const doc = await platform.io.read(inputs.get(request.name)!)
    const options: CompressOptions = { engine: request.engine, meshoptEncoder: platform.meshoptEncoder }
    await doc.transform(compress(options))
    await platform.io.write(join(dir, 'out.glb'), doc)
    process.send!({ id: request.id, ms: performance.now() - start })
  } catch (error) {
    process.send!({ id: request.id, error: (error as Error).message })
  }
})
process.send!({ ready: true })
