import { NodeIO } from '@gltf-transform/core'
import { ALL_EXTENSIONS, EXTTextureWebP, KHRTextureBasisu } from '@gltf-transform/extensions'
import { API_KEY_HEADER, ERROR_TEXTS, IMAGE_EXTENSIONS, MODEL_FORMATS, TASK_TYPES, type TaskType, type Variant } from '@mos/sdk/contract'
import { createDefaultContainer, KHR_DF_MODEL_ETC1S, KHR_DF_MODEL_UASTC, write } from 'ktx-parse'
import { zipSync } from 'fflate'
import sharp from 'sharp'
import { gridMeshDocument } from '../../src/fixtures/grid-mesh.ts'
import { imageSize } from '../../src/inspect/image.ts'
import { API_KEY, json, mapJson, pathOf, type Deviation } from './servers.ts'

/**
 * A stand-in for the operations today's server does not serve yet (convert, repair, diagnose,
 * textures): correct answers for the suite's own fixtures, so the output checks can be shown to
 * pass on a right result and fail on a wrong one. `fault` changes one thing in a result.
 */
export interface StubResult {
  bytes: Uint8Array
  extension: string
  record: Record<string, unknown>
}

export type OperationFault = (type: TaskType, fields: Record<string, string>, result: StubResult) => StubResult

const PATHS: Record<string, TaskType> = {
  '/api/v1/convert': 'convert',
  '/api/v1/repair': 'repair',
  '/api/v1/diagnose': 'diagnose',
  '/api/v1/textures/optimize': 'texture_optimize',
  '/api/v1/textures/ktx2': 'texture_ktx2',
}

const io = new NodeIO()
const modelIO = new NodeIO().registerExtensions(ALL_EXTENSIONS)

function meshArrays(n: number) {
  const prim = gridMeshDocument({ n }).getRoot().listMeshes()[0]!.listPrimitives()[0]!
  return { positions: prim.getAttribute('POSITION')!.getArray()!, indices: prim.getIndices()!.getArray()! }
}

function writeObj(n: number): Uint8Array {
  const { positions, indices } = meshArrays(n)
  const lines: string[] = []
  for (let i = 0; i < positions.length; i += 3) lines.push(`v ${positions[i]} ${positions[i + 1]} ${positions[i + 2]}`)
  for (let i = 0; i < indices.length; i += 3) lines.push(`f ${indices[i]! + 1} ${indices[i + 1]! + 1} ${indices[i + 2]! + 1}`)
  return new TextEncoder().encode(`${lines.join('\n')}\n`)
}

function writeStl(n: number): Uint8Array {
  const { positions, indices } = meshArrays(n)
  const count = indices.length / 3
  const out = Buffer.alloc(84 + count * 50)
  out.writeUInt32LE(count, 80)
  for (let t = 0; t < count; t++) {
    for (let c = 0; c < 3; c++) {
      const v = indices[t * 3 + c]!
      for (let k = 0; k < 3; k++) out.writeFloatLE(positions[v * 3 + k]!, 84 + t * 50 + 12 + c * 12 + k * 4)
    }
  }
  return new Uint8Array(out)
}

function writePly(n: number): Uint8Array {
  const { positions, indices } = meshArrays(n)
  const lines = [
    'ply',
    'format ascii 1.0',
    `element vertex ${positions.length / 3}`,
    'property float x',
    'property float y',
    'property float z',
    `element face ${indices.length / 3}`,
    'property list uchar int vertex_indices',
    'end_header',
  ]
  for (let i = 0; i < positions.length; i += 3) lines.push(`${positions[i]} ${positions[i + 1]} ${positions[i + 2]}`)
  for (let i = 0; i < indices.length; i += 3) lines.push(`3 ${indices[i]} ${indices[i + 1]} ${indices[i + 2]}`)
  return new TextEncoder().encode(`${lines.join('\n')}\n`)
}

/** A ZIP of the entries, stored or deflated (method 0 or 8). */
export function writeZip(entries: Record<string, Uint8Array>, deflate = false): Uint8Array {
  return zipSync(Object.fromEntries(Object.entries(entries).map(([name, bytes]) => [name, [bytes, { level: deflate ? 6 : 0 }]])))
}

async function convert(target: string): Promise<{ bytes: Uint8Array; extension: string }> {
  switch (target) {
    case 'glb':
      return { bytes: await io.writeBinary(gridMeshDocument({ n: 4 })), extension: 'glb' }
    case 'gltf': {
      const { json: gltf, resources } = await io.writeJSON(gridMeshDocument({ n: 4 }), { basename: 'model' })
      return { bytes: writeZip({ 'model.gltf': new TextEncoder().encode(JSON.stringify(gltf)), ...resources }), extension: 'zip' }
    }
    case 'obj':
      return { bytes: writeObj(4), extension: 'obj' }
    case 'stl':
      return { bytes: writeStl(4), extension: 'stl' }
    case 'ply':
      return { bytes: writePly(4), extension: 'ply' }
    case 'fbx':
      return { bytes: new TextEncoder().encode('Kaydara FBX Binary  \0\x1a\0\xe8\x1c\0\0'), extension: 'fbx' }
    default:
      return {
        bytes: new TextEncoder().encode(
          '<?xml version="1.0"?>\n<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1"></COLLADA>\n',
        ),
        extension: 'dae',
      }
  }
}

async function produce(
  type: TaskType,
  fields: Record<string, string>,
  file: Uint8Array,
): Promise<{ bytes: Uint8Array; extension: string; result?: unknown }> {
  switch (type) {
    case 'convert':
      return convert(fields.target_format ?? 'glb')
    case 'repair':
      return { bytes: await io.writeBinary(gridMeshDocument({ n: 3 })), extension: 'glb' }
    case 'diagnose': {
      const result = {
        format: 'glb',
        version: '2.0',
        file_size_bytes: file.byteLength,
        meshes: [
          {
            name: 'grid',
            vertices: 54,
            triangles: 20,
            has_normals: true,
            has_texcoords: true,
            has_colors: false,
            has_tangents: false,
            skinned: false,
            morph_targets: 0,
            issues: [
              { type: 'duplicate_vertices', count: 38, severity: 'medium' },
              { type: 'degenerate_faces', count: 2, severity: 'low' },
            ],
          },
        ],
        textures: [],
        animations: [],
        total_issues: 2,
        recommendations: ['run repair'],
      }
      return { bytes: new TextEncoder().encode(JSON.stringify(result)), extension: 'json', result }
    }
    case 'texture_optimize':
    case 'texture_ktx2':
      if (new TextDecoder().decode(file.subarray(0, 4)) === 'glTF')
        return { bytes: await retextureGlb(type, fields, file), extension: 'glb' }
      return type === 'texture_optimize' ? optimizeImage(fields, file) : ktx2Image(fields, file)
    default:
      throw new Error(`no stand-in for ${type}`)
  }
}

/** Re-encodes every texture of a GLB the way the operation would. */
async function retextureGlb(type: TaskType, fields: Record<string, string>, file: Uint8Array): Promise<Uint8Array> {
  const doc = await modelIO.readBinary(file)
  for (const texture of doc.getRoot().listTextures()) {
    const made = type === 'texture_optimize' ? await optimizeImage(fields, texture.getImage()!) : ktx2Image(fields, texture.getImage()!)
    texture
      .setImage(made.bytes)
      .setMimeType(made.extension === 'ktx2' ? 'image/ktx2' : `image/${made.extension === 'jpg' ? 'jpeg' : made.extension}`)
  }
  if (type === 'texture_ktx2') doc.createExtension(KHRTextureBasisu).setRequired(true)
  else if (fields.format === 'webp') doc.createExtension(EXTTextureWebP).setRequired(true)
  return modelIO.writeBinary(doc)
}

async function optimizeImage(fields: Record<string, string>, file: Uint8Array): Promise<{ bytes: Uint8Array; extension: string }> {
  const format = fields.format === 'jpeg' ? 'jpeg' : fields.format === 'webp' ? 'webp' : 'png'
  return { bytes: new Uint8Array(await sharp(file).toFormat(format).toBuffer()), extension: format === 'jpeg' ? 'jpg' : format }
}

function ktx2Image(fields: Record<string, string>, file: Uint8Array): { bytes: Uint8Array; extension: string } {
  const size = imageSize(file)!
  const container = createDefaultContainer()
  container.pixelWidth = size.width
  container.pixelHeight = size.height
  container.dataFormatDescriptor[0]!.colorModel = fields.uastc === 'true' ? KHR_DF_MODEL_UASTC : KHR_DF_MODEL_ETC1S
  container.levels = [{ levelData: new Uint8Array(64), uncompressedByteLength: 64 }]
  return { bytes: write(container), extension: 'ktx2' }
}

export function operationsStub(variant: Variant, fault: OperationFault = (_, __, r) => r): Deviation {
  const tasks = new Map<string, StubResult>()
  return {
    async request(request, body) {
      const path = pathOf(request)
      const type = PATHS[path]
      if (type && request.method === 'POST' && !(variant === 'B' && (type === 'diagnose' || type === 'texture_ktx2'))) {
        if (request.headers.get(API_KEY_HEADER) !== API_KEY) return json({ error: ERROR_TEXTS.unauthorized() }, 401)
        const form = await new Request(request.url, {
          method: 'POST',
          headers: request.headers,
          body: body as Uint8Array<ArrayBuffer>,
        }).formData()
        const file = form.get('file') as File | null
        // As Mos decides (docs/api.md): a 0-byte file is missing, a part given twice is refused.
        if (!file || file.size === 0) return json({ error: ERROR_TEXTS.missingField('file') }, 400)
        const twice = [...new Set(form.keys())].find((name) => form.getAll(name).length > 1)
        if (twice) return json({ error: ERROR_TEXTS.invalidField(twice, 'given more than once') }, 400)
        const extension = file.name.includes('.') ? file.name.slice(file.name.lastIndexOf('.') + 1).toLowerCase() : ''
        const accepted: readonly string[] = type.startsWith('texture') ? [...IMAGE_EXTENSIONS, ...MODEL_FORMATS] : MODEL_FORMATS
        if (!accepted.includes(extension)) return json({ error: ERROR_TEXTS.unsupportedFormat(extension) }, 400)
        const fields: Record<string, string> = {}
        for (const [name, value] of form.entries()) if (typeof value === 'string') fields[name] = value
        const input = new Uint8Array(await file.arrayBuffer())
        const made = await produce(type, fields, input)
        const id = `stub-${crypto.randomUUID()}`
        const now = new Date().toISOString()
        const sized = type === 'texture_optimize' || type === 'texture_ktx2'
        const ratio = made.bytes.byteLength / input.byteLength
        const record = {
          task_id: id,
          status: 'completed',
          progress: 100,
          type,
          input_filename: file.name,
          input_size_bytes: input.byteLength,
          created_at: now,
          started_at: now,
          completed_at: now,
          output: {
            filename: `${file.name.replace(/\.[^.]*$/, '')}.${made.extension}`,
            size_bytes: made.bytes.byteLength,
            ...(sized ? { compression_ratio: ratio, savings_percent: (1 - ratio) * 100 } : {}),
          },
          ...(made.result ? { result: made.result } : {}),
        }
        const result = fault(type, fields, { bytes: made.bytes, extension: made.extension, record })
        tasks.set(id, result)
        return json({ task_id: id, status: 'pending' })
      }
      const match = /^\/api\/v1\/tasks\/(stub-[^/]+)(\/download)?$/.exec(path)
      if (match) {
        const task = tasks.get(match[1]!)!
        if (match[2])
          return new Response(task.bytes as Uint8Array<ArrayBuffer>, { headers: { 'content-type': 'application/octet-stream' } })
        return json(task.record)
      }
      return undefined
    },
    // Variant A advertises what the stand-in serves.
    response: (request, response) =>
      pathOf(request) === '/api/v1/capabilities' && variant === 'A' && response.status === 200
        ? mapJson(response, (doc) => ({ ...doc, features: [...TASK_TYPES] }))
        : response,
  }
}
