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
      'texture_format',
      'texture_progressive_jpeg',
      'texture_quality',
      'lossy_normal_maps',
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

  it('takes texture_format with its quality (jpeg, webp), lossy_normal_maps (jpeg, webp, ktx2) and progressive JPEG (jpeg or none)', () => {
    const parse = (fields: Record<string, string>) => parseCompressFields('A', { engine: 'meshopt', ...fields })
    expect(parse({ texture_format: 'WebP' })).toMatchObject({
      ok: true,
      value: { texture_format: 'webp', texture_quality: 82, lossy_normal_maps: false },
    })
    const ktx2 = parse({ texture_format: 'ktx2', lossy_normal_maps: 'true' })
    expect(ktx2).toMatchObject({ ok: true, value: { texture_format: 'ktx2', lossy_normal_maps: true } })
    expect(ktx2.ok && ktx2.value).not.toHaveProperty('texture_quality')
    expect(ktx2.ok && ktx2.value).not.toHaveProperty('texture_progressive_jpeg')
    expect(parse({ texture_format: 'jpeg', texture_quality: '60', texture_progressive_jpeg: 'true' })).toMatchObject({
      ok: true,
      value: { texture_quality: 60, texture_progressive_jpeg: true },
    })
    const refused = (name: string, when: string) => ({ ok: false, error: ERROR_TEXTS.invalidField(name, `applies only when ${when}`) })
    expect(parse({ texture_format: 'webp', texture_progressive_jpeg: 'true' })).toEqual(
      refused('texture_progressive_jpeg', 'texture_format is jpeg or not given'),
    )
    expect(parse({ texture_format: 'ktx2', texture_quality: '90' })).toEqual(refused('texture_quality', 'texture_format is jpeg or webp'))
    expect(parse({ texture_format: 'png', texture_quality: '90' })).toEqual(refused('texture_quality', 'texture_format is jpeg or webp'))
    expect(parse({ texture_quality: '90' })).toEqual(refused('texture_quality', 'texture_format is jpeg or webp'))
    expect(parse({ lossy_normal_maps: 'true' })).toEqual(refused('lossy_normal_maps', 'texture_format is jpeg or webp or ktx2'))
    expect(parse({ texture_format: 'png', lossy_normal_maps: 'false' })).toEqual(
      refused('lossy_normal_maps', 'texture_format is jpeg or webp or ktx2'),
    )
    // A bad format is named as such before the fields that depend on it.
    expect(parse({ texture_format: 'avif', texture_quality: '90' })).toEqual({
      ok: false,
      error: ERROR_TEXTS.invalidField('texture_format', 'must be one of webp, jpeg, png, ktx2'),
    })
    expect(parse({ texture_format: 'jpeg', texture_quality: '101' })).toEqual({
      ok: false,
      error: ERROR_TEXTS.invalidField('texture_quality', 'must be an integer from 1 to 100'),
    })
  })

  it("a preset sets only the fields that apply to the request: web with texture_format=webp leaves JPEG's progressive coding out", () => {
    const parsed = parseCompressFields('A', { engine: 'draco', preset: 'web', texture_format: 'webp' })
    expect(parsed).toMatchObject({ ok: true, value: { merge: true, texture_max_size: 2048, texture_format: 'webp' } })
    expect(parsed.ok && parsed.value).not.toHaveProperty('texture_progressive_jpeg')
    const jpeg = parseCompressFields('A', { engine: 'draco', preset: 'web', texture_format: 'jpeg' })
    expect(jpeg).toMatchObject({ ok: true, value: { texture_progressive_jpeg: true, texture_format: 'jpeg' } })
    // No preset sets a texture format: re-encoding lossy textures lossy again is a loss only a request may ask for.
    for (const preset of Object.values(COMPRESS_PRESETS)) expect(preset).not.toHaveProperty('texture_format')
  })

  it('types them in the SDK', () => {
    const client = createClient({ baseURL: 'http://x', variant: 'A' })
    const params = expectTypeOf(client.compress).parameter(0)
    params.toHaveProperty('simplify_ratio').toEqualTypeOf<number | undefined>()
    params.toHaveProperty('preset').toEqualTypeOf<'web' | 'mobile' | 'archive' | undefined>()
    params.toHaveProperty('merge').toEqualTypeOf<boolean | undefined>()
    params.toHaveProperty('texture_progressive_jpeg').toEqualTypeOf<boolean | undefined>()
    params.toHaveProperty('texture_format').toEqualTypeOf<'webp' | 'jpeg' | 'png' | 'ktx2' | undefined>()
    params.toHaveProperty('texture_quality').toEqualTypeOf<number | undefined>()
    params.toHaveProperty('lossy_normal_maps').toEqualTypeOf<boolean | undefined>()
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
    params.toHaveProperty('texture_format').toEqualTypeOf<'webp' | 'jpeg' | 'png' | 'ktx2' | undefined>()
    params.toHaveProperty('callback_url').toEqualTypeOf<string | undefined>()
  })
})
