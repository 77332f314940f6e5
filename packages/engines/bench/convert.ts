// Convert benchmark: a deterministic 1M-triangle mesh converted between every readable and writable
// format of the basic set, printing wall time and peak memory (JS heap + array buffers, sampled every
// 5 ms, above the level before the pair) per pair. Not a test. Samples are taken between awaits, so
// a synchronous reader's peak can be under-reported; times are what matter most.
//
//   npm run bench -w @mos/engines        (or: node --expose-gc --import tsx bench/convert.ts [triangles])
import { Document } from '@gltf-transform/core'
import { convertDocument, countSceneTriangles, loadPlatform, readModel } from '../src/index.ts'

const TRIANGLES = Number(process.argv[2] ?? 1_000_000)
const FORMATS = ['glb', 'gltf', 'obj', 'stl', 'ply'] as const
/** The format a written file is read back as (gltf output is a zip). */
const READ_AS: Record<string, string> = { gltf: 'zip' }

/** A bumpy sphere of about `triangles` triangles with normals and UVs; same bytes every run. */
function generateMesh(triangles: number): Document {
  const doc = new Document()
  const rows = Math.max(2, Math.round(Math.sqrt(triangles / 2)))
  const cols = Math.max(3, Math.round(triangles / 2 / rows))
  const vertexCount = (rows + 1) * (cols + 1)
  const positions = new Float32Array(vertexCount * 3)
  const normals = new Float32Array(vertexCount * 3)
  const uvs = new Float32Array(vertexCount * 2)
  let seed = 42
  const random = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32)
  for (let r = 0, v = 0; r <= rows; r++) {
    const theta = (r / rows) * Math.PI
    for (let c = 0; c <= cols; c++, v++) {
      const phi = (c / cols) * Math.PI * 2
      const n = [Math.sin(theta) * Math.cos(phi), Math.cos(theta), Math.sin(theta) * Math.sin(phi)]
      const radius = 1 + 0.01 * random()
      for (let k = 0; k < 3; k++) {
        positions[v * 3 + k] = n[k]! * radius
        normals[v * 3 + k] = n[k]!
      }
      uvs[v * 2] = c / cols
      uvs[v * 2 + 1] = r / rows
    }
  }
  const indices = new Uint32Array(rows * cols * 6)
  for (let r = 0, i = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const a = r * (cols + 1) + c
      const b = a + cols + 1
      indices.set([a, b, a + 1, a + 1, b, b + 1], i)
      i += 6
    }
  }
  const buffer = doc.createBuffer()
  const prim = doc
    .createPrimitive()
    .setAttribute('POSITION', doc.createAccessor().setType('VEC3').setArray(positions).setBuffer(buffer))
    .setAttribute('NORMAL', doc.createAccessor().setType('VEC3').setArray(normals).setBuffer(buffer))
    .setAttribute('TEXCOORD_0', doc.createAccessor().setType('VEC2').setArray(uvs).setBuffer(buffer))
    .setIndices(doc.createAccessor().setType('SCALAR').setArray(indices).setBuffer(buffer))
  doc.createScene().addChild(doc.createNode('sphere').setMesh(doc.createMesh('sphere').addPrimitive(prim)))
  return doc
}

/** JS heap plus array buffers: what a conversion allocates (RSS never shrinks back, so it hides later peaks). */
const used = () => {
  const m = process.memoryUsage()
  return m.heapUsed + m.external
}

/** Runs `task`, sampling memory every 5 ms; returns its time and the peak above the level before it. */
async function measure<T>(task: () => Promise<T>): Promise<{ result: T; seconds: number; peakMb: number }> {
  ;(globalThis as { gc?: () => void }).gc?.()
  const before = used()
  let peak = before
  const timer = setInterval(() => (peak = Math.max(peak, used())), 5)
  const start = performance.now()
  // Sampling needs the event loop: yield once so the first sample lands during the task.
  await new Promise((resolve) => setImmediate(resolve))
  const result = await task()
  const seconds = (performance.now() - start) / 1000
  clearInterval(timer)
  peak = Math.max(peak, used())
  return { result, seconds, peakMb: (peak - before) / 2 ** 20 }
}

const platform = await loadPlatform()
const generated = generateMesh(TRIANGLES)
console.log(`generated mesh: ${countSceneTriangles(generated)} triangles`)
const sources = new Map<string, Uint8Array>()
for (const format of FORMATS) {
  const { result, seconds, peakMb } = await measure(() => convertDocument(platform, generateMesh(TRIANGLES), format))
  sources.set(format, result.bytes)
  console.log(`write ${format.padEnd(4)} ${seconds.toFixed(2).padStart(6)} s  peak +${peakMb.toFixed(0).padStart(5)} MB  ${(result.bytes.byteLength / 2 ** 20).toFixed(1)} MB`)
}
console.log('\nfrom → to      time (read + write)   peak memory')
for (const from of FORMATS) {
  for (const to of FORMATS) {
    const { result, seconds, peakMb } = await measure(async () => {
      const doc = await readModel(platform, sources.get(from)!, READ_AS[from] ?? from)
      const triangles = countSceneTriangles(doc)
      await convertDocument(platform, doc, to)
      return triangles
    })
    console.log(`${from.padEnd(4)} → ${to.padEnd(4)}  ${seconds.toFixed(2).padStart(8)} s  peak +${peakMb.toFixed(0).padStart(5)} MB  (${result} triangles)`)
  }
}
