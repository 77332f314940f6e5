// Writes glb files as FBX and COLLADA, then reopens each output with Debian's `assimp info` and with
// our own reader, and prints triangle counts and bounds. Usage: tsx roundtrip-fbx-dae.ts FILE.glb...
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { countMeshTriangles, countSceneTriangles, documentBounds, loadPlatform, readModel, writeModel } from '../src/index.ts'

const dir = mkdtempSync(join(tmpdir(), 'mos-roundtrip-'))
const platform = await loadPlatform()
for (const path of process.argv.slice(2)) {
  const source = await readModel(platform, new Uint8Array(readFileSync(path)), path.endsWith('.glb') ? 'glb' : path.split('.').pop()!.toLowerCase())
  const b = documentBounds(source)
  console.log(path, 'scene', countSceneTriangles(source), 'meshes', countMeshTriangles(source), 'bounds', fmt(b.min), fmt(b.max))
  for (const format of ['fbx', 'dae']) {
    const t = performance.now()
    const written = await writeModel(platform, source, format)
    const ms = performance.now() - t
    const out = join(dir, `${path.split('/').pop()}.${written.extension}`)
    writeFileSync(out, written.bytes)
    let infoPath = out
    if (written.extension === 'zip') {
      execFileSync('unzip', ['-o', '-q', out, '-d', out + '.d'])
      infoPath = join(out + '.d', 'model.dae')
    }
    let info = ''
    try {
      info = execFileSync('assimp', ['info', infoPath, '-r'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    } catch (e) {
      info = 'FAIL ' + String((e as { stderr?: string }).stderr).slice(-300)
    }
    const faces = [...info.matchAll(/\[(\d+) \/ (\d+) \/ (\d+) \| ([a-z-]+)\]/g)].reduce((n, m) => n + Number(m[3]), 0)
    const back = await readModel(platform, written.bytes, format === 'dae' && written.extension === 'zip' ? 'dae' : format).catch((e: Error) => e)
    const ours = back instanceof Error ? back.message : `ours scene ${countSceneTriangles(back)} bounds ${fmt(documentBounds(back).min)} ${fmt(documentBounds(back).max)}`
    console.log(`  ${format} ${written.extension} ${written.bytes.byteLength}B ${ms.toFixed(0)}ms assimp-raw faces ${info.startsWith('FAIL') ? info : faces} | ${ours}`)
  }
}
function fmt(v: number[]): string {
  return '(' + v.map((x) => x.toFixed(3)).join(' ') + ')'
}
