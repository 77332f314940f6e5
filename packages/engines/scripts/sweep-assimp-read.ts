// Reads every FBX and COLLADA file of the assimp corpus through our reader (assimpjs) and prints a markdown
// table: triangles next to Debian's `assimp info` (default post-processing, each mesh counted once), time,
// textures, animations and skins, and the WASM heap afterwards.
// Usage: tsx scripts/sweep-assimp-read.ts
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { countMeshTriangles, loadPlatform, readModel } from '../src/index.ts'
import { primitiveVisibleTriangles } from '../src/geometry-stats.ts'
import { assimpHeapBytes } from '../src/io/assimp-module.ts'

const models = '/usr/share/assimp/models'
const platform = await loadPlatform()
console.log('| file | assimp info triangles | ours (visible) | ms | textures | animations | skins |')
console.log('|---|---|---|---|---|---|---|')
const counts = { fbx: [0, 0], dae: [0, 0] }
let totalMs = 0
for (const dir of ['FBX', 'Collada']) {
  for (const name of readdirSync(join(models, dir), { recursive: true, encoding: 'utf8' }).filter((n) => /\.(fbx|dae)$/i.test(n))) {
    const path = join(models, dir, name)
    const format = /\.fbx$/i.test(name) ? 'fbx' : 'dae'
    let info: string
    try {
      const out = execFileSync('assimp', ['info', path], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      info = String([...out.matchAll(/\[(\d+) \/ (\d+) \/ (\d+) \| triangle\]/g)].reduce((n, m) => n + Number(m[3]), 0))
    } catch {
      info = 'fails'
    }
    counts[format][1]++
    const t = performance.now()
    try {
      const doc = await readModel(platform, new Uint8Array(readFileSync(path)), format)
      const ms = performance.now() - t
      totalMs += ms
      counts[format][0]++
      let visible = 0
      for (const mesh of doc.getRoot().listMeshes()) for (const prim of mesh.listPrimitives()) visible += primitiveVisibleTriangles(prim)
      const root = doc.getRoot()
      console.log(
        `| ${dir}/${name} | ${info} | ${countMeshTriangles(doc)} (${visible}) | ${ms.toFixed(0)} | ${
          root
            .listTextures()
            .map((x) => x.getMimeType())
            .join(', ') || '–'
        } | ${root.listAnimations().length} | ${root.listSkins().length} |`,
      )
    } catch (error) {
      console.log(`| ${dir}/${name} | ${info} | fails: ${(error as Error).message} | ${(performance.now() - t).toFixed(0)} | | | |`)
    }
  }
}
console.log(
  `\nFBX read ${counts.fbx[0]}/${counts.fbx[1]}, COLLADA read ${counts.dae[0]}/${counts.dae[1]}; total ${totalMs.toFixed(0)} ms; WASM heap afterwards ${await assimpHeapBytes(platform)} bytes`,
)
