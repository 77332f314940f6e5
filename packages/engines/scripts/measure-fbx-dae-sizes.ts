// Writes a generated grid of N triangles (default 500k) as FBX and COLLADA, then reads both back, printing write
// time, file size, read time, input throughput and the assimp WASM heap each read grew to.
// Usage: tsx scripts/measure-fbx-dae-sizes.ts [triangles]
import { Document } from '@gltf-transform/core'
import { countSceneTriangles, loadPlatform, readModel, writeModel } from '../src/index.ts'
import { loadAssimp } from '../src/io/assimp-module.ts'

const triangles = Number(process.argv[2] ?? 500_000)
const side = Math.ceil(Math.sqrt(triangles / 2))
const doc = new Document()
const positions = new Float32Array((side + 1) * (side + 1) * 3)
const normals = new Float32Array(positions.length)
for (let y = 0, i = 0; y <= side; y++)
  for (let x = 0; x <= side; x++, i++) {
    positions.set([x / side, Math.sin(x * 0.1) * 0.05, y / side], i * 3)
    normals.set([0, 1, 0], i * 3)
  }
const indices = new Uint32Array(side * side * 6)
for (let y = 0, k = 0; y < side; y++)
  for (let x = 0; x < side; x++) {
    const a = y * (side + 1) + x
    indices.set([a, a + side + 1, a + 1, a + 1, a + side + 1, a + side + 2], k)
    k += 6
  }
const buffer = doc.createBuffer()
const prim = doc
  .createPrimitive()
  .setAttribute('POSITION', doc.createAccessor().setType('VEC3').setArray(positions).setBuffer(buffer))
  .setAttribute('NORMAL', doc.createAccessor().setType('VEC3').setArray(normals).setBuffer(buffer))
  .setIndices(doc.createAccessor().setType('SCALAR').setArray(indices).setBuffer(buffer))
doc.createScene().addChild(doc.createNode('grid').setMesh(doc.createMesh('grid').addPrimitive(prim)))
const platform = await loadPlatform()
console.log(`grid of ${countSceneTriangles(doc)} triangles`)
for (const format of ['fbx', 'dae']) {
  let t = performance.now()
  const written = await writeModel(platform, doc, format)
  const writeMs = performance.now() - t
  // Hold the module this read uses: the reader drops a module whose heap grew large, and we want its size.
  const module = await loadAssimp(platform)
  t = performance.now()
  const back = await readModel(platform, written.bytes, format)
  const readMs = performance.now() - t
  const mb = written.bytes.byteLength / 1e6
  console.log(
    `${format}: write ${writeMs.toFixed(0)} ms, ${mb.toFixed(1)} MB; read ${readMs.toFixed(0)} ms (${(mb / (readMs / 1000)).toFixed(1)} MB/s), ${countSceneTriangles(back)} triangles; WASM heap ${module.HEAP8.buffer.byteLength / 2 ** 20} MiB; RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`,
  )
}
