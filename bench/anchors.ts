import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { NodeIO } from '@gltf-transform/core'
import { ALL_EXTENSIONS } from '@gltf-transform/extensions'
import draco3d from 'draco3dgltf'
import { MeshoptDecoder } from 'meshoptimizer'
import { countSceneTriangles, documentBounds, KHRMeshoptCompression } from '../packages/engines/src/index.ts'
import { roundTrip, type BenchService } from './service.ts'
import type { Input } from './stats.ts'

const run = promisify(execFile)
/** The path of an npm-installed command (gltfpack and the gltf-transform CLI, pinned in package.json). */
export const bin = (name: string) => new URL(`../node_modules/.bin/${name}`, import.meta.url).pathname

export interface AnchorRow {
  input: string
  tool: string
  ms: number
  bytes: number
  triangles: number
  /** Largest bounds deviation relative to the input's extent. */
  boundsError: number
}

/** `gltf-transform draco` at equal quantization bits: the service's defaults (position 14, normal 10, texcoord 12, color 8, generic 12). */
export function dracoAnchorArgs(input: string, output: string): string[] {
  const bits = { position: 14, normal: 10, texcoord: 12, color: 8, generic: 12 }
  return ['draco', input, output, ...Object.entries(bits).flatMap(([k, v]) => [`--quantize-${k}`, String(v)])]
}

const TOOLS: { tool: string; args: (i: string, o: string) => [string, string[]] }[] = [
  { tool: 'gltf-transform draco', args: (i, o) => [bin('gltf-transform'), dracoAnchorArgs(i, o)] },
  { tool: 'gltf-transform meshopt', args: (i, o) => [bin('gltf-transform'), ['meshopt', i, o]] },
  { tool: 'gltfpack -c', args: (i, o) => [bin('gltfpack'), ['-i', i, '-o', o, '-c']] },
  { tool: 'gltfpack -cc', args: (i, o) => [bin('gltfpack'), ['-i', i, '-o', o, '-cc']] },
  // gltfpack merges meshes and nodes by default; -kn keeps named nodes, as Mos keeps the scene graph.
  { tool: 'gltfpack -cc -kn', args: (i, o) => [bin('gltfpack'), ['-i', i, '-o', o, '-cc', '-kn']] },
]

/** A reader of every tool's output: all extensions, Draco and meshopt decoders. */
export async function reader(): Promise<NodeIO> {
  return new NodeIO()
    .registerExtensions([...ALL_EXTENSIONS, KHRMeshoptCompression]) // gltfpack -cz and meshopt_extension=khr write it
    .registerDependencies({ 'draco3d.decoder': await draco3d.createDecoderModule(), 'meshopt.decoder': MeshoptDecoder })
}

/** Runs the anchor tools and the service on the same inputs: time, size, decoded triangles and bounds. */
export async function measureAnchors(service: BenchService, inputs: Input[]): Promise<AnchorRow[]> {
  const io = await reader()
  const dir = await mkdtemp(join(tmpdir(), 'mos-anchors-'))
  const rows: AnchorRow[] = []
  try {
    for (const input of inputs) {
      const source = await io.readBinary(input.bytes)
      const srcBounds = documentBounds(source)
      const extent = Math.max(...srcBounds.max.map((v, i) => v - srcBounds.min[i]!))
      const describe = async (tool: string, ms: number, bytes: Uint8Array) => {
        const doc = await io.readBinary(bytes)
        const b = documentBounds(doc)
        const boundsError =
          Math.max(...[0, 1, 2].flatMap((i) => [Math.abs(b.min[i]! - srcBounds.min[i]!), Math.abs(b.max[i]! - srcBounds.max[i]!)])) / extent
        rows.push({ input: input.name, tool, ms, bytes: bytes.byteLength, triangles: countSceneTriangles(doc), boundsError })
      }
      rows.push({
        input: input.name,
        tool: 'input',
        ms: 0,
        bytes: input.bytes.byteLength,
        triangles: countSceneTriangles(source),
        boundsError: 0,
      })
      const inPath = join(dir, 'in.glb')
      await writeFile(inPath, input.bytes)
      for (const { tool, args } of TOOLS) {
        const outPath = join(dir, `out-${tool.replace(/\W+/g, '_')}.glb`)
        const [cmd, argv] = args(inPath, outPath)
        const t = performance.now()
        await run(cmd, argv, { maxBuffer: 16 * 1024 * 1024 })
        await describe(tool, performance.now() - t, new Uint8Array(await readFile(outPath)))
      }
      for (const engine of ['draco', 'meshopt'] as const) {
        const { ms, bytes } = await roundTrip(service, input, { engine })
        await describe(`mos ${engine}`, ms, bytes)
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  return rows
}
