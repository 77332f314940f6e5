import {
  type BufferGeometry,
  type LoadingManager,
  type Material,
  Mesh,
  MeshStandardMaterial,
  type Object3D,
  SRGBColorSpace,
  TextureLoader,
} from 'three'

/**
 * The textures of a PLY as MeshLab, Agisoft and Mos write them: a `comment TextureFile <image>` per
 * image in the header and, when faces differ, a face property `texnumber` choosing among them (-1 or
 * out of range: none). three's PLYLoader reads neither, so a textured PLY (convert's zip of
 * `model.ply` and its images) was drawn plain.
 */
export interface PlyTextures {
  files: string[]
  /** Each triangle's texnumber, in the order PLYLoader makes them (a quad is two); null when faces carry none. */
  perTriangle: Int32Array | null
}

interface Property {
  name: string
  type: string
  /** The type of a list's count; undefined for a scalar. */
  countType?: string
}

interface Element {
  name: string
  count: number
  properties: Property[]
}

type ScalarRead = (view: DataView, offset: number, littleEndian: boolean) => number

/** PLY's scalar types, under both of their names, with their size and how a DataView reads them. */
const SCALARS = new Map(
  (
    [
      [['char', 'int8'], 1, (view, offset) => view.getInt8(offset)],
      [['uchar', 'uint8'], 1, (view, offset) => view.getUint8(offset)],
      [['short', 'int16'], 2, (view, offset, le) => view.getInt16(offset, le)],
      [['ushort', 'uint16'], 2, (view, offset, le) => view.getUint16(offset, le)],
      [['int', 'int32'], 4, (view, offset, le) => view.getInt32(offset, le)],
      [['uint', 'uint32'], 4, (view, offset, le) => view.getUint32(offset, le)],
      [['float', 'float32'], 4, (view, offset, le) => view.getFloat32(offset, le)],
      [['double', 'float64'], 8, (view, offset, le) => view.getFloat64(offset, le)],
    ] satisfies [string[], number, ScalarRead][]
  ).flatMap(([names, size, read]) => names.map((name) => [name, { size, read }] as const)),
)

function parseHeader(text: string): { format: string; files: string[]; elements: Element[] } {
  const elements: Element[] = []
  const files: string[] = []
  let format = 'ascii'
  for (const raw of text.split(/\r\n|\r|\n/)) {
    const line = raw.trim()
    const tokens = line.split(/\s+/)
    if (tokens[0] === 'format') format = tokens[1] ?? format
    // A file name may hold spaces: everything after the keyword.
    else if (tokens[0] === 'comment' && tokens[1] === 'TextureFile' && tokens.length > 2)
      files.push(line.replace(/^comment\s+TextureFile\s+/, ''))
    else if (tokens[0] === 'element') elements.push({ name: tokens[1] ?? '', count: Number(tokens[2]), properties: [] })
    else if (tokens[0] === 'property' && tokens[1] === 'list')
      elements.at(-1)?.properties.push({ name: tokens[4] ?? '', type: tokens[3] ?? '', countType: tokens[2] })
    else if (tokens[0] === 'property') elements.at(-1)?.properties.push({ name: tokens[2] ?? '', type: tokens[1] ?? '' })
  }
  return { format, files, elements }
}

/** Reads one value after another from a PLY body, binary or ASCII. */
type ValueReader = (type: string) => number

function binaryReader(bytes: ArrayBuffer, start: number, littleEndian: boolean): ValueReader {
  const view = new DataView(bytes)
  let at = start
  return (type) => {
    const scalar = SCALARS.get(type)
    if (!scalar) throw new Error(`unknown PLY property type ${type}`)
    const offset = at
    at += scalar.size
    return scalar.read(view, offset, littleEndian)
  }
}

function asciiReader(body: string): ValueReader {
  const tokens = body.split(/\s+/).filter(Boolean)
  let at = 0
  return () => Number(tokens[at++])
}

/** Each face's vertex count and texnumber, skipping the elements before the faces. */
function readFaces(elements: Element[], read: ValueReader): { sides: number; texture: number }[] {
  const faces: { sides: number; texture: number }[] = []
  for (const element of elements) {
    const isFace = element.name === 'face'
    for (let i = 0; i < element.count; i++) {
      let sides = 0
      let texture = -1
      for (const property of element.properties) {
        if (property.countType) {
          const count = read(property.countType)
          for (let k = 0; k < count; k++) read(property.type)
          if (property.name === 'vertex_indices' || property.name === 'vertex_index') sides = count
        } else {
          const value = read(property.type)
          if (property.name === 'texnumber') texture = value
        }
      }
      if (isFace) faces.push({ sides, texture })
    }
    if (isFace) break
  }
  return faces
}

/** What the PLY in `bytes` says of its textures: the images its header names, and each triangle's among them. */
export function readPlyTextures(bytes: ArrayBuffer): PlyTextures {
  const head = new TextDecoder('latin1').decode(new Uint8Array(bytes, 0, Math.min(bytes.byteLength, 65_536)))
  const end = /end_header(\r\n|\r|\n)/.exec(head)
  if (!end) return { files: [], perTriangle: null }
  const { format, files, elements } = parseHeader(head.slice(0, end.index))
  const face = elements.find((element) => element.name === 'face')
  if (files.length === 0 || !face?.properties.some((property) => property.name === 'texnumber')) return { files, perTriangle: null }
  const start = end.index + end[0].length
  const read =
    format === 'ascii'
      ? asciiReader(new TextDecoder().decode(new Uint8Array(bytes, start)))
      : binaryReader(bytes, start, format === 'binary_little_endian')
  const triangles: number[] = []
  // As PLYLoader splits them: a triangle is one, a quad two, other polygons none.
  for (const { sides, texture } of readFaces(elements, read)) {
    const count = sides === 3 ? 1 : sides === 4 ? 2 : 0
    for (let k = 0; k < count; k++) triangles.push(texture)
  }
  return { files, perTriangle: Int32Array.from(triangles) }
}

/**
 * A mesh of a PLY's geometry with its textures: one material per image (loaded through `manager`,
 * which finds the names in the zip) and a plain one for faces without, the triangles grouped by
 * their texnumber; without texnumber every face takes the first image.
 */
export function texturedPlyMesh(geometry: BufferGeometry, textures: PlyTextures, manager?: LoadingManager): Object3D {
  const loader = new TextureLoader(manager)
  const materials: Material[] = textures.files.map((file) => {
    const map = loader.load(file)
    map.colorSpace = SRGBColorSpace
    map.name = file
    return new MeshStandardMaterial({ map, metalness: 0, roughness: 1 })
  })
  const plain = materials.length
  materials.push(new MeshStandardMaterial({ color: 0xb0b8c8 }))
  if (!geometry.getAttribute('normal')) geometry.computeVertexNormals()
  const triangles = Math.floor((geometry.index ?? geometry.getAttribute('position')).count / 3)
  const numberOf = (triangle: number) => {
    const texture = textures.perTriangle ? (textures.perTriangle[triangle] ?? -1) : 0
    return texture >= 0 && texture < plain ? texture : plain
  }
  // Runs of triangles with the same image, one draw each.
  let from = 0
  for (let triangle = 1; triangle <= triangles; triangle++) {
    if (triangle < triangles && numberOf(triangle) === numberOf(from)) continue
    geometry.addGroup(from * 3, (triangle - from) * 3, numberOf(from))
    from = triangle
  }
  return new Mesh(geometry, materials)
}
