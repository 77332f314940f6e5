// Shows what assimpjs does, without Mos's input limits, with small files declaring huge arrays: the WASM heap
// grows to the declared size and never shrinks. Usage: tsx scripts/probe-assimp-hostile.ts
import { readFileSync } from 'node:fs'
import { loadPlatform } from '../src/index.ts'
import { loadAssimp } from '../src/io/assimp-module.ts'
const platform = await loadPlatform()
const ajs = await loadAssimp(platform)
const text = readFileSync('/usr/share/assimp/models/Collada/cube_triangulate.dae', 'utf8')
for (const n of ['100000000', '400000000', '2000000000']) {
  const bad = text.replace(/(<float_array[^>]*count=")\d+/, `$1${n}`)
  const list = new ajs.FileList()
  list.AddFile('model.dae', new TextEncoder().encode(bad))
  const t = performance.now()
  try {
    const r = ajs.ConvertFileList(list, 'glb2')
    console.log(n, r.IsSuccess(), r.GetErrorCode(), 'heap', ajs.HEAP8.buffer.byteLength, (performance.now() - t).toFixed(0))
  } catch (e) {
    console.log(n, 'threw', String(e).slice(0, 200))
  }
}
const ascii = readFileSync('/usr/share/assimp/models/FBX/embedded_ascii/box.FBX', 'latin1')
for (const n of ['100000000', '2000000000']) {
  const bad = ascii.replace(/Vertices: \*\d+/, `Vertices: *${n}`)
  const list = new ajs.FileList()
  list.AddFile('model.fbx', new Uint8Array(Buffer.from(bad, 'latin1')))
  const t = performance.now()
  try {
    const r = ajs.ConvertFileList(list, 'glb2')
    console.log('ascii', n, r.IsSuccess(), r.GetErrorCode(), 'heap', ajs.HEAP8.buffer.byteLength, (performance.now() - t).toFixed(0))
  } catch (e) {
    console.log('ascii', n, 'threw', String(e).slice(0, 200))
  }
}
