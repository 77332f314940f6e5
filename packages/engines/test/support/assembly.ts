import { readFile } from 'node:fs/promises'
import type { Document, vec4 } from '@gltf-transform/core'
import { mergeDocuments, unpartition } from '@gltf-transform/functions'
import type { Platform } from '../../src/index.ts'
import { readModel } from '../../src/io/index.ts'

/**
 * OBJ files side by side, 3 units apart on x, each its own part in its own colour, roughness and
 * metalness: a CAD export's assembly (what palette=true is for), from corpus meshes.
 */
export async function colouredAssembly(platform: Platform, objPaths: string[]): Promise<Document> {
  const [doc, ...rest] = await Promise.all(objPaths.map(async (path) => readModel(platform, await readFile(path), 'obj')))
  for (const part of rest) mergeDocuments(doc!, part)
  const [scene, ...others] = doc!.getRoot().listScenes()
  for (const other of others) {
    for (const node of other.listChildren()) scene!.addChild(node)
    other.dispose()
  }
  scene!.listChildren().forEach((node, i) => node.setTranslation([i * 3, 0, 0]))
  doc!
    .getRoot()
    .listMeshes()
    .flatMap((mesh) => mesh.listPrimitives())
    .forEach((prim, i) => {
      const colour: vec4 = [0.8 - i * 0.15, 0.1 + i * 0.2, 0.3 + (i % 2) * 0.5, 1]
      prim.setMaterial(
        doc!
          .createMaterial(`part ${i}`)
          .setBaseColorFactor(colour)
          .setRoughnessFactor(0.4 + i * 0.1)
          .setMetallicFactor(i % 2),
      )
    })
  return doc!.transform(unpartition())
}
