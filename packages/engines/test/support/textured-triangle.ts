import { Document, type Texture } from '@gltf-transform/core'

/** A document of one triangle with texture coordinates, its material's base colour `image` as `mimeType` under `name`. */
export function texturedTriangle(name: string, image: Uint8Array, mimeType: string): { doc: Document; texture: Texture } {
  const doc = new Document()
  const buffer = doc.createBuffer()
  const accessor = (type: 'VEC3' | 'VEC2', array: Float32Array) => doc.createAccessor().setType(type).setArray(array).setBuffer(buffer)
  const texture = doc.createTexture(name).setImage(image).setMimeType(mimeType)
  const primitive = doc
    .createPrimitive()
    .setAttribute('POSITION', accessor('VEC3', new Float32Array([0, 0, 0, 1, 0, 0, 1, 1, 0])))
    .setAttribute('TEXCOORD_0', accessor('VEC2', new Float32Array([0, 0, 1, 0, 1, 1])))
    .setMaterial(doc.createMaterial(name).setBaseColorTexture(texture))
  doc.createScene().addChild(doc.createNode().setMesh(doc.createMesh().addPrimitive(primitive)))
  return { doc, texture }
}
