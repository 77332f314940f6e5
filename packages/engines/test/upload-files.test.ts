import { Document } from '@gltf-transform/core'
import { strFromU8, unzipSync } from 'fflate'
import { describe, expect, it } from 'vitest'
import { createImageFiles, imageStem } from '../src/io/image-files.ts'
import { writeObj } from '../src/io/obj.ts'
import { texturedTriangle } from './support/textured-triangle.ts'
import { createUploadResolver } from '../src/io/upload-files.ts'

const bytes = (text: string) => new TextEncoder().encode(text)
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
const JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10])

describe('createUploadResolver: a file the model references → an entry of the upload', () => {
  const files = new Map([
    ['models/duck.dae', bytes('dae')],
    ['models/duckCM.tga', bytes('tga')],
    ['models/maps/wood.png', bytes('wood')],
    ['textures/Wood.png', bytes('other wood')],
    ['shared/my tex.png', bytes('spaced')],
    ['shared/a%20b.png', bytes('literal escape')],
  ])
  const resolve = createUploadResolver(files, 'models/duck.dae')
  const text = (reference: string) => {
    const found = resolve(reference)
    return found && new TextDecoder().decode(found)
  }

  it.each([
    ['duckCM.tga', 'tga'],
    ['./duckCM.tga', 'tga'],
    ['.\\duckCM.tga', 'tga'],
    ['DUCKcm.TGA', 'tga'],
    ['file:///C:/Users/me/Desktop/duckCM.tga', 'tga'],
    ['file://localhost/home/me/duckcm.tga', 'tga'],
    ['file:duckCM.tga', 'tga'],
    ['D:\\projects\\art\\duckCM.tga', 'tga'],
    ['/Users/me/duckCM.tga', 'tga'],
    ['maps/wood.png', 'wood'],
    ['maps\\WOOD.png', 'wood'],
    ['../textures/Wood.png', 'other wood'],
    ['..\\..\\..\\textures\\wood.png', 'other wood'],
    ['my%20tex.png', 'spaced'],
    ['a%20b.png', 'literal escape'],
    ['../../../Desktop/my tex.png', 'spaced'],
  ])('%s → %s', (reference, expected) => {
    expect(text(reference)).toBe(expected)
  })

  it('finds nothing for names the upload lacks, empty references and data URIs', () => {
    for (const reference of ['missing.png', '', 'data:image/png;base64,AAAA', 'duckCM.png']) expect(resolve(reference)).toBeUndefined()
  })
})

describe('image file names in written zips', () => {
  it.each([
    ['.\\SpiderTex.jpg', 'SpiderTex'],
    ['._SpiderTex.jpg.jpg', 'SpiderTex'],
    ['../../../Desktop/uv_test.png', 'uv_test'],
    ['.._.._.._Desktop_uv_test.png.png', 'Desktop_uv_test'],
    ['C:\\Users\\me\\My%20Wood.TGA', 'My_Wood'],
    ['file:///C:/art/duckCM.tga', 'duckCM'],
    ['...', ''],
  ])('stem of %s is %s', (name, stem) => {
    expect(imageStem(name)).toBe(stem)
  })

  it('are unique ignoring case, one per texture, with the extension of the bytes', () => {
    const doc = new Document()
    const texture = (name: string, uri: string, image: Uint8Array, mimeType: string) =>
      doc.createTexture(name).setURI(uri).setImage(image).setMimeType(mimeType)
    const a = texture('Wood', '', PNG, 'image/png')
    const b = texture('', 'maps/wood.png', PNG, 'image/png')
    // Declared PNG, holds a JPEG: the name follows the bytes.
    const c = texture('photo', 'photo.png', JPEG, 'image/png')
    const d = texture('', '', PNG, 'image/png')
    const imageFile = createImageFiles()
    expect([a, b, c, d, a].map((t) => imageFile(t).fileName)).toEqual(['Wood.png', 'wood_1.png', 'photo.jpg', 'texture.png', 'Wood.png'])
  })

  it("name an image glTF does not hold by its own type, never .png: its MIME type's, else its URI's", () => {
    const dds = new Uint8Array(136)
    dds.set(bytes('DDS '))
    // A glTF file's MSFT_texture_dds image, a file of an unknown type named by its URI, and one that says nothing.
    const { doc, texture: rock } = texturedTriangle('rock', dds, 'image/vnd-ms.dds')
    const sky = doc.createTexture('').setURI('maps/sky.EXR').setImage(bytes('v/1\u0001'))
    const blob = doc.createTexture('blob').setImage(bytes('????'))
    const imageFile = createImageFiles()
    expect([rock, sky, blob].map((t) => imageFile(t).fileName)).toEqual(['rock.dds', 'sky.exr', 'blob.bin'])
    // As an OBJ writes it: the .mtl names the file the zip holds.
    const files = unzipSync(writeObj(doc).bytes)
    expect(Object.keys(files).filter((name) => !/\.(obj|mtl)$/.test(name))).toEqual(['rock.dds'])
    expect(strFromU8(Object.entries(files).find(([name]) => name.endsWith('.mtl'))![1])).toContain('map_Kd rock.dds')
  })
})
