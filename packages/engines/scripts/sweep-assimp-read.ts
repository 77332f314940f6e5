// Reads every FBX and COLLADA file of the assimp corpus through assimpjs and prints triangle counts next to
// Debian's `assimp info` (default post-processing), time, textures, animations and skins.
// Usage: tsx scripts/sweep-assimp-read.ts
import { readFileSync, readdirSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { loadPlatform, countSceneTriangles, countMeshTriangles } from '../src/index.ts'
import { readWithAssimp } from '../src/io/assimp-read.ts'
const platform = await loadPlatform()
for (const dir of ['FBX', 'FBX/embedded_ascii', 'Collada']) {
  const base = '/usr/share/assimp/models/' + dir
  for (const f of readdirSync(base).filter((n) => /\.(fbx|dae)$/i.test(n))) {
    const path = base + '/' + f
    let info = ''
    try { info = execFileSync('assimp', ['info', path], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 60000 }) } catch (e) { info = 'FAIL' }
    const tris = [...info.matchAll(/\[(\d+) \/ (\d+) \/ (\d+) \| ([a-z]+)\]/g)].filter((m) => m[4].includes('triangle')).reduce((n, m) => n + Number(m[3]), 0)
    const t = performance.now()
    try {
      const bytes = readFileSync(path)
      const fmt = /\.fbx$/i.test(f) ? 'fbx' : 'dae'
      const doc = await readWithAssimp(platform, bytes, fmt)
      console.log(dir + '/' + f, 'assimp', info === 'FAIL' ? 'FAIL' : tris, 'ours', countSceneTriangles(doc), "meshes", countMeshTriangles(doc), 'ms', (performance.now() - t).toFixed(0), 'tex', doc.getRoot().listTextures().map((x) => x.getMimeType()).join(','), 'anim', doc.getRoot().listAnimations().length, 'skin', doc.getRoot().listSkins().length)
    } catch (e) {
      console.log(dir + '/' + f, 'assimp', info === 'FAIL' ? 'FAIL' : tris, 'ERROR', (e as Error).message, 'ms', (performance.now() - t).toFixed(0))
    }
  }
}
