import { describe, expect, expectTypeOf, it } from 'vitest'
import { COMPRESS_PRESETS, compressFieldSpecs, describeRule, ERROR_TEXTS, parseCompressFields } from '../src/contract/index.ts'
import { createClient } from '../src/index.ts'

describe("compress's Mos extension fields in the contract", () => {
  it('declares them as extensions, a decimal share with an exclusive least value among them', () => {
    const specs = compressFieldSpecs('A')
    const extensions = specs.filter((spec) => spec.extension).map((spec) => spec.name)
    expect(extensions).toEqual([
      'meshopt_extension',
      'preset',
      'simplify_ratio',
      'simplify_error',
      'texture_max_size',
      'texture_power_of_two',
      'texture_progressive_jpeg',
      'palette',
      'merge',
      'instance',
    ])
    const ratio = specs.find((spec) => spec.name === 'simplify_ratio')!
    expect(ratio).toMatchObject({ kind: 'number', min: 0, max: 1, minExclusive: true })
    expect(describeRule(ratio)).toBe('must be a number above 0 and at most 1')
  })

  it('parses decimals and refuses what is not one, or out of range, with the contract text', () => {
    const parse = (simplify_ratio: string) => parseCompressFields('B', { engine: 'draco', simplify_ratio })
    expect(parse('0.5')).toMatchObject({ ok: true, value: { simplify_ratio: 0.5 } })
    expect(parse('.25')).toMatchObject({ ok: true, value: { simplify_ratio: 0.25 } })
    expect(parse('1')).toMatchObject({ ok: true, value: { simplify_ratio: 1 } })
    const refused = { ok: false, error: ERROR_TEXTS.invalidField('simplify_ratio', 'must be a number above 0 and at most 1') }
    for (const bad of ['0', '-0.5', '1.01', '1e', 'half', '0x1']) expect(parse(bad), bad).toEqual(refused)
  })

  it('without the fields, parses as the published interface does (the extensions at their neutral values)', () => {
    expect(parseCompressFields('A', { engine: 'meshopt' })).toEqual({
      ok: true,
      value: {
        engine: 'meshopt',
        level: 7,
        meshopt_compression_level: 'high',
        meshopt_extension: 'ext',
        texture_power_of_two: false,
        texture_progressive_jpeg: false,
        palette: false,
        merge: false,
        instance: false,
      },
    })
  })

  it('takes meshopt_extension with meshopt only, ext or khr in any case', () => {
    expect(parseCompressFields('B', { engine: 'meshopt', meshopt_extension: 'KHR' })).toMatchObject({
      ok: true,
      value: { meshopt_extension: 'khr' },
    })
    expect(parseCompressFields('A', { engine: 'meshopt', meshopt_extension: 'zstd' })).toEqual({
      ok: false,
      error: ERROR_TEXTS.invalidField('meshopt_extension', 'must be one of ext, khr'),
    })
    expect(parseCompressFields('A', { engine: 'draco', meshopt_extension: 'khr' })).toEqual({
      ok: false,
      error: ERROR_TEXTS.invalidField('meshopt_extension', 'applies only when engine is meshopt'),
    })
    const draco = parseCompressFields('A', { engine: 'draco' })
    expect(draco.ok && draco.value.meshopt_extension).toBeUndefined()
  })

  it('expands a preset into exactly its fields; an explicit field wins, an empty one does not', () => {
    const parsed = parseCompressFields('A', {
      engine: 'draco',
      preset: 'mobile',
      merge: 'false',
      simplify_ratio: '',
      texture_max_size: '512',
    })
    expect(parsed).toMatchObject({ ok: true, value: { ...COMPRESS_PRESETS.mobile, merge: false, texture_max_size: 512, preset: 'mobile' } })
    expect(parseCompressFields('A', { engine: 'draco', preset: 'WEB' })).toMatchObject({ ok: true, value: COMPRESS_PRESETS.web })
    for (const preset of ['desktop', 'constructor', '__proto__']) {
      expect(parseCompressFields('A', { engine: 'draco', preset }), preset).toEqual({
        ok: false,
        error: ERROR_TEXTS.invalidField('preset', 'must be one of web, mobile, archive'),
      })
    }
  })

  it('types them in the SDK', () => {
    const client = createClient({ baseURL: 'http://x', variant: 'A' })
    const params = expectTypeOf(client.compress).parameter(0)
    params.toHaveProperty('simplify_ratio').toEqualTypeOf<number | undefined>()
    params.toHaveProperty('preset').toEqualTypeOf<'web' | 'mobile' | 'archive' | undefined>()
    params.toHaveProperty('merge').toEqualTypeOf<boolean | undefined>()
    params.toHaveProperty('texture_progressive_jpeg').toEqualTypeOf<boolean | undefined>()
    params.toHaveProperty('palette').toEqualTypeOf<boolean | undefined>()
    params.toHaveProperty('meshopt_extension').toEqualTypeOf<'ext' | 'khr' | undefined>()
    expectTypeOf(client.capabilities).returns.resolves.toHaveProperty('mos_extensions')
  })

  it("types them for a batch too, which applies compress's fields to each of its tasks", () => {
    const client = createClient({ baseURL: 'http://x', variant: 'B' })
    const params = expectTypeOf(client.batchCompress).parameter(0)
    params.toHaveProperty('engine').toEqualTypeOf<'draco' | 'meshopt'>()
    params.toHaveProperty('level').toEqualTypeOf<number | undefined>()
    params.toHaveProperty('position_quantization_bits').toEqualTypeOf<number | undefined>()
    params.toHaveProperty('meshopt_compression_level').toEqualTypeOf<'high' | 'medium' | 'low' | undefined>()
    params.toHaveProperty('simplify_ratio').toEqualTypeOf<number | undefined>()
    params.toHaveProperty('simplify_error').toEqualTypeOf<number | undefined>()
    params.toHaveProperty('texture_max_size').toEqualTypeOf<number | undefined>()
    params.toHaveProperty('preset').toEqualTypeOf<'web' | 'mobile' | 'archive' | undefined>()
    params.toHaveProperty('merge').toEqualTypeOf<boolean | undefined>()
    params.toHaveProperty('instance').toEqualTypeOf<boolean | undefined>()
    params.toHaveProperty('meshopt_extension').toEqualTypeOf<'ext' | 'khr' | undefined>()
    params.toHaveProperty('callback_url').toEqualTypeOf<string | undefined>()
  })
})
