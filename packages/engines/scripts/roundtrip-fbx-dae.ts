// Writes models as FBX and COLLADA, reopens each output with Debian's `assimp info -r` and with our own
// reader, and prints a markdown table: triangles (assimp vs source meshes), triangles and bounds after
// our read-back (vs the source scene), size and write time.
// Usage: tsx scripts/roundtrip-fbx-dae.ts [FILE.glb|.fbx|.dae ...]   (default: the corpus files)
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Document } from '@gltf-transform/core'
import { countMeshTriangles, countSceneTriangles, documentBounds, loadPlatform, readModel, writeModel } from '../src/index.ts'
import { readDae } from '../src/io/dae.ts'

const models = '/usr/share/assimp/models'
const sharedCorpus = new URL('../../../../shared/corpus/glb/', import.meta.url).pathname
const list = (dir: string, pattern: RegExp) =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((n) => pattern.test(n))
    .map((n) => join(dir, n))
const inputs =
  process.argv.length > 2
    ? process.argv.slice(2)
    : [
        ...list(join(models, 'glTF2'), /\.glb$/),
        ...list(sharedCorpus, /\.glb$/),
        ...list(join(models, 'FBX'), /\.fbx$/i),
        ...list(join(models, 'Collada'), /\.dae$/i),
      ]

const dir = mkdtempSync(join(tmpdir(), 'mos-roundtrip-'))
const platform = await loadPlatform()
console.log('| input | target | result | assimp triangles / source | our read-back triangles / source | bounds | size | write ms |')
console.log('|---|---|---|---|---|---|---|---|')
let passed = 0
let total = 0
for (const path of inputs) {
  const name = path.replace(`${models}/`, '').replace(sharedCorpus, 'shared/glb/')
  let source: Document
  try {
    source = await readModel(platform, new Uint8Array(readFileSync(path)), path.split('.').pop()!.toLowerCase())
  } catch (error) {
    console.log(`| ${name} | – | input not read: ${(error as Error).message} | | | | | |`)
    continue
  }
  for (const format of ['fbx', 'dae']) {
    total++
    const t = performance.now()
    const written = await writeModel(platform, source, format)
    const ms = performance.now() - t
    const out = join(dir, `${total}.${written.extension}`)
    writeFileSync(out, written.bytes)
    let filePath = out
    const resources: Record<string, Uint8Array> = {}
    if (written.extension === 'zip') {
      execFileSync('unzip', ['-o', '-q', out, '-d', `${out}.d`])
      filePath = join(`${out}.d`, 'model.dae')
      for (const entry of readdirSync(`${out}.d`)) resources[entry] = new Uint8Array(readFileSync(join(`${out}.d`, entry)))
    }
    let assimpTriangles: number | string
    try {
      const info = execFileSync('assimp', ['info', filePath, '-r'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        maxBuffer: 1 << 26,
      })
      assimpTriangles = [...info.matchAll(/\[(\d+) \/ (\d+) \/ (\d+) \| triangle\]/g)].reduce((n, m) => n + Number(m[3]), 0)
    } catch {
      assimpTriangles = 'assimp failed'
    }
    let back: Document | string
    try {
      const bytes = new Uint8Array(readFileSync(filePath))
      back = format === 'dae' ? await readDae(platform, bytes, { resources }) : await readModel(platform, bytes, 'fbx')
    } catch (error) {
      back = (error as Error).message
    }
    const sourceMesh = countMeshTriangles(source)
    const sourceScene = countSceneTriangles(source)
    const backScene = typeof back === 'string' ? back : countSceneTriangles(back)
    const boundsKept = typeof back !== 'string' && sameBounds(back, source)
    const ok = assimpTriangles === sourceMesh && backScene === sourceScene && boundsKept
    if (ok) passed++
    console.log(
      `| ${name} | ${format} | ${ok ? 'pass' : 'FAIL'} | ${assimpTriangles} / ${sourceMesh} | ${backScene} / ${sourceScene} | ${boundsKept ? 'kept' : 'changed'} | ${written.bytes.byteLength} B ${written.extension} | ${ms.toFixed(0)} |`,
    )
  }
}
console.log(`\n${passed}/${total} passed`)
rmSync(dir, { recursive: true, force: true })

function sameBounds(a: Document, b: Document): boolean {
  const x = documentBounds(a)
  const y = documentBounds(b)
  const size = Math.max(...y.max.map((v, i) => v - y.min[i]!), 1e-6)
  return x.min.every((v, i) => Math.abs(v - y.min[i]!) <= size * 0.001) && x.max.every((v, i) => Math.abs(v - y.max[i]!) <= size * 0.001)
}
