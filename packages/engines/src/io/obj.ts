import { Document, type ILogger, type Material } from '@gltf-transform/core'
import { ModelInputError } from '../errors.ts'
import { flattenDocument } from './flatten.ts'
import { checkAllocation, type ReadOptions } from './limits.ts'
import { buildDocument, GrowableArray, IntMap, type MeshData, type PrimitiveData } from './mesh-builder.ts'
import type { WrittenModel } from './index.ts'
import { createMaterialLibrary, readMtl } from './mtl.ts'
import { triangulatePolygon } from './triangulate.ts'
import { decodeText, finiteOrZero, formatFloat, parseCorners, parseNumbers, TextSink } from './text.ts'
import type { ResolveFile } from './upload-files.ts'
import { zipFiles } from './zip.ts'

/**
 * Most corners one face may have. CAD n-gons have hundreds at most; a single face of millions is a
 * file built to make the reader triangulate and weld one polygon for seconds per megabyte.
 */
export const MAX_FACE_CORNERS = 100_000

export interface ObjReadOptions extends ReadOptions {
  /** Finds the `mtllib` files and textures among the upload's other files (a zip's entries). */
  resolve?: ResolveFile
  /** Hears what the file references but the upload lacks (a missing .mtl or texture); the document keeps it. */
  logger?: ILogger
}

/** Collects the corners of one primitive, one vertex per distinct v/vt/vn triple. */
class PrimitiveBuilder {
  readonly positions = new GrowableArray(Float32Array)
  readonly uvs = new GrowableArray(Float32Array)
  readonly normals = new GrowableArray(Float32Array)
  readonly colors = new GrowableArray(Float32Array)
  readonly indices = new GrowableArray(Uint32Array)
  hasUv = false
  hasNormal = false
  /** Per source position: the first vertex made from it; vertices chain through `next`. */
  private readonly first = new IntMap()
  private readonly vt = new GrowableArray(Uint32Array)
  private readonly vn = new GrowableArray(Uint32Array)
  private readonly next = new GrowableArray(Uint32Array)
  constructor(
    readonly mode: 0 | 1 | 4,
    readonly material: string | undefined,
  ) {}

  corner(v: number, t: number, n: number, data: ObjData): number {
    // Most positions make one or two vertices: a short chain walk beats hashing a string key.
    let index = this.first.get(v)
    let last = -1
    while (index >= 0) {
      if (this.vt.get(index) === t + 1 && this.vn.get(index) === n + 1) {
        this.indices.push(index)
        return index
      }
      last = index
      index = this.next.get(index) - 1
    }
    index = this.positions.length / 3
    if (last < 0) this.first.set(v, index)
    else this.next.set(last, index + 1)
    this.vt.push(t + 1)
    this.vn.push(n + 1)
    this.next.push(0)
    this.positions.push3(data.v.get(v * 3), data.v.get(v * 3 + 1), data.v.get(v * 3 + 2))
    if (data.hasColors) this.colors.push3(data.c.get(v * 3), data.c.get(v * 3 + 1), data.c.get(v * 3 + 2))
    if (t >= 0) {
      this.hasUv = true
      this.uvs.push(data.vt.get(t * 2))
      // OBJ's v axis points up, glTF's down (assimp flips the same way).
      this.uvs.push(1 - data.vt.get(t * 2 + 1))
    } else {
      this.uvs.push(0)
      this.uvs.push(0)
    }
    if (n >= 0) {
      this.hasNormal = true
      this.normals.push3(data.vn.get(n * 3), data.vn.get(n * 3 + 1), data.vn.get(n * 3 + 2))
    } else this.normals.push3(0, 0, 0)
    this.indices.push(index)
    return index
  }
}

interface ObjData {
  v: GrowableArray<Float32Array>
  c: GrowableArray<Float32Array>
  vt: GrowableArray<Float32Array>
  vn: GrowableArray<Float32Array>
  hasColors: boolean
}

/**
 * Reads Wavefront OBJ: v (with optional r g b colours), vt, vn, f (any polygon, triangulated;
 * v, v/vt, v//vn, v/vt/vn; negative indices), l (polylines) and p (points), o/g (one mesh each) and
 * usemtl (one primitive per material). `mtllib` materials and their textures are used when `resolve`
 * finds them (uploads in a zip); a library it does not find is named in a warning, and its
 * materials keep their names only. OBJ's v axis points up, glTF's down: v is flipped on the way in.
 */
export function readObj(bytes: Uint8Array, options: ObjReadOptions = {}): Document {
  // Text expands about 4x into vertex data (a 2-byte "1 " becomes a 4-byte float + index).
  checkAllocation(bytes.byteLength * 4, 'OBJ file', options)
  const text = decodeText(bytes)
  const doc = new Document()
  const parser = new ObjParser()
  forEachStatement(text, (keyword, line, start, end, lineNo) => parser.statement(keyword, line, start, end, lineNo))
  const warnings: string[] = []
  const materials = readMaterialLibraries(doc, parser.mtlFiles, options.resolve ?? (() => undefined), (text) => warnings.push(text))
  const out = meshesOf(doc, parser, materials)
  if (out.every((m) => m.primitives.length === 0) && parser.data.v.length > 0) out.push(pointCloud(parser.data))
  if (out.every((m) => m.primitives.length === 0)) throw new ModelInputError('OBJ file holds no faces, lines or points')
  buildDocument(doc, out)
  if (options.logger) doc.setLogger(options.logger)
  for (const text of warnings) doc.getLogger().warn(text)
  return doc
}

/** One statement: its keyword, and where its arguments lie in `text` (trimmed, comment cut). */
type Statement = (keyword: string, text: string, start: number, end: number, lineNo: number) => void

/** Continuation lines (a trailing backslash) and lone carriage returns: the rare files read line by line. */
const RARE_LINE_BREAKS = /\\(\r?\n|\r)|\r(?!\n)/

/**
 * Calls `statement` for each statement: continuation lines joined, comments and blank lines skipped.
 * A plain line is read in place (no string per line, its keyword and its arguments): a large file has
 * hundreds of thousands of them. Other lines, and files with rare line breaks, are cut as strings.
 */
function forEachStatement(text: string, statement: Statement): void {
  // Two plain searches rule most files out faster than the expression can.
  const rare = (text.includes('\\') || text.includes('\r')) && RARE_LINE_BREAKS.test(text)
  if (rare) return forEachLine(text.split(/\r?\n|\r/), statement)
  const length = text.length
  let nextHash = -1
  let lineNo = 0
  for (let start = 0; start < length; ) {
    let end = text.indexOf('\n', start)
    if (end < 0) end = length
    const next = end + 1
    lineNo++
    // The next '#' at or after this line; none left reads as 2³² - 1 (-1 >>> 0), past every line.
    if (nextHash < start) nextHash = text.indexOf('#', start) >>> 0
    // A comment cuts the line; then the line is trimmed of spaces and control characters.
    if (nextHash < end) end = nextHash
    while (start < end && text.charCodeAt(start) <= 32) start++
    while (end > start && text.charCodeAt(end - 1) <= 32) end--
    if (start < end) {
      const plain = plainKeywordEnd(text, start, end)
      // A line ending in a Unicode space is trimmed as a string, as JavaScript trims.
      if (plain > 0 && text.charCodeAt(end - 1) < 127) statement(text.slice(start, plain), text, plain + 1, end, lineNo)
      else statementOf(text.slice(start, end), statement, lineNo)
    }
    start = next
  }
}

/** The lines of a file read one by one, for the rare files: continuation lines joined. */
function forEachLine(lines: string[], statement: Statement): void {
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!
    // A trailing backslash continues the statement on the next line.
    while (line.endsWith('\\') && i + 1 < lines.length) line = `${line.slice(0, -1)} ${lines[++i]!}`
    const hash = line.indexOf('#')
    if (hash >= 0) line = line.slice(0, hash)
    statementOf(line, statement, i + 1)
  }
}

/** A line cut as a string: trimmed (Unicode spaces too), then its keyword split off at the first whitespace. */
function statementOf(line: string, statement: Statement, lineNo: number): void {
  const trimmed = line.trim()
  if (trimmed === '') return
  const plain = plainKeywordEnd(trimmed, 0, trimmed.length)
  if (plain > 0) return statement(trimmed.slice(0, plain), trimmed, plain + 1, trimmed.length, lineNo)
  const space = trimmed.search(/\s/)
  if (space < 0) return statement(trimmed, '', 0, 0, lineNo)
  const rest = trimmed.slice(space + 1).trim()
  statement(trimmed.slice(0, space), rest, 0, rest.length, lineNo)
}

/**
 * Where the keyword of a trimmed line (`text` from `start` to `end`) ends when the line is plain ASCII
 * up to one space or tab and a printable character after it (`v 1 2 3`, `f 1/1 2/2 3/3`), else 0: the
 * line is then cut by the regular expression and trimmed, as any other. The same cut either way.
 */
function plainKeywordEnd(text: string, start: number, end: number): number {
  for (let k = start; k < end && k < start + 8; k++) {
    const c = text.charCodeAt(k)
    if (c === 32 || c === 9) {
      const next = text.charCodeAt(k + 1)
      return k > start && k + 1 < end && next > 32 && next < 127 ? k : 0
    }
    if (c <= 32 || c >= 127) return 0
  }
  return 0
}

/** The parse state of one file: the shared vertex data, then one builder per mesh and material. */
class ObjParser {
  readonly data: ObjData = {
    v: new GrowableArray(Float32Array),
    c: new GrowableArray(Float32Array),
    vt: new GrowableArray(Float32Array),
    vn: new GrowableArray(Float32Array),
    hasColors: false,
  }
  readonly meshes = new Map<string, Map<string, PrimitiveBuilder>>()
  readonly mtlFiles: string[] = []
  private meshName = 'default'
  /** The builder the last statement used, while the mesh and material stay. */
  private current: PrimitiveBuilder | undefined
  private material: string | undefined
  private readonly values = new Float64Array(7)
  private readonly raw: number[] = []
  /** The corners of the current f/l/p statement (v, t, n triples, -1 when absent). */
  private readonly corners: number[] = []

  /** One statement, its arguments `text` from `start` to `end`. */
  statement(keyword: string, text: string, start: number, end: number, lineNo: number): void {
    switch (keyword) {
      case 'v':
        return this.vertex(text, start, end)
      case 'vt': {
        const found = parseNumbers(text, this.values, start, end)
        this.data.vt.push(found > 0 ? finiteOrZero(this.values[0]) : 0)
        this.data.vt.push(found > 1 ? finiteOrZero(this.values[1]) : 0)
        return
      }
      case 'vn': {
        const found = parseNumbers(text, this.values, start, end)
        const values = this.values
        this.data.vn.push3(finiteOrZero(values[0]), found > 1 ? finiteOrZero(values[1]) : 0, found > 2 ? finiteOrZero(values[2]) : 0)
        return
      }
      case 'f':
        return this.face(text, start, end, lineNo)
      case 'l':
        return this.polyline(text, start, end, lineNo)
      case 'p': {
        const count = this.readCorners(text, start, end, lineNo)
        const prim = this.builder(0)
        for (let k = 0; k < count; k++) prim.corner(this.corners[k * 3]!, -1, -1, this.data)
        return
      }
      case 'o':
      case 'g':
        this.meshName = text.slice(start, end) || 'default'
        this.current = undefined
        return
      case 'usemtl':
        this.material = text.slice(start, end) || undefined
        this.current = undefined
        return
      case 'mtllib':
        this.mtlFiles.push(text.slice(start, end))
        return
      default:
      // s, vp, cstype and other free-form statements are not geometry we can carry
    }
  }

  private vertex(text: string, start: number, end: number): void {
    const { data } = this
    const found = parseNumbers(text, this.values, start, end)
    const t = this.values
    data.v.push3(finiteOrZero(t[0]), finiteOrZero(t[1]), finiteOrZero(t[2]))
    if (found >= 6) {
      if (!data.hasColors) {
        // Vertices before the first coloured one are white.
        for (let k = data.c.length; k < data.v.length - 3; k++) data.c.push(1)
        data.hasColors = true
      }
      data.c.push3(finiteOrZero(t[3]), finiteOrZero(t[4]), finiteOrZero(t[5]))
    } else if (data.hasColors) data.c.push3(1, 1, 1)
  }

  private face(text: string, start: number, end: number, lineNo: number): void {
    if (start === end) throw new ModelInputError(`invalid OBJ: line ${lineNo} is a face without vertices`)
    const count = this.readCorners(text, start, end, lineNo)
    if (count > MAX_FACE_CORNERS) {
      throw new ModelInputError(
        `invalid OBJ: line ${lineNo} is a face of ${count} corners, more than the ${MAX_FACE_CORNERS} a face may have`,
      )
    }
    if (count < 3) return
    const { corners, data } = this
    const prim = this.builder(4)
    if (count === 3) {
      for (let c = 0; c < 3; c++) prim.corner(corners[c * 3]!, corners[c * 3 + 1]!, corners[c * 3 + 2]!, data)
      return
    }
    const triangles = triangulatePolygon(count, (c, axis) => data.v.get(corners[c * 3]! * 3 + axis))
    for (const c of triangles) prim.corner(corners[c * 3]!, corners[c * 3 + 1]!, corners[c * 3 + 2]!, data)
  }

  private polyline(text: string, start: number, end: number, lineNo: number): void {
    const count = this.readCorners(text, start, end, lineNo)
    const prim = this.builder(1)
    for (let k = 0; k + 1 < count; k++) {
      for (const c of [k, k + 1]) prim.corner(this.corners[c * 3]!, this.corners[c * 3 + 1]!, -1, this.data)
    }
  }

  /** The builder of the current mesh and material for primitives of `mode`. */
  private builder(mode: 0 | 1 | 4): PrimitiveBuilder {
    // Faces come in long runs of one mesh and material: the last builder, until o, g or usemtl.
    if (this.current?.mode === mode) return this.current
    let prims = this.meshes.get(this.meshName)
    if (!prims) this.meshes.set(this.meshName, (prims = new Map()))
    const key = `${mode}|${this.material ?? ''}`
    let prim = prims.get(key)
    if (!prim) prims.set(key, (prim = new PrimitiveBuilder(mode, this.material)))
    this.current = prim
    return prim
  }

  /** Parses the corners of an f/l/p statement into `corners`; answers their count. */
  private readCorners(text: string, start: number, end: number, lineNo: number): number {
    const { raw, corners, data } = this
    const count = parseCorners(text, raw, start, end)
    const vertices = data.v.length / 3
    for (let k = 0; k < count; k++) {
      const v = resolveIndex(raw[k * 3]!, vertices)
      if (v < 0) throw new ModelInputError(`invalid OBJ: line ${lineNo} references vertex ${raw[k * 3]}, ${vertices} defined`)
      corners[k * 3] = v
      corners[k * 3 + 1] = raw[k * 3 + 1] ? resolveIndex(raw[k * 3 + 1]!, data.vt.length / 2) : -1
      corners[k * 3 + 2] = raw[k * 3 + 2] ? resolveIndex(raw[k * 3 + 2]!, data.vn.length / 3) : -1
    }
    return count
  }
}

/** The materials of the `mtllib` files found among the uploads, by name; `warn` hears those missing. */
function readMaterialLibraries(
  doc: Document,
  mtlFiles: string[],
  resolve: ResolveFile,
  warn: (text: string) => void,
): Map<string, Material> {
  const materials = new Map<string, Material>()
  for (const name of mtlFiles) {
    // A name with spaces is either one file or several: try the whole first.
    const candidates = [name, ...name.split(/\s+/)]
    const mtl = candidates.map(resolve).find((bytes) => bytes !== undefined)
    if (mtl) readMtl(doc, decodeText(mtl), resolve, materials, warn)
    else
      warn(
        `[obj] materials file "${name}" is not in the upload: materials keep their names only (upload a zip of the .obj, its .mtl and textures)`,
      )
  }
  return materials
}

/** One mesh per o/g name, one primitive per builder with corners; a material no library defined is made by name. */
function meshesOf(doc: Document, parser: ObjParser, materials: Map<string, Material>): MeshData[] {
  const materialFor = (name: string) => {
    let m = materials.get(name)
    if (!m) materials.set(name, (m = doc.createMaterial(name)))
    return m
  }
  const out: MeshData[] = []
  for (const [name, prims] of parser.meshes) {
    const primitives: PrimitiveData[] = []
    for (const prim of prims.values()) {
      if (prim.indices.length === 0) continue
      const triangles = prim.mode === 4
      primitives.push({
        positions: prim.positions.toArray(),
        ...(triangles && prim.hasNormal ? { normals: prim.normals.toArray() } : {}),
        ...(triangles && prim.hasUv ? { uvs: prim.uvs.toArray() } : {}),
        ...(parser.data.hasColors ? { colors: prim.colors.toArray(), colorSize: 3 as const } : {}),
        indices: prim.indices.toArray(),
        mode: prim.mode,
        ...(prim.material !== undefined ? { material: materialFor(prim.material) } : {}),
      })
    }
    out.push({ name, primitives })
  }
  return out
}

/** Only vertices: a point cloud (MeshLab writes one vn per v for these). */
function pointCloud(data: ObjData): MeshData {
  const normals = data.vn.length === data.v.length ? { normals: data.vn.toArray() } : {}
  const colors = data.hasColors ? { colors: data.c.toArray(), colorSize: 3 as const } : {}
  return { name: 'points', primitives: [{ positions: data.v.toArray(), ...normals, ...colors, mode: 0 }] }
}

/** 1-based or negative (relative) OBJ index → 0-based, or -1 when out of range. */
function resolveIndex(i: number, count: number): number {
  if (Number.isNaN(i) || i === 0) return -1
  const index = i > 0 ? i - 1 : count + i
  return index >= 0 && index < count ? index : -1
}

/**
 * Writes OBJ: one `o` group per flattened primitive, world-space `v` (with r g b when the part has
 * vertex colours), `vt`, `vn`, `f` for triangles, `l` for lines and `p` for points, `usemtl` per
 * group when the model has materials. Plain geometry (and materials that are names only) is a bare
 * `.obj`; a model whose materials hold colours or textures is a zip of `model.obj`, `model.mtl` (see
 * `createMaterialLibrary`) and the images it references, which Mos and assimp read back.
 */
export function writeObj(doc: Document): WrittenModel {
  const prims = flattenDocument(doc)
  const library = prims.some((p) => p.material) ? createMaterialLibrary() : undefined
  // Names first, in order of use, so the .mtl lists them as the OBJ meets them.
  for (const p of prims) library?.nameOf(p.material)
  const withMtl = library?.holdsMoreThanNames() ?? false
  const out = new TextSink()
  out.write('# written by Mos\n')
  if (withMtl) out.write(`mtllib ${MTL_FILE}\n`)
  let base = 1
  let baseUv = 1
  let baseNormal = 1
  const f = formatFloat
  for (const p of prims) {
    out.write(`o ${p.name.replace(/\s+/g, '_') || 'mesh'}\n`)
    // Every group names its material: OBJ readers keep the last usemtl across groups.
    if (library) out.write(`usemtl ${library.nameOf(p.material)}\n`)
    const count = p.positions.length / 3
    for (let v = 0; v < count; v++) {
      const x = p.positions[v * 3]!,
        y = p.positions[v * 3 + 1]!,
        z = p.positions[v * 3 + 2]!
      if (p.colors) out.write(`v ${f(x)} ${f(y)} ${f(z)} ${f(p.colors[v * 4]!)} ${f(p.colors[v * 4 + 1]!)} ${f(p.colors[v * 4 + 2]!)}\n`)
      else out.write(`v ${f(x)} ${f(y)} ${f(z)}\n`)
    }
    const uvs = p.mode === 4 ? p.uvs : undefined
    const normals = p.mode === 4 ? p.normals : undefined
    if (uvs) for (let v = 0; v < count; v++) out.write(`vt ${f(uvs[v * 2]!)} ${f(1 - uvs[v * 2 + 1]!)}\n`)
    if (normals) for (let v = 0; v < count; v++) out.write(`vn ${f(normals[v * 3]!)} ${f(normals[v * 3 + 1]!)} ${f(normals[v * 3 + 2]!)}\n`)
    const cornerText = (i: number) => {
      const a = i + base
      if (uvs && normals) return `${a}/${i + baseUv}/${i + baseNormal}`
      if (uvs) return `${a}/${i + baseUv}`
      if (normals) return `${a}//${i + baseNormal}`
      return String(a)
    }
    // Each vertex's corner text is built once, not once per triangle using it.
    const corners: string[] = p.mode === 4 ? Array.from({ length: count }, (_, i) => cornerText(i)) : []
    const idx = p.indices
    if (p.mode === 4)
      for (let t = 0; t < idx.length; t += 3) out.write(`f ${corners[idx[t]!]} ${corners[idx[t + 1]!]} ${corners[idx[t + 2]!]}\n`)
    else if (p.mode === 1) for (let t = 0; t < idx.length; t += 2) out.write(`l ${idx[t]! + base} ${idx[t + 1]! + base}\n`)
    else for (let t = 0; t < idx.length; t++) out.write(`p ${idx[t]! + base}\n`)
    base += count
    if (uvs) baseUv += count
    if (normals) baseNormal += count
  }
  if (!library || !withMtl) return { bytes: out.bytes(), extension: 'obj' }
  const { mtl, images, notes } = library.write()
  // The text deflates well; images are already compressed, so they are stored.
  const bytes = zipFiles({
    [OBJ_FILE]: { bytes: out.bytes(), level: 6 },
    [MTL_FILE]: { bytes: mtl, level: 6 },
    ...Object.fromEntries(images.map((image) => [image.fileName, { bytes: image.bytes, level: 0 as const }])),
  })
  return { bytes, extension: 'zip', ...(notes.length > 0 ? { notes } : {}) }
}

/** The entries of an OBJ zip (image names are the textures' own, never these). */
const OBJ_FILE = 'model.obj'
const MTL_FILE = 'model.mtl'
