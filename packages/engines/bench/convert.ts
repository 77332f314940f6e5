// Convert benchmark: a deterministic 1M-triangle mesh converted between every readable and writable
// format of the basic set, printing wall time and peak memory per pair. Each pair runs in a fresh
// process, so its peak RSS is its own (the baseline, ~the loaded codecs, is printed beside it).
// Not a test.
//
//   npm run bench -w @mos/engines        (or: node --import tsx bench/convert.ts [triangles])
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Document } from '@gltf-transform/core'
import { convertDocument, countSceneTriangles, loadPlatform, readModel } from '../src/index.ts'

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
  const random = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32
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

const platform = await loadPlatform()
const [mode, from, to, file] = process.argv.slice(2)

if (mode === '--pair') {
  // One pair in a fresh process: its peak RSS (maxRSS) is this conversion's alone.
  const baseline = process.resourceUsage().maxRSS
  const bytes = new Uint8Array(readFileSync(file!))
  const start = performance.now()
  const doc = await readModel(platform, bytes, READ_AS[from!] ?? from!)
  const triangles = countSceneTriangles(doc)
  await convertDocument(platform, doc, to!)
  const seconds = (performance.now() - start) / 1000
  console.log(JSON.stringify({ seconds, peakMb: process.resourceUsage().maxRSS / 1024, baselineMb: baseline / 1024, triangles }))
} else {
  const triangles = Number(mode ?? 1_000_000)
  const dir = mkdtempSync(join(tmpdir(), 'mos-bench-'))
  try {
    const generated = generateMesh(triangles)
    console.log(`generated mesh: ${countSceneTriangles(generated)} triangles`)
    for (const format of FORMATS) {
      const start = performance.now()
      const { bytes } = await convertDocument(platform, generateMesh(triangles), format)
      writeFileSync(join(dir, format), bytes)
      console.log(
        `write ${format.padEnd(4)} ${((performance.now() - start) / 1000).toFixed(2).padStart(6)} s  ${(bytes.byteLength / 2 ** 20).toFixed(1)} MB`,
      )
    }
    console.log('\nfrom → to     read + write   peak RSS (process, incl. ~' + 'baseline)')
    for (const source of FORMATS) {
      for (const target of FORMATS) {
        const out = execFileSync(
          process.execPath,
          ['--import', 'tsx', fileURLToPath(import.meta.url), '--pair', source, target, join(dir, source)],
          { encoding: 'utf8', maxBuffer: 1 << 20 },
        )
        const r = JSON.parse(out.trim().split('\n').pop()!) as { seconds: number; peakMb: number; baselineMb: number; triangles: number }
        console.log(
          `${source.padEnd(4)} → ${target.padEnd(4)} ${r.seconds.toFixed(2).padStart(8)} s   ${r.peakMb.toFixed(0).padStart(6)} MB (baseline ${r.baselineMb.toFixed(0)} MB)  ${r.triangles} triangles`,
        )
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
