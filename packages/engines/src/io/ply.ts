import { Document, type ILogger, type Material } from '@gltf-transform/core'
import { ModelInputError } from '../errors.ts'
import { flattenDocument, type FlatPrimitive } from './flatten.ts'
import { holdsForeignImage, noteForeignTexture } from './foreign-images.ts'
import { createImageFiles, createTextureLoader, type ImageFile } from './image-files.ts'
import type { WrittenModel } from './index.ts'
import { zipFiles } from './zip.ts'
import { checkAllocation, type ReadOptions } from './limits.ts'
import { buildDocument, GrowableArray, type PrimitiveData } from './mesh-builder.ts'
import { triangulatePolygon } from './triangulate.ts'
import type { ResolveFile } from './upload-files.ts'

/** PLY's scalar types by their sized names, and their sizes in bytes. */
const TYPE_SIZES: Record<string, number> = { int8: 1, uint8: 1, int16: 2, uint16: 2, int32: 4, uint32: 4, float32: 4, float64: 8 }

/** PLY 1.0's names of those types, which writers use as much as the sized ones; read as the sized names. */
const TYPE_ALIASES = new Map([
  ['char', 'int8'],
  ['uchar', 'uint8'],
  ['short', 'int16'],
  ['ushort', 'uint16'],
  ['int', 'int32'],
  ['uint', 'uint32'],
  ['float', 'float32'],
  ['double', 'float64'],
])

/** Whether a header names a scalar type this reader knows, by either name. */
function isScalarType(name: string): boolean {
  return Object.hasOwn(TYPE_SIZES, sizedType(name))
}

/** A type's sized name, the one the reader goes by. */
function sizedType(name: string): string {
  return TYPE_ALIASES.get(name) ?? name
}

/** A property of an element, its types by their sized names (sizedType). */
interface PlyProperty {
  name: string
  type: string
  /** Set for list properties: the type of the count. */
  countType?: string
}

interface PlyElement {
  name: string
  count: number
  properties: PlyProperty[]
}

interface PlyHeader {
  format: 'ascii' | 'binary_little_endian' | 'binary_big_endian'
  elements: PlyElement[]
  /** The images `comment TextureFile` lines name (MeshLab, Agisoft), a face's `texnumber` choosing among them. */
  textureFiles: string[]
  /** Byte offset where the body starts. */
  bodyStart: number
}

/** Parses the PLY header (up to `end_header`), validating types. */
function parseHeader(bytes: Uint8Array): PlyHeader {
  const probe = new TextDecoder('latin1').decode(bytes.subarray(0, Math.min(bytes.byteLength, 65536)))
  if (!/^ply\r?\n/.test(probe)) throw new ModelInputError('not a PLY file (missing "ply" magic)')
  const match = /end_header[ \t]*(\r\n|\n|\r)/.exec(probe)
  if (!match) throw new ModelInputError('invalid PLY: no end_header in the first 64 KiB')
  const bodyStart = match.index + match[0].length
  let format: PlyHeader['format'] | undefined
  const elements: PlyElement[] = []
  const textureFiles: string[] = []
  for (const raw of probe
    .slice(0, match.index)
    .split(/\r?\n|\r/)
    .slice(1)) {
    const tokens = raw.trim().split(/\s+/)
    switch (tokens[0]) {
      case 'format':
        if (tokens[1] !== 'ascii' && tokens[1] !== 'binary_little_endian' && tokens[1] !== 'binary_big_endian') {
          throw new ModelInputError(`unsupported PLY format "${tokens[1]}"`)
        }
        format = tokens[1]
        break
      case 'element': {
        const count = Number(tokens[2])
        if (!Number.isSafeInteger(count) || count < 0) throw new ModelInputError(`invalid PLY: element ${tokens[1]} count "${tokens[2]}"`)
        elements.push({ name: tokens[1] ?? '', count, properties: [] })
        break
      }
      case 'property': {
        const element = elements.at(-1)
        if (!element) throw new ModelInputError('invalid PLY: property before any element')
        if (tokens[1] === 'list') {
          if (!isScalarType(tokens[2]!) || !isScalarType(tokens[3]!))
            throw new ModelInputError(`invalid PLY: unknown list types in "${raw.trim()}"`)
          element.properties.push({ name: tokens[4] ?? '', type: sizedType(tokens[3]!), countType: sizedType(tokens[2]!) })
        } else {
          if (!isScalarType(tokens[1]!)) throw new ModelInputError(`invalid PLY: unknown property type "${tokens[1]}"`)
          element.properties.push({ name: tokens[2] ?? '', type: sizedType(tokens[1]!) })
        }
        break
      }
      case 'comment':
        // The file name is the rest of the line: names may hold spaces.
        if (tokens[1] === 'TextureFile' && tokens.length > 2) textureFiles.push(raw.trim().replace(/^comment\s+TextureFile\s+/, ''))
        break
      default:
      // obj_info and blank lines carry nothing we need
    }
  }
  if (!format) throw new ModelInputError('invalid PLY: no format line')
  return { format, elements, bodyStart, textureFiles }
}

/** A cursor over the body that yields numbers in file order (ASCII tokens or binary scalars). */
interface ValueReader {
  read(type: string): number
  /** Most values of `type` the rest of the body could hold: bounds a list's declared length. */
  room(type: string): number
}

function binaryReader(bytes: Uint8Array, start: number, little: boolean): ValueReader {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let at = start
  const need = (n: number) => {
    if (at + n > bytes.byteLength) throw new ModelInputError('truncated PLY: body ends before the declared elements')
  }
  return {
    room: (type) => (bytes.byteLength - at) / TYPE_SIZES[type]!,
    read(type) {
      const size = TYPE_SIZES[type]!
      need(size)
      let value: number
      // A case per type, not a table of reader functions: that table's one call site for eight
      // functions read a 1M-vertex binary PLY in 876 ms against this switch's 718 ms (best of 12).
      switch (type) {
        case 'int8':
          value = view.getInt8(at)
          break
        case 'uint8':
          value = view.getUint8(at)
          break
        case 'int16':
          value = view.getInt16(at, little)
          break
        case 'uint16':
          value = view.getUint16(at, little)
          break
        case 'int32':
          value = view.getInt32(at, little)
          break
        case 'uint32':
          value = view.getUint32(at, little)
          break
        case 'float32':
          value = view.getFloat32(at, little)
          break
        default:
          value = view.getFloat64(at, little)
      }
      at += size
      return value
    },
  }
}

function asciiReader(bytes: Uint8Array, start: number): ValueReader {
  const text = new TextDecoder('latin1').decode(bytes.subarray(start))
  const token = /\S+/g
  return {
    room: () => (text.length - token.lastIndex + 1) / 2,
    read() {
      const match = token.exec(text)
      if (!match) throw new ModelInputError('truncated PLY: body ends before the declared elements')
      const value = Number(match[0])
      if (Number.isNaN(value) && match[0].toLowerCase() !== 'nan')
        throw new ModelInputError(`invalid PLY: "${match[0].slice(0, 40)}" is not a number`)
      return value
    },
  }
}

/**
 * Reads one list property, refusing a length the rest of the file cannot hold: a hostile count
 * fails at once instead of looping until the data runs out.
 */
function readList(reader: ValueReader, prop: PlyProperty & { countType: string }, element: string): number[] {
  const n = reader.read(prop.countType)
  if (!(n >= 0) || !Number.isInteger(n)) {
    throw new ModelInputError(
      `invalid PLY: a ${element}'s ${prop.name} list starts with ${n}, not a length (does each ${element} line hold the list its header declares?)`,
    )
  }
  if (n > reader.room(prop.type))
    throw new ModelInputError(`truncated PLY: a ${element} list declares ${n} values, more than the rest of the file holds`)
  const values: number[] = new Array(n)
  for (let k = 0; k < n; k++) values[k] = reader.read(prop.type)
  return values
}

/** Reads one property of an element: a number, or undefined for a list (read past). */
function readScalar(reader: ValueReader, prop: PlyProperty, element: string): number | undefined {
  if (prop.countType) {
    readList(reader, prop as PlyProperty & { countType: string }, element)
    return undefined
  }
  return reader.read(prop.type)
}

const TRIANGLE = [0, 1, 2]
const COLOR_NAMES = [
  ['red', 'r', 'diffuse_red'],
  ['green', 'g', 'diffuse_green'],
  ['blue', 'b', 'diffuse_blue'],
  ['alpha', 'a', 'diffuse_alpha'],
]
const UV_NAMES = [
  ['s', 'u', 'texture_u', 'texture_s'],
  ['t', 'v', 'texture_v', 'texture_t'],
]

/** What an integer colour is scaled by to 0..1 (8 and 16 bits; wider integers and floats are kept as they are). */
function colorScale(type: string): number {
  if (type === 'uint8' || type === 'int8') return 1 / 255
  if (type === 'uint16' || type === 'int16') return 1 / 65535
  return 1
}

/**
 * Reads PLY: ASCII and binary (little/big endian); vertex positions, normals, colours (integer
 * types scaled to 0..1, floats as is), UVs (s/t, u/v, texture_u/texture_v); faces (polygons
 * triangulated, per-corner `texcoord` lists), triangle strips (-1 restarts) and edges. A file
 * without faces is a point cloud. Counts are checked against the file size and the allocation bound
 * before anything is allocated.
 */
export function readPly(bytes: Uint8Array, options: PlyReadOptions = {}): Document {
  const header = parseHeader(bytes)
  checkDeclaredCounts(header, bytes.byteLength - header.bodyStart, options)
  const reader =
    header.format === 'ascii'
      ? asciiReader(bytes, header.bodyStart)
      : binaryReader(bytes, header.bodyStart, header.format === 'binary_little_endian')
  const geometry: PlyGeometry = {
    colorSize: 3,
    vertexCount: 0,
    triangles: new GrowableArray(Uint32Array),
    cornerUvs: new GrowableArray(Float32Array),
    hasCornerUvs: true,
    lines: new GrowableArray(Uint32Array),
    sawFaces: false,
  }
  for (const element of header.elements) {
    if (element.name === 'vertex') readVertices(reader, element, geometry)
    else if (element.name === 'face' || element.name === 'tristrips') readFaces(reader, element, geometry)
    else if (element.name === 'edge') readEdges(reader, element, geometry)
    // Unknown elements (materials, camera, ...) are read past so later elements line up.
    else for (let e = 0; e < element.count; e++) for (const prop of element.properties) readScalar(reader, prop, element.name)
  }
  const doc = new Document()
  const warnings: string[] = []
  const materials = textureMaterials(doc, header.textureFiles, geometry, options.resolve ?? (() => undefined), (text) =>
    warnings.push(text),
  )
  buildDocument(doc, [{ name: 'ply', primitives: primitivesOf(geometry, materials) }])
  if (options.logger) doc.setLogger(options.logger)
  for (const text of warnings) doc.getLogger().warn(text)
  return doc
}

/** Options of the PLY reader. */
export interface PlyReadOptions extends ReadOptions {
  /** Finds the images `comment TextureFile` names among the upload's other files (a zip's entries). */
  resolve?: ResolveFile
  logger?: ILogger
}

/**
 * A material per `comment TextureFile`, its image as the base colour (metallic 0, roughness 1: a
 * scan's colours, not a metal), or undefined for an image the upload lacks or glTF cannot hold (a
 * warning names it). None where the file has no texture coordinates to read an image with.
 */
function textureMaterials(
  doc: Document,
  files: string[],
  geometry: PlyGeometry,
  resolve: ResolveFile,
  warn: (text: string) => void,
): (Material | undefined)[] {
  if (files.length === 0) return []
  if (!geometry.uvs && !(geometry.hasCornerUvs && geometry.cornerUvs.length > 0)) {
    warn(
      `[ply] ${files.length === 1 ? `texture "${files[0]}"` : `${files.length} textures`} named, but the file has no texture coordinates; dropped`,
    )
    return []
  }
  const texture = createTextureLoader(doc, resolve, warn, 'ply')
  return files.map((file) => {
    const image = texture(file)
    const material = image && doc.createMaterial(image.getName()).setBaseColorTexture(image).setMetallicFactor(0).setRoughnessFactor(1)
    // A GIF that sharp cannot decode after the read is dropped with its material: as if never found, no material.
    if (image && material && holdsForeignImage(image)) noteForeignTexture(image, { undo: () => material.dispose() })
    return material
  })
}

/** What the body's elements add up to, as they are read. */
interface PlyGeometry {
  positions?: Float32Array
  normals?: Float32Array
  uvs?: Float32Array
  colors?: Float32Array
  colorSize: 3 | 4
  vertexCount: number
  triangles: GrowableArray<Uint32Array>
  /** Per-corner UVs of `triangles`, while every face element has a `texcoord` list. */
  cornerUvs: GrowableArray<Float32Array>
  hasCornerUvs: boolean
  lines: GrowableArray<Uint32Array>
  sawFaces: boolean
  /** Each triangle's `texnumber`, when faces carry one. */
  triangleTextures?: GrowableArray<Uint32Array>
}

/** The header's counts against the allocation bound and the body's size, before anything is allocated. */
function checkDeclaredCounts(header: PlyHeader, body: number, options: ReadOptions): void {
  let minimum = 0
  let estimate = 0
  for (const element of header.elements) {
    const perElement = element.properties.reduce((sum, p) => sum + (header.format === 'ascii' ? 2 : TYPE_SIZES[p.countType ?? p.type]!), 0)
    minimum += element.count * perElement
    estimate += element.count * (element.name === 'vertex' ? 12 * 4 : 8 * 4)
  }
  const declared = header.elements.map((e) => `${e.count} ${e.name}`).join(', ')
  checkAllocation(estimate, `PLY header declaring ${declared}`, options)
  // ASCII's last value needs no trailing separator.
  if (minimum - (header.format === 'ascii' ? 1 : 0) > body) {
    throw new ModelInputError(`truncated PLY: header declares ${declared} (at least ${minimum} bytes), body has ${body}`)
  }
}

/** A face's vertex index, checked against the vertices read. */
function checkIndex(geometry: PlyGeometry, i: number): number {
  if (!(i >= 0 && i < geometry.vertexCount && Number.isInteger(i)))
    throw new ModelInputError(`invalid PLY: a face references vertex ${i}, file has ${geometry.vertexCount}`)
  return i
}

function readVertices(reader: ValueReader, element: PlyElement, geometry: PlyGeometry): void {
  const props = element.properties
  geometry.vertexCount = element.count
  const slot = (names: string[]) => props.findIndex((p) => !p.countType && names.includes(p.name))
  const xyz = ['x', 'y', 'z'].map((n) => slot([n]))
  const nxyz = [
    ['nx', 'normal_x'],
    ['ny', 'normal_y'],
    ['nz', 'normal_z'],
  ].map(slot)
  const rgba = COLOR_NAMES.map(slot)
  const st = UV_NAMES.map(slot)
  if (xyz.some((i) => i < 0)) throw new ModelInputError('invalid PLY: vertex element without x, y, z')
  const positions = (geometry.positions = new Float32Array(element.count * 3))
  const normals = nxyz.every((i) => i >= 0) ? (geometry.normals = new Float32Array(element.count * 3)) : undefined
  const uvs = st.every((i) => i >= 0) ? (geometry.uvs = new Float32Array(element.count * 2)) : undefined
  let colors: Float32Array | undefined
  if (rgba.slice(0, 3).every((i) => i >= 0)) {
    geometry.colorSize = rgba[3]! >= 0 ? 4 : 3
    colors = geometry.colors = new Float32Array(element.count * geometry.colorSize)
  }
  const colorSize = geometry.colorSize
  const target = new Int32Array(props.length).fill(-1)
  const scale = new Float32Array(props.length).fill(1)
  // target codes: 0..2 position, 3..5 normal, 6..7 uv, 8..11 colour
  xyz.forEach((p, k) => (target[p] = k))
  if (normals) nxyz.forEach((p, k) => (target[p] = 3 + k))
  if (uvs) st.forEach((p, k) => (target[p] = 6 + k))
  if (colors)
    rgba.slice(0, colorSize).forEach((p, k) => {
      target[p] = 8 + k
      scale[p] = colorScale(props[p]!.type)
    })
  for (let v = 0; v < element.count; v++) {
    for (let p = 0; p < props.length; p++) {
      const value = readScalar(reader, props[p]!, element.name)
      const t = target[p]!
      if (value === undefined || t < 0) continue
      if (t < 3) positions[v * 3 + t] = value
      else if (t < 6) normals![v * 3 + t - 3] = value
      // PLY's t (v) points up, as OBJ's and OpenGL's (Blender, MeshLab and assimp write and read it so); glTF's points down.
      else if (t < 8) uvs![v * 2 + t - 6] = t === 7 ? 1 - value : value
      else colors![v * colorSize + t - 8] = value * scale[p]!
    }
  }
}

/** Faces (polygons triangulated, with per-corner `texcoord` lists) or triangle strips. */
function readFaces(reader: ValueReader, element: PlyElement, geometry: PlyGeometry): void {
  const props = element.properties
  if (element.count > 0) geometry.sawFaces = true
  const indexProp = props.findIndex((p) => p.countType && (p.name === 'vertex_indices' || p.name === 'vertex_index'))
  const uvProp = props.findIndex((p) => p.countType && p.name === 'texcoord')
  const textureProp = props.findIndex((p) => !p.countType && p.name === 'texnumber')
  if (uvProp < 0) geometry.hasCornerUvs = false
  if (textureProp >= 0 && element.name === 'face') geometry.triangleTextures ??= new GrowableArray(Uint32Array)
  const check = (i: number) => checkIndex(geometry, i)
  for (let f = 0; f < element.count; f++) {
    let polygon: number[] = []
    let polygonUvs: number[] = []
    let texture = 0
    for (let p = 0; p < props.length; p++) {
      const prop = props[p]!
      if (!prop.countType) {
        const value = reader.read(prop.type)
        if (p === textureProp) texture = value
        continue
      }
      const values = readList(reader, prop as PlyProperty & { countType: string }, element.name)
      if (p === indexProp) polygon = values
      else if (p === uvProp) polygonUvs = values
    }
    if (element.name === 'tristrips') addStrip(polygon, geometry.triangles, check)
    else addPolygon(geometry, polygon, polygonUvs, texture)
  }
}

function addPolygon(geometry: PlyGeometry, polygon: number[], polygonUvs: number[], texture: number): void {
  for (const index of polygon) checkIndex(geometry, index)
  const { positions } = geometry
  const order = polygon.length === 3 ? TRIANGLE : triangulatePolygon(polygon.length, (c, axis) => positions?.[polygon[c]! * 3 + axis] ?? 0)
  for (let k = 0; k < order.length; k += 3) {
    geometry.triangles.push3(polygon[order[k]!]!, polygon[order[k + 1]!]!, polygon[order[k + 2]!]!)
    // A texnumber naming no texture file draws untextured (0xffffffff).
    geometry.triangleTextures?.push(Number.isInteger(texture) && texture >= 0 ? texture : 0xffffffff)
    if (geometry.hasCornerUvs) {
      for (let c = k; c < k + 3; c++) {
        const v = polygonUvs[order[c]! * 2 + 1]
        geometry.cornerUvs.push(polygonUvs[order[c]! * 2] ?? 0)
        geometry.cornerUvs.push(v === undefined ? 0 : 1 - v)
      }
    }
  }
}

function readEdges(reader: ValueReader, element: PlyElement, geometry: PlyGeometry): void {
  const props = element.properties
  const a = props.findIndex((p) => p.name === 'vertex1')
  const b = props.findIndex((p) => p.name === 'vertex2')
  for (let e = 0; e < element.count; e++) {
    let va = -1
    let vb = -1
    for (let p = 0; p < props.length; p++) {
      const value = readScalar(reader, props[p]!, element.name)
      if (value === undefined) continue
      if (p === a) va = value
      if (p === b) vb = value
    }
    if (a >= 0 && b >= 0) {
      geometry.lines.push(checkIndex(geometry, va))
      geometry.lines.push(checkIndex(geometry, vb))
    }
  }
}

/**
 * Triangles (unwelded when UVs are per corner; one primitive per texture when faces choose among
 * several), lines, or the vertices as a point cloud when there are no faces.
 */
function primitivesOf(geometry: PlyGeometry, materials: (Material | undefined)[]): PrimitiveData[] {
  const { positions, normals, uvs, colors, colorSize, cornerUvs, lines } = geometry
  if (!positions || geometry.vertexCount === 0) throw new ModelInputError('PLY file holds no vertices')
  const base = { positions, ...(normals ? { normals } : {}), ...(uvs ? { uvs } : {}), ...(colors ? { colors, colorSize } : {}) }
  const primitives: PrimitiveData[] = []
  const perCorner = geometry.hasCornerUvs && cornerUvs.length > 0
  for (const group of textureGroups(geometry, materials.length)) {
    const material = materials[group.texture]
    const triangle = group.indices
    const data: PrimitiveData = perCorner
      ? unweld(base, triangle, group.cornerUvs!)
      : group.all
        ? { ...base, indices: triangle, mode: 4 }
        : { ...compact(base, triangle), mode: 4 }
    primitives.push(material ? { ...data, material } : data)
  }
  if (lines.length > 0) primitives.push({ ...base, indices: lines.toArray(), mode: 1 })
  if (!geometry.sawFaces && lines.length === 0) primitives.push({ ...base, mode: 0 })
  if (primitives.length === 0) throw new ModelInputError('PLY file holds no faces')
  return primitives
}

function addStrip(strip: number[], out: GrowableArray<Uint32Array>, check: (i: number) => number): void {
  let start = 0
  for (let i = 0; i <= strip.length; i++) {
    if (i < strip.length && strip[i] !== -1) continue
    for (let k = start; k + 2 < i; k++) {
      const even = (k - start) % 2 === 0
      const a = check(strip[k]!),
        b = check(strip[k + 1]!),
        c = check(strip[k + 2]!)
      if (a === b || b === c || a === c) continue
      if (even) out.push3(a, b, c)
      else out.push3(b, a, c)
    }
    start = i + 1
  }
}

/** The triangles drawn with one texture (`texture` indexes the file's texture list), their corner UVs beside them. */
interface TextureGroup {
  texture: number
  indices: Uint32Array
  cornerUvs?: Float32Array
  /** Every triangle of the file: its vertex arrays serve as they are. */
  all: boolean
}

/** The triangles by the texture their faces name; one group of them all when faces choose none. */
function textureGroups(geometry: PlyGeometry, textures: number): TextureGroup[] {
  const { triangles, cornerUvs, triangleTextures } = geometry
  if (triangles.length === 0) return []
  const all = triangles.toArray()
  const corners = geometry.hasCornerUvs && cornerUvs.length > 0 ? cornerUvs.toArray() : undefined
  const chosen = triangleTextures?.toArray()
  // One texture named, faces choosing it or none (-1, as Mos writes untextured parts beside textured ones): groups still.
  if (textures === 0 || !chosen || chosen.every((t) => t === chosen[0])) {
    return [{ texture: chosen?.[0] ?? 0, indices: all, ...(corners ? { cornerUvs: corners } : {}), all: true }]
  }
  const groups = new Map<number, { indices: number[]; uvs: number[] }>()
  for (let t = 0; t < chosen.length; t++) {
    const key = chosen[t]! < textures ? chosen[t]! : -1
    let group = groups.get(key)
    if (!group) groups.set(key, (group = { indices: [], uvs: [] }))
    group.indices.push(all[t * 3]!, all[t * 3 + 1]!, all[t * 3 + 2]!)
    if (corners) group.uvs.push(...corners.subarray(t * 6, t * 6 + 6))
  }
  return [...groups].map(([texture, group]) => ({
    texture,
    indices: Uint32Array.from(group.indices),
    ...(corners ? { cornerUvs: Float32Array.from(group.uvs) } : {}),
    all: false,
  }))
}

/** The vertices `indices` use, in their order of first use, with the indices renumbered to them. */
function compact(base: Omit<PrimitiveData, 'mode'>, indices: Uint32Array): Omit<PrimitiveData, 'mode'> {
  const remap = new Map<number, number>()
  const order: number[] = []
  const renumbered = indices.map((i) => {
    let j = remap.get(i)
    if (j === undefined) remap.set(i, (j = order.push(i) - 1))
    return j
  })
  const pick = (src: Float32Array | undefined, size: number) => {
    if (!src) return undefined
    const out = new Float32Array(order.length * size)
    order.forEach((i, j) => out.set(src.subarray(i * size, i * size + size), j * size))
    return out
  }
  const colorSize = base.colorSize ?? 3
  const [normals, uvs, colors] = [pick(base.normals, 3), pick(base.uvs, 2), pick(base.colors, colorSize)]
  return {
    positions: pick(base.positions, 3)!,
    ...(normals ? { normals } : {}),
    ...(uvs ? { uvs } : {}),
    ...(colors ? { colors, colorSize } : {}),
    indices: renumbered,
  }
}

/** One vertex per face corner, for files that store UVs per corner (`texcoord` lists). */
function unweld(base: Omit<PrimitiveData, 'mode'>, indices: Uint32Array, corner: Float32Array): PrimitiveData {
  const n = indices.length
  const pick = (src: Float32Array | undefined, size: number) => {
    if (!src) return undefined
    const out = new Float32Array(n * size)
    for (let i = 0; i < n; i++) for (let k = 0; k < size; k++) out[i * size + k] = src[indices[i]! * size + k]!
    return out
  }
  const colorSize = base.colorSize ?? 3
  const normals = pick(base.normals, 3)
  const colors = pick(base.colors, colorSize)
  return {
    positions: pick(base.positions, 3)!,
    ...(normals ? { normals } : {}),
    uvs: corner,
    ...(colors ? { colors, colorSize } : {}),
    mode: 4,
  }
}

/**
 * Writes binary little-endian PLY: all triangles of the flattened scene in one vertex list (normals
 * and UVs when every part has them, colours as uchar RGBA when any has), or its points as a point
 * cloud when it has no triangles. Lines, and points beside triangles, are dropped (target-holds.ts
 * notes them). With UVs, the parts' base colour textures go as MeshLab and Agisoft write them: a
 * `comment TextureFile` per image and, when faces differ, a face `texnumber` (-1: none); the result
 * is then a zip of `model.ply` and the images, as the OBJ writer's is.
 */
export function writePly(doc: Document): WrittenModel {
  const prims = flattenDocument(doc)
  // Beside faces, points would be read back as unused vertices: PLY holds points only as a point cloud.
  const cloud = !prims.some((p) => p.mode === 4)
  const kept = prims.filter((p) => p.mode === 4 || (cloud && p.mode === 0))
  const withUvs = kept.length > 0 && kept.every((p) => p.uvs)
  const textures = faceTextures(
    kept.filter((p) => p.mode === 4),
    withUvs,
  )
  const bytes = plyBody(kept, withUvs, textures)
  // Textures without UVs on every part to read them are not written (target-holds.ts notes them).
  if (textures.files.length === 0) return { bytes, extension: 'ply' }
  // The binary body deflates a little; images are already compressed, so they are stored.
  const zip = zipFiles({
    [PLY_FILE]: { bytes, level: 6 },
    ...Object.fromEntries(textures.files.map((file) => [file.fileName, { bytes: file.bytes, level: 0 as const }])),
  })
  return { bytes: zip, extension: 'zip' }
}

/** The .ply itself: header, then every kept part's vertices, then the faces (with their texnumber). */
function plyBody(kept: FlatPrimitive[], withUvs: boolean, textures: FaceTextures): Uint8Array {
  const withNormals = kept.length > 0 && kept.every((p) => p.normals)
  const withColors = kept.some((p) => p.colors)
  // A point cloud writes one vertex per drawn point (glTF may draw a vertex twice); a mesh writes its vertices.
  const order = (p: FlatPrimitive) => (p.mode === 0 ? p.indices : null)
  const vertices = kept.reduce((sum, p) => sum + (order(p)?.length ?? p.positions.length / 3), 0)
  const faces = kept.filter((p) => p.mode === 4).reduce((sum, p) => sum + p.indices.length / 3, 0)
  const header =
    'ply\nformat binary_little_endian 1.0\ncomment written by Mos\n' +
    textures.files.map((file) => `comment TextureFile ${file.fileName}\n`).join('') +
    `element vertex ${vertices}\nproperty float x\nproperty float y\nproperty float z\n` +
    (withNormals ? 'property float nx\nproperty float ny\nproperty float nz\n' : '') +
    (withUvs ? 'property float s\nproperty float t\n' : '') +
    (withColors ? 'property uchar red\nproperty uchar green\nproperty uchar blue\nproperty uchar alpha\n' : '') +
    `element face ${faces}\nproperty list uchar int vertex_indices\n` +
    (textures.perFace ? 'property int texnumber\n' : '') +
    'end_header\n'
  const head = new TextEncoder().encode(header)
  const vertexSize = 12 + (withNormals ? 12 : 0) + (withUvs ? 8 : 0) + (withColors ? 4 : 0)
  const faceSize = 13 + (textures.perFace ? 4 : 0)
  const bytes = new Uint8Array(head.byteLength + vertices * vertexSize + faces * faceSize)
  bytes.set(head)
  const view = new DataView(bytes.buffer)
  let at = head.byteLength
  const byte = (v: number) => Math.max(0, Math.min(255, Math.round(v * 255)))
  for (const p of kept) {
    const points = order(p)
    const count = points ? points.length : p.positions.length / 3
    for (let i = 0; i < count; i++) {
      const v = points ? points[i]! : i
      for (let k = 0; k < 3; k++, at += 4) view.setFloat32(at, p.positions[v * 3 + k]!, true)
      if (withNormals) for (let k = 0; k < 3; k++, at += 4) view.setFloat32(at, p.normals![v * 3 + k]!, true)
      // t up again, as PLY's readers take it (see readVertices).
      if (withUvs) for (let k = 0; k < 2; k++, at += 4) view.setFloat32(at, k === 1 ? 1 - p.uvs![v * 2 + 1]! : p.uvs![v * 2]!, true)
      if (withColors) for (let k = 0; k < 4; k++, at += 1) bytes[at] = p.colors ? byte(p.colors[v * 4 + k]!) : 255
    }
  }
  let offset = 0
  for (const p of kept) {
    const texture = textures.numberOf(p)
    for (let t = 0; p.mode === 4 && t < p.indices.length; t += 3) {
      bytes[at++] = 3
      for (let k = 0; k < 3; k++, at += 4) view.setInt32(at, p.indices[t + k]! + offset, true)
      if (textures.perFace) {
        view.setInt32(at, texture, true)
        at += 4
      }
    }
    offset += p.positions.length / 3
  }
  return bytes
}

/** The model's entry in a PLY zip (image names are the textures' own). */
const PLY_FILE = 'model.ply'

/** The base colour images a PLY's faces use, and each part's number among them (-1: none). */
interface FaceTextures {
  files: ImageFile[]
  /** Whether faces carry `texnumber`: several images, or parts without one beside parts with one. */
  perFace: boolean
  numberOf(p: FlatPrimitive): number
}

function faceTextures(parts: FlatPrimitive[], withUvs: boolean): FaceTextures {
  const used = [...new Set(parts.flatMap((p) => p.material?.getBaseColorTexture() ?? []))]
  if (!withUvs || used.length === 0) return { files: [], perFace: false, numberOf: () => -1 }
  const imageFile = createImageFiles()
  const files = used.map(imageFile)
  const numberOf = (p: FlatPrimitive) => {
    const texture = p.material?.getBaseColorTexture()
    return texture ? used.indexOf(texture) : -1
  }
  return { files, perFace: new Set(parts.map(numberOf)).size > 1, numberOf }
}
