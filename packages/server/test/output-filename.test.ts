import { describe, expect, it } from 'vitest'
import { contentDisposition } from '../src/routes/content-disposition.ts'
import { outputFilename } from '../src/tasks/task-state.ts'

describe('outputFilename: the result says what was done', () => {
  it.each([
    ['model.glb', 'compress', 'glb', 'glb', { engine: 'draco' }, 'model.draco.glb'],
    ['model.glb', 'compress', 'glb', 'glb', { engine: 'meshopt' }, 'model.meshopt.glb'],
    ['model.obj', 'compress', 'obj', 'glb', { engine: 'draco' }, 'model.draco.glb'],
    ['model.glb', 'repair', 'glb', 'glb', {}, 'model.repaired.glb'],
    ['model.glb', 'diagnose', 'glb', 'json', {}, 'model.diagnosis.json'],
    ['model.glb', 'convert', 'glb', 'obj', { target_format: 'obj' }, 'model.obj'],
    ['model.glb', 'convert', 'glb', 'zip', { target_format: 'gltf' }, 'model.gltf.zip'],
    ['model.glb', 'convert', 'glb', 'zip', { target_format: 'obj' }, 'model.obj.zip'],
    ['duck.zip', 'convert', 'zip', 'zip', { target_format: 'dae' }, 'duck.dae.zip'],
    ['spider.zip', 'convert', 'zip', 'obj', { target_format: 'obj' }, 'spider.obj'],
    ['model.glb', 'convert', 'glb', 'glb', { target_format: 'glb' }, 'model.converted.glb'],
    ['model.glb', 'texture_optimize', 'glb', 'glb', { format: 'webp' }, 'model.textures.glb'],
    ['model.glb', 'texture_ktx2', 'glb', 'glb', {}, 'model.ktx2.glb'],
    ['photo.png', 'texture_optimize', 'png', 'jpg', { format: 'jpeg' }, 'photo.optimized.jpg'],
    ['photo.png', 'texture_ktx2', 'png', 'ktx2', {}, 'photo.ktx2'],
    ['my.scan.v2.glb', 'compress', 'glb', 'glb', { engine: 'draco' }, 'my.scan.v2.draco.glb'],
    ['C:\\models\\chair.glb', 'repair', 'glb', 'glb', {}, 'chair.repaired.glb'],
    ['.glb', 'compress', 'glb', 'glb', { engine: 'meshopt' }, 'model.meshopt.glb'],
  ] as const)('%s, %s (%s → %s, %o) → %s', (input, type, format, extension, options, expected) => {
    expect(outputFilename(input, type, extension, { format, options })).toBe(expected)
  })
})

describe('contentDisposition', () => {
  it('keeps an ASCII name as it is in both forms', () => {
    expect(contentDisposition('model.draco.glb')).toBe(`attachment; filename="model.draco.glb"; filename*=UTF-8''model.draco.glb`)
  })

  it('sends only printable ASCII: accents dropped, the rest replaced, the exact name percent-encoded (RFC 5987)', () => {
    const header = contentDisposition('my "model" ü 模型 (1)*.glb')
    expect(header).toMatch(/^[\x20-\x7e]+$/)
    expect(header).toBe(
      `attachment; filename="my _model_ u __ (1)*.glb"; filename*=UTF-8''my%20%22model%22%20%C3%BC%20%E6%A8%A1%E5%9E%8B%20%281%29%2A.glb`,
    )
    expect(decodeURIComponent(/filename\*=UTF-8''(\S+)$/.exec(header)![1]!)).toBe('my "model" ü 模型 (1)*.glb')
  })
})
