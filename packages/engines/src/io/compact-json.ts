import type { GLTF } from '@gltf-transform/core'
import { shortestFloat32 } from '../geometry/float32.ts'

const TRIANGLES = 4
const REPEAT = 10497
const MESHOPT_EXTENSIONS = ['EXT_meshopt_compression', 'KHR_meshopt_compression']

/**
 * The glTF JSON of every file Mos writes, without what a reader assumes anyway: glTF-Transform
 * writes the spec's defaults out (`"normalized": false` and `"byteOffset": 0` on accessors,
 * `"byteOffset": 0` on buffer views and in their EXT_/KHR_meshopt_compression objects, `"mode": 4` on
 * primitives, repeat wrapping on texture samplers, linear interpolation on animation samplers), a
 * sampler left with nothing to say (a texture without one wraps and filters as the empty one says),
 * buffer names (a GLB holds one binary chunk; a .gltf names its files by URI), a scene's empty
 * list of nodes (glTF refuses an empty array), and material factors
 * to seventeen digits where the float32 a renderer reads needs at most nine (BoxTextured's
 * specular-glossiness material: 0.20000000298023224 three times). Node transforms keep their
 * digits here: a converted scene may need double precision (large world coordinates); the meshopt
 * writer shortens them, as it quantizes anyway (meshopt-file-layout.ts).
 *
 * ```ts
 * const { json, resources } = await io.writeJSON(doc)
 * compactGltfJson(json)
 * ```
 */
export function compactGltfJson(json: GLTF.IGLTF): void {
  for (const accessor of json.accessors ?? []) {
    if (accessor.normalized === false) delete accessor.normalized
    if (accessor.byteOffset === 0) delete accessor.byteOffset
  }
  for (const view of json.bufferViews ?? []) {
    if (view.byteOffset === 0) delete view.byteOffset
    for (const name of MESHOPT_EXTENSIONS) {
      const meshopt = view.extensions?.[name] as { byteOffset?: number } | undefined
      if (meshopt?.byteOffset === 0) delete meshopt.byteOffset
    }
  }
  for (const mesh of json.meshes ?? []) for (const prim of mesh.primitives) if (prim.mode === TRIANGLES) delete prim.mode
  for (const buffer of json.buffers ?? []) delete buffer.name
  // An empty array is invalid glTF (EMPTY_ENTITY): a scene without nodes has none (repair may leave one so).
  // (glTF-Transform's type has `nodes` required; the schema does not.)
  for (const scene of json.scenes ?? []) if (scene.nodes?.length === 0) delete (scene as { nodes?: number[] }).nodes
  for (const sampler of json.samplers ?? []) {
    if (sampler.wrapS === REPEAT) delete sampler.wrapS
    if (sampler.wrapT === REPEAT) delete sampler.wrapT
  }
  dropEmptySamplers(json)
  for (const animation of json.animations ?? [])
    for (const sampler of animation.samplers) if (sampler.interpolation === 'LINEAR') delete sampler.interpolation
  for (const material of json.materials ?? []) shortenFloats(material)
}

/**
 * A texture with no sampler is read with repeat wrapping and the renderer's own filtering, which is
 * all an empty sampler says: the sampler goes, and the textures that named it name none.
 */
function dropEmptySamplers(json: GLTF.IGLTF): void {
  const samplers = json.samplers ?? []
  const kept: number[] = []
  // The writer leaves unset filters as keys holding undefined, which JSON does not print.
  for (const [index, sampler] of samplers.entries()) if (Object.values(sampler).some((value) => value !== undefined)) kept.push(index)
  if (kept.length === samplers.length) return
  for (const texture of json.textures ?? []) {
    if (texture.sampler === undefined) continue
    const moved = kept.indexOf(texture.sampler)
    if (moved < 0) delete texture.sampler
    else texture.sampler = moved
  }
  if (kept.length === 0) delete json.samplers
  else json.samplers = kept.map((index) => samplers[index]!)
}

/** Every fractional number of a JSON value (a material, its extensions) as the shortest decimal of its float32. */
export function shortenFloats(value: unknown): void {
  if (typeof value !== 'object' || value === null) return
  const record = value as Record<string, unknown>
  for (const key of Object.keys(record)) {
    const item = record[key]
    if (typeof item === 'number') record[key] = shortestFloat32(item)
    else shortenFloats(item)
  }
}
