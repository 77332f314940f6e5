import { describe, expect, it } from 'vitest'
import { packageFromFiles, packageFromZip, packageLoading, zipOf } from '../src/viewer/model-package.ts'

const file = (name: string, text = name) => new File([text], name)

describe('a model that comes as several files', () => {
  it('is one package when a .gltf or .obj is dropped with files that are not models', () => {
    expect(packageFromFiles([file('box.gltf'), file('box0.bin'), file('logo.png')])?.main).toBe('box.gltf')
    expect(packageFromFiles([file('spider.mtl'), file('spider.obj')])?.main).toBe('spider.obj')
    // A lone model, two models, or a model that names no files: sent as they are.
    expect(packageFromFiles([file('box.gltf')])).toBeUndefined()
    expect(packageFromFiles([file('a.gltf'), file('b.glb'), file('a.bin')])).toBeUndefined()
    expect(packageFromFiles([file('a.glb'), file('a.png')])).toBeUndefined()
  })

  it('travels as a zip named after its model, and opens again from it', async () => {
    const zip = await zipOf({
      main: 'box.gltf',
      files: new Map([
        ['box.gltf', file('box.gltf', '{}')],
        ['box0.bin', file('box0.bin', 'bin')],
      ]),
    })
    expect(zip.name).toBe('box.zip')
    const back = await packageFromZip(zip)
    expect(back.main).toBe('box.gltf')
    expect(await back.files.get('box0.bin')!.text()).toBe('bin')
    await expect(packageFromZip(await zipOf({ main: 'x', files: new Map([['notes.txt', file('notes.txt')]]) }))).rejects.toThrow(
      'no model file',
    )
  })

  it('answers each name the model gives, however it is written, from the package', () => {
    const files = new Map([
      ['model/scene.gltf', file('scene.gltf')],
      ['model/textures/Wood Grain.png', file('Wood Grain.png')],
      ['model/SpiderTex.jpg', file('SpiderTex.jpg')],
    ])
    const { manager, urls } = packageLoading({ main: 'model/scene.gltf', files })
    const url = (path: string) => urls[[...files.keys()].indexOf(path)]
    expect(manager.resolveURL('model/scene.gltf')).toBe(url('model/scene.gltf'))
    expect(manager.resolveURL('model/textures/Wood%20Grain.png')).toBe(url('model/textures/Wood Grain.png'))
    expect(manager.resolveURL('./textures/Wood Grain.png')).toBe(url('model/textures/Wood Grain.png'))
    expect(manager.resolveURL('.\\spidertex.JPG')).toBe(url('model/SpiderTex.jpg'))
    expect(manager.resolveURL('missing.png')).toBe('missing.png')
    for (const made of urls) URL.revokeObjectURL(made)
  })
})
