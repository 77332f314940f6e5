// Reading a fidelity case's output back with tools we did not write: the `assimp` CLI (its assjson
// dump) and Khronos glTF-Validator.
import { execFile } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, extname, join } from 'node:path'
import { promisify } from 'node:util'
import type { Document, Texture } from '@gltf-transform/core'
import { unzipSync } from 'fflate'
import { validateBytes } from 'gltf-validator'
import { afterAll, expect } from 'vitest'
import { createEnginePool, loadPlatform, type Platform } from '../../src/index.ts'
import { success } from './job-result.ts'
import { ASSIMP_DEFAULT_MATERIAL, type Contents, noContents, type Target } from './fidelity.ts'

const run = promisify(execFile)

interface AssJson {
  rootnode: AssNode
  meshes?: {
    primitivetypes: number
    faces: number[][]
    normals?: unknown
    texturecoords?: unknown[]
    colors?: unknown[]
    bones?: unknown[]
  }[]
  materials?: { properties: { key: string; semantic: number; value: unknown }[] }[]
  textures?: unknown[]
  animations?: unknown[]
}

interface AssNode {
  meshes?: number[]
  children?: AssNode[]
}

/** assimp's texture types for a base colour map (aiTextureType_DIFFUSE, aiTextureType_BASE_COLOR). */
const BASE_COLOUR_SEMANTICS = new Set([1, 12])

/** What `assimp export -fassjson` reads from a file (its dump leaves morph targets out). */
export async function assimpReadBack(file: string, dir: string): Promise<Contents> {
  const out = join(dir, 'readback.json')
  await run('assimp', ['export', file, out, '-fassjson'], { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }).catch((error: Error) => {
    throw new Error(`assimp cannot read the output back: ${error.message}`)
  })
  return assimpContents(JSON.parse(await readFile(out, 'utf8')) as AssJson)
}

/** Faces per node instance, materials, maps by type, attributes, bones and animations of an assjson dump. */
function assimpContents(json: AssJson): Contents {
  const counts = noContents()
  const meshes = json.meshes ?? []
  const visit = (node: AssNode) => {
    for (const index of node.meshes ?? []) {
      for (const face of meshes[index]?.faces ?? []) {
        if (face.length === 3) counts.triangles++
        else if (face.length === 2) counts.lines++
        else if (face.length === 1) counts.points++
      }
    }
    for (const child of node.children ?? []) visit(child)
  }
  visit(json.rootnode)
  if (counts.triangles + counts.lines === 0) [counts['point clouds'], counts.points] = [counts.points, 0]
  const materials = (json.materials ?? []).filter((m) => m.properties.find((p) => p.key === '?mat.name')?.value !== ASSIMP_DEFAULT_MATERIAL)
  counts.materials = materials.length
  const maps = materials.flatMap((m) => m.properties.filter((p) => p.key === '$tex.file'))
  const base = new Set(maps.filter((p) => BASE_COLOUR_SEMANTICS.has(p.semantic)).map((p) => String(p.value)))
  counts['base colour maps'] = base.size
  counts['other maps'] = new Set(maps.map((p) => String(p.value)).filter((file) => !base.has(file))).size
  // assimp's glTF reader keeps KHR_texture_transform as a UV transform property per map.
  counts['texture transforms'] = materials.flatMap((m) => m.properties.filter((p) => p.key === '$tex.uvtrafo')).length
  const faces = meshes.filter((m) => m.primitivetypes & 4)
  const loose = meshes.filter((m) => !(m.primitivetypes & 4))
  counts.UVs = meshes.filter((m) => m.texturecoords?.length).length
  counts['second UV sets'] = Math.max(0, ...meshes.map((m) => (m.texturecoords?.length ?? 0) - 1))
  counts.normals = faces.filter((m) => m.normals).length
  counts['point normals'] = loose.filter((m) => m.normals).length
  counts.colours = meshes.filter((m) => m.colors?.length).length
  counts.skins = meshes.some((m) => m.bones?.length) ? 1 : 0
  counts.animations = json.animations?.length ?? 0
  return counts
}

/** Writes an output where assimp can open it: zips (glTF bundles, COLLADA with images) unpacked. Returns the model's path. */
export async function openable(dir: string, bytes: Uint8Array, extension: string, target: Target): Promise<string> {
  if (extension !== 'zip') {
    const file = join(dir, `model.${extension}`)
    await writeFile(file, bytes)
    return file
  }
  for (const [name, content] of Object.entries(unzipSync(bytes))) {
    await mkdir(dirname(join(dir, name)), { recursive: true })
    await writeFile(join(dir, name), content)
  }
  const model = readdirSync(dir).find((name) => extname(name).slice(1).toLowerCase() === target)
  if (!model) throw new Error(`no .${target} model in the zip output`)
  return join(dir, model)
}

/** glTF-Validator's errors on a glb or a gltf zip bundle (every message), and whether it found morph targets. */
export async function validatorReport(bytes: Uint8Array, extension: string): Promise<{ errors: string[]; morphTargets: boolean }> {
  const files = extension === 'zip' ? unzipSync(bytes) : {}
  const report = await validateBytes(extension === 'zip' ? files['model.gltf']! : bytes, {
    maxIssues: 0,
    ...(extension === 'zip' ? { uri: 'model.gltf', externalResourceFunction: async (uri: string) => files[decodeURIComponent(uri)]! } : {}),
  })
  const info = (report as unknown as { info?: { hasMorphTargets?: boolean } }).info
  return {
    errors: report.issues.messages.filter((m) => m.severity === 0).map((m) => `${m.code} at ${m.pointer ?? '?'}`),
    morphTargets: info?.hasMorphTargets === true,
  }
}

/**
 * A written model (a .glb, or a glTF zip's `model.gltf` with its files) as a Document, once
 * glTF-Validator found no error in it.
 */
export async function readValidOutput(platform: Platform, bytes: Uint8Array, extension: string): Promise<Document> {
  expect((await validatorReport(bytes, extension)).errors).toEqual([])
  if (extension === 'glb') return platform.io.readBinary(bytes)
  const files = unzipSync(bytes)
  return platform.io.readJSON({ json: JSON.parse(new TextDecoder().decode(files['model.gltf']!)), resources: files })
}

/**
 * For a describe block: an engine pool of one thread (destroyed after the block) with `run`, a job's
 * result that must succeed, and `readValid`, its output read back once it validates.
 */
export async function poolReadingBack() {
  const pool = createEnginePool({ threads: 1 })
  const platform = await loadPlatform()
  afterAll(() => pool.destroy())
  const run = async (name: string, bytes: Uint8Array, format: string, options: Record<string, unknown>) =>
    success(await pool.run({ name, input: { bytes: bytes.slice() }, format, options } as Parameters<typeof pool.run>[0]))
  const readValid = (bytes: Uint8Array, extension: string) => readValidOutput(platform, bytes, extension)
  return { pool, platform, run, readValid }
}

/** Each material's base colour texture, by the material's name. */
export function baseColourTextures(doc: Document): Map<string, Texture | null> {
  return new Map(
    doc
      .getRoot()
      .listMaterials()
      .map((material) => [material.getName(), material.getBaseColorTexture()]),
  )
}
