// The generated fuzz corpus: real model files mutated the way damaged and hostile uploads are
// (flipped bits, cut ends, inserted bytes, edited header fields, wild numbers in text formats),
// deterministic from one seed so a failing case can be rebuilt from its number.
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { assimp, shared } from '../../../../test/support/corpus.ts'
import { createRandom } from '../../../../test/support/random.ts'
import { storedZip } from '../../../../test/support/stored-zip.ts'

/** Real files the mutations start from: small ones, so hundreds of cases run in a couple of minutes. */
export const FUZZ_SEEDS = [
  assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  shared('glb', 'pirate-meshopt.glb'),
  shared('glb', 'DenseSphere.glb'),
  assimp('glTF2', 'BoxTextured-glTF-Embedded', 'BoxTextured.gltf'),
  assimp('OBJ', 'box.obj'),
  assimp('OBJ', 'concave_polygon.obj'),
  shared('obj', 'suzanne.obj'),
  assimp('PLY', 'cube.ply'),
  assimp('PLY', 'cube_binary.ply'),
  assimp('PLY', 'cube_uv.ply'),
  assimp('STL', 'triangle.stl'),
  assimp('STL', 'sphereWithHole.stl'),
  assimp('STL', 'Spider_binary.stl'),
  assimp('FBX', 'box.fbx'),
  assimp('FBX', 'phong_cube.fbx'),
  assimp('Collada', 'cube_triangulate.dae'),
  assimp('Collada', 'ConcavePolygon.dae'),
  assimp('Collada', 'sphere.dae'),
  // A .gltf with its Draco-compressed .bin, uploaded as a stored zip: mutations reach the zip reader,
  // the glTF JSON and the Draco decoder alike.
  `${assimp('glTF2', 'draco', '2CylinderEngine.gltf')}+${assimp('glTF2', 'draco', '2CylinderEngine.bin')}.zip`,
  // glTF 1.0, read through assimp after Mos's own checks (io/gltf1.ts): embedded, and with its .bin in a zip.
  assimp('glTF', 'BoxTextured-glTF-Embedded', 'BoxTextured.gltf'),
  `${assimp('glTF', 'TwoBoxes', 'TwoBoxes.gltf')}+${assimp('glTF', 'TwoBoxes', 'Box.bin')}.zip`,
]

/** The files a seed names: one path, or `a+b.zip` for the files a and b in a stored zip. */
export function seedPaths(seed: string): string[] {
  return seed.endsWith('.zip') && seed.includes('+') ? seed.slice(0, -4).split('+') : [seed]
}

/** A seed's bytes and upload name. */
function loadSeed(seed: string): { path: string; name: string; bytes: Uint8Array } {
  const paths = seedPaths(seed)
  if (paths.length === 1) return { path: seed, name: basename(seed), bytes: new Uint8Array(readFileSync(seed)) }
  const files = Object.fromEntries(paths.map((path) => [basename(path), new Uint8Array(readFileSync(path))]))
  return { path: seed, name: `${basename(paths[0]!).replace(/\.[^.]+$/, '')}.zip`, bytes: storedZip(files) }
}

/** One operation as a client calls it: the submit path and its form fields. */
export interface FuzzOperation {
  name: string
  path: string
  fields: Record<string, string>
}

/** Every operation of variant A, with the fields that pick its engine or target. */
export const FUZZ_OPERATIONS: FuzzOperation[] = [
  { name: 'compress draco', path: '/api/v1/compress', fields: { engine: 'draco' } },
  { name: 'compress meshopt', path: '/api/v1/compress', fields: { engine: 'meshopt' } },
  // The scene steps read the geometry before the encoder's checks do (the simplifier trusts indices).
  {
    name: 'compress scene steps',
    path: '/api/v1/compress',
    fields: { engine: 'draco', simplify_ratio: '0.5', merge: 'true', instance: 'true', texture_max_size: '256' },
  },
  { name: 'convert', path: '/api/v1/convert', fields: { target_format: 'glb' } },
  { name: 'repair', path: '/api/v1/repair', fields: {} },
  { name: 'diagnose', path: '/api/v1/diagnose', fields: {} },
  { name: 'texture_optimize', path: '/api/v1/textures/optimize', fields: { format: 'webp', quality: '60' } },
  // ETC1S at its lowest quality: the cheapest Basis encode, so textured cases stay short on 2 cores.
  { name: 'texture_ktx2', path: '/api/v1/textures/ktx2', fields: { uastc: 'false', quality: '1' } },
]

/** Convert targets the cases cycle through, so every writer meets damaged documents too. */
const CONVERT_TARGETS = ['glb', 'gltf', 'obj', 'stl', 'ply', 'fbx', 'dae']

export interface FuzzCase {
  index: number
  /** What was done to which file, to rebuild and report the case. */
  label: string
  filename: string
  bytes: Uint8Array
  operation: FuzzOperation
}

type Random = () => number
type Mutation = (bytes: Uint8Array, random: Random) => Uint8Array

const int = (random: Random, n: number) => Math.floor(random() * n)

/** Values a header field is set to: zero, one, the extremes of 32-bit integers and floats. */
const FIELD_VALUES = [0, 1, 0x7fffffff, 0xffffffff, 0x80000000, 0x3b9aca00, 0xffff, 0x7f7fffff, 0xff800000, 0x7fc00000]

/** Replacements for a number in a text format. */
const NUMBER_TEXTS = [
  '1e308',
  '-1e308',
  'NaN',
  'inf',
  '-0',
  '4294967296',
  '99999999999999999999',
  '-1',
  '0',
  '1e-45',
  '2147483648',
  '0x10',
  '',
  '1.2.3',
  '١٢',
]

const TEXT_FORMATS = new Set(['obj', 'gltf', 'dae'])

const bitFlips: Mutation = (bytes, random) => {
  const out = bytes.slice()
  const flips = 1 + int(random, 8)
  for (let i = 0; i < flips; i++) out[int(random, out.length)]! ^= 1 << int(random, 8)
  return out
}

const truncation: Mutation = (bytes, random) => bytes.slice(0, int(random, bytes.length))

const insertion: Mutation = (bytes, random) => {
  const at = int(random, bytes.length + 1)
  const inserted = new Uint8Array(1 + int(random, 64)).map(() => int(random, 256))
  const out = new Uint8Array(bytes.length + inserted.length)
  out.set(bytes.subarray(0, at))
  out.set(inserted, at)
  out.set(bytes.subarray(at), at + inserted.length)
  return out
}

/** Duplicates a slice in place: repeated chunks, nodes or lines, with every offset after it shifted. */
const duplication: Mutation = (bytes, random) => {
  const start = int(random, bytes.length)
  const end = Math.min(bytes.length, start + 1 + int(random, 256))
  const out = new Uint8Array(bytes.length + (end - start))
  out.set(bytes.subarray(0, end))
  out.set(bytes.subarray(start), end)
  return out
}

/** Overwrites a 32-bit little-endian field in the first 128 bytes (lengths, counts, versions, offsets). */
const headerField: Mutation = (bytes, random) => {
  const out = bytes.slice()
  if (out.length < 4) return out
  const at = int(random, Math.min(out.length - 3, 125)) & ~3
  new DataView(out.buffer).setUint32(at, FIELD_VALUES[int(random, FIELD_VALUES.length)]!, true)
  return out
}

/** Replaces numbers of a text format (counts, indices, coordinates) with extreme or malformed ones. */
const numberEdits: Mutation = (bytes, random) => {
  const text = new TextDecoder('latin1').decode(bytes)
  const numbers = [...text.matchAll(/-?\d+(\.\d+)?(e-?\d+)?/gi)]
  if (numbers.length === 0) return bitFlips(bytes, random)
  let out = text
  const edits = 1 + int(random, 4)
  for (let i = 0; i < edits; i++) {
    const match = numbers[int(random, numbers.length)]!
    // Offsets shift after the first edit; a miss only changes another spot, which is as good.
    const at = Math.min(match.index, out.length)
    out = out.slice(0, at) + NUMBER_TEXTS[int(random, NUMBER_TEXTS.length)]! + out.slice(at + match[0].length)
  }
  return latin1Bytes(out)
}

/** Deletes, repeats or swaps lines, or drops a run of characters (a closing tag, a brace, a quote). */
const textEdits: Mutation = (bytes, random) => {
  const lines = new TextDecoder('latin1').decode(bytes).split('\n')
  const i = int(random, lines.length)
  const j = int(random, lines.length)
  switch (int(random, 4)) {
    case 0:
      lines.splice(i, 1 + int(random, 3))
      break
    case 1:
      lines.splice(i, 0, ...Array<string>(1 + int(random, 50)).fill(lines[i] ?? ''))
      break
    case 2:
      ;[lines[i], lines[j]] = [lines[j] ?? '', lines[i] ?? '']
      break
    default: {
      const line = lines[i] ?? ''
      const at = int(random, line.length + 1)
      lines[i] = line.slice(0, at) + line.slice(at + 1 + int(random, 8))
    }
  }
  return latin1Bytes(lines.join('\n'))
}

function latin1Bytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length)
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i) & 0xff
  return out
}

const BINARY_MUTATIONS: [string, Mutation][] = [
  ['bit flips', bitFlips],
  ['truncation', truncation],
  ['insertion', insertion],
  ['duplication', duplication],
  ['header field', headerField],
]

const TEXT_MUTATIONS: [string, Mutation][] = [...BINARY_MUTATIONS, ['numbers', numberEdits], ['numbers', numberEdits], ['lines', textEdits]]

function extensionOf(path: string): string {
  return path.slice(path.lastIndexOf('.') + 1).toLowerCase()
}

/**
 * The corpus: `count` cases from `seed`. Case i runs operation i mod 7 on seed file
 * ⌊i / 7⌋ mod n, so every operation meets every file and every kind of mutation; text formats (OBJ,
 * glTF JSON, COLLADA, ASCII PLY/STL) also get number and line edits, and one case in eight stacks
 * two mutations.
 */
export function generateFuzzCorpus(seed: number, count: number, seeds: string[] = FUZZ_SEEDS): FuzzCase[] {
  const random = createRandom(seed)
  const files = seeds.map(loadSeed)
  const cases: FuzzCase[] = []
  for (let index = 0; index < count; index++) {
    const operationIndex = index % FUZZ_OPERATIONS.length
    const file = files[Math.floor(index / FUZZ_OPERATIONS.length) % files.length]!
    const extension = extensionOf(file.path)
    const text = TEXT_FORMATS.has(extension) || isAsciiText(file.bytes)
    const choices = text ? TEXT_MUTATIONS : BINARY_MUTATIONS
    const names: string[] = []
    let bytes: Uint8Array = file.bytes
    const rounds = random() < 0.125 ? 2 : 1
    for (let r = 0; r < rounds; r++) {
      const [name, mutate] = choices[int(random, choices.length)]!
      names.push(name)
      bytes = mutate(bytes, random)
    }
    let operation = FUZZ_OPERATIONS[operationIndex]!
    if (operation.name === 'convert')
      operation = { ...operation, fields: { target_format: CONVERT_TARGETS[index % CONVERT_TARGETS.length]! } }
    cases.push({
      index,
      label:
        `#${index} ${operation.name} ${operation.fields.target_format ?? ''} on ${file.name} (${names.join(' + ')}, ${bytes.length} bytes)`.replace(
          '  ',
          ' ',
        ),
      filename: file.name,
      bytes,
      operation,
    })
  }
  return cases
}

/** True for ASCII PLY/STL/FBX: their numbers and lines are worth editing as text. */
function isAsciiText(bytes: Uint8Array): boolean {
  const head = bytes.subarray(0, 512)
  if (head.length === 0) return false
  let printable = 0
  for (const byte of head) if (byte === 9 || byte === 10 || byte === 13 || (byte >= 32 && byte < 127)) printable++
  return printable / head.length > 0.97
}
