import { readFile } from 'node:fs/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { createEnginePool, OPERATION_NAMES, OPERATIONS, operationFormats, parseOperationOptions, readableFormats } from '../src/index.ts'

const { available, paths } = corpusFiles({
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  cow: shared('obj', 'cow.obj'),
})

describe('the operation registry', () => {
  it('holds one operation per name, each with a schema that parses its defaults', () => {
    expect(new Set(OPERATION_NAMES).size).toBe(OPERATIONS.length)
    expect([...OPERATION_NAMES].sort()).toEqual(['compress', 'convert', 'diagnose', 'repair', 'texture_ktx2', 'texture_optimize'])
    const required: Record<string, Record<string, unknown>> = {
      compress: { engine: 'draco' },
      convert: { target_format: 'glb' },
      texture_optimize: { format: 'webp' },
    }
    for (const operation of OPERATIONS) {
      const parsed = operation.options.safeParse({ ...required[operation.name], ...operation.defaults })
      expect(parsed.success, `${operation.name} defaults`).toBe(true)
    }
  })

  it('parses options instead of trusting them, naming the option that fails', () => {
    const ok = parseOperationOptions('compress', { engine: 'meshopt', level: 9, meshopt_compression_level: 'low' })
    expect(ok.ok && ok.options).toEqual({ engine: 'meshopt', level: 9, meshopt_compression_level: 'low' })
    const badLevel = parseOperationOptions('compress', { engine: 'draco', level: '7' })
    expect(!badLevel.ok && badLevel.message).toMatch(/^invalid compress option level: .*number/)
    const badEngine = parseOperationOptions('compress', { engine: 'zstd' })
    expect(!badEngine.ok && badEngine.message).toMatch(/^invalid compress option engine: /)
    const badBits = parseOperationOptions('compress', { engine: 'draco', position_quantization_bits: 40 })
    expect(!badBits.ok && badBits.message).toMatch(/^invalid compress option position_quantization_bits: /)
    const badUastc = parseOperationOptions('texture_ktx2', { uastc: 'yes' })
    expect(!badUastc.ok && badUastc.message).toMatch(/^invalid texture_ktx2 option uastc: /)
    expect(parseOperationOptions('explode', {})).toEqual({ ok: false, message: 'unknown operation: explode' })
  })

  it('says which inputs each operation takes', () => {
    expect(operationFormats('compress')).toEqual(readableFormats())
    expect(operationFormats('texture_optimize')).toEqual([...readableFormats(), 'png', 'jpg', 'jpeg', 'webp'])
    expect(operationFormats('texture_ktx2')).toContain('jpg')
    expect(operationFormats('repair')).not.toContain('png')
  })
})

describe.skipIf(!available)('options crossing into the engine thread', () => {
  const pool = createEnginePool({ threads: 1 })
  afterAll(() => pool.destroy())
  const run = async (name: 'compress' | 'texture_optimize', options: Record<string, unknown>, path = paths.box) =>
    pool.run({ name, input: { bytes: new Uint8Array(await readFile(path)) }, format: path.slice(path.lastIndexOf('.') + 1), options })

  it('an invalid option fails the job with a message naming it', async () => {
    expect(await run('compress', { engine: 'zstd' })).toEqual({
      ok: false,
      message: expect.stringMatching(/^invalid compress option engine: .*draco.*meshopt/),
    })
    expect(await run('compress', { engine: 'draco', normal_quantization_bits: 'ten' })).toEqual({
      ok: false,
      message: expect.stringMatching(/^invalid compress option normal_quantization_bits: /),
    })
    expect(await run('texture_optimize', { format: 'webp', quality: 1.5 })).toEqual({
      ok: false,
      message: expect.stringMatching(/^invalid texture_optimize option quality: /),
    })
  })

  it('the server-set read bound is parsed too', async () => {
    expect(await run('compress', { engine: 'draco', maxAllocationBytes: 'lots' })).toEqual({
      ok: false,
      message: expect.stringMatching(/^internal error: invalid job option maxAllocationBytes: /),
    })
  })

  it('input bytes move to the thread: the same bytes a second time fail saying so, a copy runs', async () => {
    const bytes = new Uint8Array(await readFile(paths.box))
    const copy = bytes.slice()
    const first = await pool.run({ name: 'diagnose', input: { bytes }, format: 'glb', options: {} })
    expect(first.ok).toBe(true)
    expect(bytes.byteLength).toBe(0)
    expect(await pool.run({ name: 'diagnose', input: { bytes }, format: 'glb', options: {} })).toEqual({
      ok: false,
      message: 'internal error: the job input bytes were moved to an earlier job (the pool takes them over): pass a copy',
    })
    const again = await pool.run({ name: 'diagnose', input: { bytes: copy }, format: 'glb', options: {} })
    expect(again.ok && again.details).toEqual(first.ok && first.details)
  })

  it('valid options in the contract names run the operation', async () => {
    const draco = await run('compress', { engine: 'draco', level: 7, position_quantization_bits: 10 }, paths.cow)
    expect(draco.ok && draco.extension).toBe('glb')
    // The contract's names reach the transform: coarser positions make a smaller file.
    const fine = await run('compress', { engine: 'draco', level: 7, position_quantization_bits: 20 }, paths.cow)
    expect(draco.ok && fine.ok && draco.size < fine.size).toBe(true)
  })
})
