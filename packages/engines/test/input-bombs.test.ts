import { readFile } from 'node:fs/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { shared } from '../../../test/support/corpus.ts'
import { createEnginePool, type JobName } from '../src/index.ts'
import { ASSIMP_INPUT_LIMITS, checkFbxInput } from '../src/io/assimp-input-limits.ts'
import { encodeFbxBinary, fbxNode } from '../src/io/fbx-binary.ts'
import { bombPng } from './texture-fixtures.ts'
import {
  billionLaughsDae,
  daeWithArrays,
  deepJsonGltf,
  giantObjFace,
  glbOf,
  glbWithImage,
  hugeCountDae,
  hugeCountFbx,
  hugeCountPly,
  hugeCountStl,
  jpegDeclaring,
  manyElementsDae,
  sparseAccessorGlb,
  webpDeclaring,
  zipDeclaring,
  zipInflatingTo,
} from './support/bombs.ts'

// One thread: every bomb runs on the thread the next good job needs, so "the thread stays usable"
// is tested on the very thread the bomb ran on (or on the one that replaced it).
const pool = createEnginePool({ threads: 1, prestart: true })
afterAll(() => pool.destroy())

/**
 * Far more than any of these needs when checked before work, even on a loaded machine; far less
 * than the hang or the minutes each would be otherwise. A bomb that slips through is cancelled at
 * this bound, and its result then names the cancel, not the bomb: the test fails on what it
 * checks, without timing a fast path against the wall clock (a loaded CI machine took 11 s once).
 */
const BOUND_MS = 30_000

const run = (name: JobName, bytes: Uint8Array, format: string, options: Record<string, unknown> = {}) =>
  pool.run(
    { name, input: { bytes: bytes.slice() }, format, options: name === 'convert' ? { target_format: 'glb', ...options } : options },
    { signal: AbortSignal.timeout(BOUND_MS) },
  )

/** A good job right after a bomb: the thread it ran on still works. */
async function expectPoolUsable(): Promise<void> {
  const cow = new Uint8Array(await readFile(shared('obj', 'cow.obj')))
  const result = await run('convert', cow, 'obj')
  expect(result.ok ? 'ok' : result.message).toBe('ok')
}

async function expectRefused(
  name: JobName,
  bytes: Uint8Array,
  format: string,
  message: RegExp,
  options: Record<string, unknown> = {},
): Promise<void> {
  const result = await run(name, bytes, format, options)
  expect(result.ok ? 'completed' : result.message).toMatch(message)
  expect(!result.ok && result.message).not.toMatch(/engine thread failed|stack|\bat \S+:\d+|\/work\/|node_modules/i)
  await expectPoolUsable()
}

describe('bombs in every input format fail fast through the pool, and the thread stays usable', () => {
  it('glTF: a sparse accessor of 10^9 entries in a 600-byte GLB', async () => {
    const bomb = sparseAccessorGlb()
    expect(bomb.byteLength).toBeLessThan(1000)
    await expectRefused('convert', bomb, 'glb', /sparse/)
    await expectRefused('compress', bomb, 'glb', /sparse/, { engine: 'meshopt' })
    await expectRefused('diagnose', bomb, 'glb', /sparse/)
  })

  it('glTF: accessor counts far past the buffers they read', async () => {
    const json = {
      asset: { version: '2.0' },
      buffers: [{ byteLength: 12 }],
      bufferViews: [{ buffer: 0, byteLength: 12 }],
      accessors: [{ bufferView: 0, componentType: 5126, count: 100_000_000, type: 'VEC3' }],
    }
    const bytes = new TextEncoder().encode(JSON.stringify(json))
    await expectRefused('convert', bytes, 'gltf', /accessor.*(limit|past)/)
    await expectRefused('convert', bytes, 'gltf', /accessor 0 ends at byte 1200000000, past the 12 bytes of bufferView 0/, {
      maxAllocationBytes: 4 * 1024 ** 3,
    })
  })

  it('glTF: meshopt views declaring far more than their compressed bytes hold, and a huge fallback buffer', async () => {
    const bytes = new Uint8Array(await readFile(shared('glb', 'pirate-meshopt.glb')))
    const view = new DataView(bytes.buffer, bytes.byteOffset)
    const jsonLength = view.getUint32(12, true)
    const json = JSON.parse(new TextDecoder().decode(bytes.subarray(20, 20 + jsonLength))) as {
      buffers: { byteLength: number }[]
      bufferViews: { byteLength: number; extensions?: { EXT_meshopt_compression?: { count: number; byteStride: number } } }[]
    }
    const bin = bytes.subarray(20 + jsonLength + 8)
    const good = await run('convert', glbOf(json, bin), 'glb')
    expect(good.ok ? 'ok' : good.message).toBe('ok')
    const views = structuredClone(json)
    const ext = views.bufferViews[0]!.extensions!.EXT_meshopt_compression!
    ext.count = 100_000_000
    views.bufferViews[0]!.byteLength = ext.count * ext.byteStride
    views.buffers[1]!.byteLength = ext.count * ext.byteStride + 100_000
    await expectRefused(
      'convert',
      glbOf(views, bin),
      'glb',
      /^invalid glTF: bufferView 0 declares 800000000 bytes of EXT_meshopt_compression data in 11747 compressed bytes, more than the codec can hold$/,
    )
    const fallback = structuredClone(json)
    fallback.buffers[1]!.byteLength = 4_000_000_000
    await expectRefused(
      'diagnose',
      glbOf(fallback, bin),
      'glb',
      /^meshopt-compressed glTF data would need 3\.7 GiB, more than the 1\.0 GiB limit$/,
    )
  })

  it('glTF: JSON nested 100000 deep', async () => {
    await expectRefused('convert', deepJsonGltf(), 'gltf', /^glTF JSON is nested too deeply/)
    await expectRefused('diagnose', deepJsonGltf(), 'gltf', /nested too deeply/)
    await expectRefused('convert', deepJsonGltf(5_000), 'gltf', /^glTF JSON is nested too deeply/)
  })

  it('OBJ: one face of 500000 corners', async () => {
    const bomb = giantObjFace(500_000)
    await expectRefused('convert', bomb, 'obj', /^invalid OBJ: line 4 is a face of 500000 corners/)
  })

  it('PLY and STL: headers declaring billions of elements', async () => {
    await expectRefused('convert', hugeCountPly(), 'ply', /^PLY header declaring 4000000000 vertex would need/)
    await expectRefused('convert', hugeCountStl(), 'stl', /^binary STL declaring 2000000000 triangles would need/)
  })

  it('COLLADA: billion laughs, huge counts, millions of elements', async () => {
    await expectRefused('convert', billionLaughsDae(), 'dae', /^COLLADA file declares XML entities/)
    await expectRefused('convert', hugeCountDae(), 'dae', /^COLLADA file declares 2000000000 elements/)
    await expectRefused('convert', manyElementsDae(), 'dae', /^COLLADA file holds more than \d+ XML elements/)
  })

  it('COLLADA: numbers assimp spins on (inf, 1e308, "10:" in an index list), while the same file with sane numbers reads', async () => {
    const good = await run('convert', daeWithArrays(), 'dae')
    expect(good.ok ? 'ok' : good.message).toBe('ok')
    await expectRefused(
      'convert',
      daeWithArrays('0 0 0 1 inf 0 0 1 0'),
      'dae',
      /^COLLADA <float_array> holds something that is not a number: "inf"$/,
    )
    await expectRefused(
      'convert',
      daeWithArrays('0 0 0 1 1e308 0 0 1 0'),
      'dae',
      /^COLLADA <float_array> holds "1e308", not a finite 32-bit number$/,
    )
    await expectRefused(
      'repair',
      daeWithArrays(undefined, '0 -1e308 2'),
      'dae',
      /^COLLADA <p> holds something that is not an index: "-1e308"$/,
    )
    await expectRefused('diagnose', daeWithArrays(undefined, '0 10: 2'), 'dae', /^COLLADA <p> holds something that is not an index: "10:"$/)
  })

  it('FBX: an array declaring two billion values; more nodes than the bound, binary and ASCII', async () => {
    await expectRefused('convert', hugeCountFbx(), 'fbx', /^FBX file declares 2000000000 elements/)
    // 2 million nodes is 26 MB of binary FBX: the bound is lowered here rather than the file built.
    const manyNodes = encodeFbxBinary([
      fbxNode(
        'Objects',
        [],
        Array.from({ length: 50 }, () => fbxNode('Model')),
      ),
    ])
    expect(() => checkFbxInput(manyNodes)).not.toThrow()
    expect(() => checkFbxInput(manyNodes, { ...ASSIMP_INPUT_LIMITS, maxFbxNodes: 40 })).toThrow(
      'FBX file holds more than 40 nodes, over the limit',
    )
    const asciiNodes = new TextEncoder().encode(`; FBX 7.3.0 project file\nObjects:  {\n${' Model: 1 {\n }\n'.repeat(50)}}\n`)
    expect(() => checkFbxInput(asciiNodes)).not.toThrow()
    expect(() => checkFbxInput(asciiNodes, { ...ASSIMP_INPUT_LIMITS, maxFbxNodes: 40 })).toThrow(
      'FBX file holds more than 40 nodes, over the limit',
    )
  })

  it('images: PNG, JPEG and WebP headers declaring 100000², 65535² and 16384² pixels, alone and inside a GLB (diagnose reads only the header)', async () => {
    const png = bombPng()
    const jpeg = jpegDeclaring()
    await expectRefused('texture_optimize', png, 'png', /declares 100000×100000 pixels, over the limit/, { format: 'webp' })
    await expectRefused('texture_ktx2', jpeg, 'jpg', /declares 65535×65535 pixels, over the limit/)
    await expectRefused('texture_optimize', glbWithImage(png, 'image/png'), 'glb', /declares 100000×100000 pixels, over the limit/, {
      format: 'webp',
    })
    await expectRefused('texture_ktx2', glbWithImage(jpeg, 'image/jpeg'), 'glb', /declares 65535×65535 pixels, over the limit/)
    await expectRefused('texture_optimize', webpDeclaring(), 'webp', /declares 16384×16384 pixels, over the limit/, { format: 'png' })
    // Diagnose never decodes: it reports the bomb's declared size from the header (decoding 10^10 pixels would
    // not end within the bound).
    const diagnosis = await run('diagnose', glbWithImage(png, 'image/png'), 'glb')
    expect(diagnosis.ok).toBe(true)
    expect(JSON.stringify(diagnosis.ok && diagnosis.details)).toMatch(/"width":100000,"height":100000/)
  })

  it('zip: an entry declaring 4 GiB, and one inflating past the bound', async () => {
    await expectRefused(
      'convert',
      zipDeclaring(),
      'zip',
      /^zip entry "model\.obj" declares 4294967280 bytes, more than the \d+ limit per file$/,
    )
    // Its headers declare 10 bytes: only the bound on what inflating produces can stop it.
    await expectRefused(
      'convert',
      zipInflatingTo(64 * 1024 * 1024),
      'zip',
      /^zip entry "model\.obj" inflates past the \d+-byte limit \(zip bomb\?\)$/,
      {
        maxAllocationBytes: 16 * 1024 * 1024,
      },
    )
  })
})
