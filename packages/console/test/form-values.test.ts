import { COMPRESS_PRESETS } from '@mos/sdk/contract'
import { describe, expect, it } from 'vitest'
import { applies, carriedOver, formEntries, presetNote, shownValues, withChoice } from '../src/work/form-values.ts'
import type { FieldInfo } from '../src/types.ts'

/** Compress's fields as GET /config gives them (the ones that matter here). */
const compress: FieldInfo[] = [
  { name: 'engine', kind: 'enum', required: true, default: null, choices: ['draco', 'meshopt'] },
  { name: 'level', kind: 'integer', default: 7, min: 1, max: 10 },
  { name: 'preset', kind: 'enum', default: null, choices: ['web', 'mobile', 'archive'], presets: COMPRESS_PRESETS },
  { name: 'simplify_ratio', kind: 'number', default: null, min: 0, max: 1, min_exclusive: true },
  { name: 'texture_max_size', kind: 'integer', default: null, min: 16, max: 16384 },
  { name: 'texture_power_of_two', kind: 'boolean', default: false },
  { name: 'texture_progressive_jpeg', kind: 'boolean', default: false },
  { name: 'merge', kind: 'boolean', default: false },
]

/** Texture optimize's: quality's range and default follow the format. */
const textureOptimize: FieldInfo[] = [
  { name: 'format', kind: 'enum', required: true, default: null, choices: ['webp', 'jpeg', 'png'] },
  {
    name: 'quality',
    kind: 'integer',
    default: 82,
    min: 1,
    max: 100,
    alternatives: [{ when: { field: 'format', equals: 'png' }, min: 1, max: 9, default: 6 }],
  },
]

describe('the form sends what the user set, so presets work as through the API', () => {
  it('sends no default the user left alone', () => {
    expect(formEntries(compress, { engine: 'meshopt', preset: 'mobile' })).toEqual([
      ['engine', 'meshopt'],
      ['preset', 'mobile'],
    ])
  })

  it("shows the preset's values where the user set nothing", () => {
    const chosen = { engine: 'meshopt', preset: 'mobile' }
    expect(shownValues(compress, chosen)).toMatchObject({
      merge: 'true',
      simplify_ratio: '0.5',
      texture_max_size: '1024',
      texture_power_of_two: 'true',
      level: '7',
    })
  })

  it('sends a field the user changed under a preset, which wins there as in the API', () => {
    const chosen = withChoice(compress, { engine: 'meshopt', preset: 'mobile' }, 'merge', 'false')
    expect(formEntries(compress, chosen)).toContainEqual(['merge', 'false'])
    expect(shownValues(compress, chosen).merge).toBe('false')
  })

  it('says on each field what the preset does to it', () => {
    const [merge, ratio, level] = ['merge', 'simplify_ratio', 'level'].map((name) => compress.find((field) => field.name === name)!)
    const mobile = { engine: 'meshopt', preset: 'mobile' }
    expect(presetNote(merge!, compress, mobile)).toBe('Set by preset mobile.')
    expect(presetNote(level!, compress, mobile)).toBe('')
    expect(presetNote(ratio!, compress, { ...mobile, simplify_ratio: '0.75' })).toBe(
      "Your value is sent and wins over preset mobile's 0.5.",
    )
    expect(presetNote(ratio!, compress, { ...mobile, simplify_ratio: '0.5' })).toBe('')
    // Emptied by hand: nothing is sent, so the preset's value is what the service uses.
    expect(presetNote(ratio!, compress, { ...mobile, simplify_ratio: '' })).toBe("Left empty: preset mobile's 0.5 applies.")
    expect(formEntries(compress, { ...mobile, simplify_ratio: '' })).not.toContainEqual(['simplify_ratio', ''])
  })

  it("applies a preset chosen after the fields: the ones it sets take its values, the others keep the user's", () => {
    let chosen = withChoice(compress, { engine: 'draco' }, 'merge', 'true')
    chosen = withChoice(compress, chosen, 'level', '9')
    chosen = withChoice(compress, chosen, 'preset', 'archive')
    expect(shownValues(compress, chosen)).toMatchObject({ merge: 'false', level: '9' })
    expect(formEntries(compress, chosen)).toEqual([
      ['engine', 'draco'],
      ['level', '9'],
      ['preset', 'archive'],
    ])
  })
})

describe('a field whose range changes with another field', () => {
  it("takes the new range's default when the user set none", () => {
    expect(shownValues(textureOptimize, { format: 'webp' }).quality).toBe('82')
    expect(shownValues(textureOptimize, { format: 'png' }).quality).toBe('6')
    expect(formEntries(textureOptimize, { format: 'png' })).toEqual([['format', 'png']])
  })

  it("drops the user's value the new range refuses, and keeps one it allows", () => {
    const high = withChoice(textureOptimize, { format: 'webp', quality: '82' }, 'format', 'png')
    expect(high).toEqual({ format: 'png' })
    expect(shownValues(textureOptimize, high).quality).toBe('6')
    expect(withChoice(textureOptimize, { format: 'webp', quality: '5' }, 'format', 'png')).toEqual({ format: 'png', quality: '5' })
  })

  it('leaves the field being typed in alone, even out of range (the browser says why Start refuses it)', () => {
    expect(withChoice(textureOptimize, { format: 'png' }, 'quality', '50')).toEqual({ format: 'png', quality: '50' })
  })
})

describe('a field that applies under some values of another, or while it is empty', () => {
  // As GET /config gives compress's texture fields (the contract's FieldCondition).
  const textures: FieldInfo[] = [
    { name: 'texture_format', kind: 'enum', default: null, choices: ['webp', 'jpeg', 'png', 'ktx2'] },
    {
      name: 'texture_progressive_jpeg',
      kind: 'boolean',
      default: false,
      applies_when: { field: 'texture_format', equals: ['jpeg'], orAbsent: true },
    },
    {
      name: 'texture_quality',
      kind: 'integer',
      default: 82,
      min: 1,
      max: 100,
      applies_when: { field: 'texture_format', equals: ['jpeg', 'webp'] },
    },
  ]
  const [, progressive, quality] = textures

  it('applies as the contract says: quality with jpeg or webp, progressive JPEG with jpeg or no texture_format', () => {
    expect(['', 'webp', 'jpeg', 'png', 'ktx2'].map((format) => applies(quality!, { texture_format: format }))).toEqual([
      false,
      true,
      true,
      false,
      false,
    ])
    expect(['', 'webp', 'jpeg', 'png', 'ktx2'].map((format) => applies(progressive!, { texture_format: format }))).toEqual([
      true,
      false,
      true,
      false,
      false,
    ])
    expect(applies(progressive!, {})).toBe(true)
  })

  it('sends what applies only: a progressive JPEG set before webp was chosen is not sent', () => {
    const chosen = { texture_progressive_jpeg: 'true', texture_format: 'webp', texture_quality: '70' }
    expect(formEntries(textures, chosen)).toEqual([
      ['texture_format', 'webp'],
      ['texture_quality', '70'],
    ])
  })
})

describe('switching between the single and the batch form', () => {
  it('carries what was set to the fields both forms have, and keeps what the form switched to already had', () => {
    const batchFields: FieldInfo[] = [
      { name: 'engine', kind: 'enum', required: true, choices: ['draco', 'meshopt'] },
      { name: 'level', kind: 'integer', default: 7 },
    ]
    expect(carriedOver(batchFields, { engine: 'meshopt', simplify_ratio: '0.5' }, {})).toEqual({ engine: 'meshopt' })
    expect(carriedOver(batchFields, { engine: 'meshopt', level: '3' }, { level: '9' })).toEqual({ engine: 'meshopt', level: '9' })
  })
})
