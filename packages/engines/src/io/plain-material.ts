import type { Document, Material } from '@gltf-transform/core'

/**
 * The formats whose meshes may come without any material, and whose viewers (MeshLab, Blender,
 * assimp's viewer, obj2gltf, slicers) then draw them grey and matte. glTF's default material is
 * white, metallic 1 and roughness 1, which three.js, Babylon.js and model-viewer without an
 * environment map draw near black: a mesh written with no material would not look as it did.
 * glTF inputs are not here: their author chose glTF's default by leaving the material out.
 * COLLADA and FBX are not here either: assimp gives every mesh a material (its `DefaultMaterial`,
 * 0.8 grey, metallic 0, roughness 1, for an FBX mesh without one).
 */
const DRAWN_GREY = new Set(['obj', 'stl', 'ply'])

/**
 * Which read documents came from such a format, and which. Kept beside the document, not in it:
 * anything in the document (a material, extras) would reach an OBJ, STL or PLY output as well, where
 * a material that is a colour turns a bare `.obj` into a zip with an `.mtl`.
 */
const readFrom = new WeakMap<Document, string>()

/** The plain material's base colour: Blender's default (0.8, linear, as glTF's factor is), as assimp's `DefaultMaterial` above. */
const PLAIN_GREY = 0.8

/**
 * Remembers that `doc` was read from `format`, so that a glTF written from it gives its primitives
 * without a material a plain one ({@link givePlainMaterial}); formats whose viewers draw such meshes
 * as glTF does are not remembered.
 */
export function rememberSourceFormat(doc: Document, format: string): Document {
  if (DRAWN_GREY.has(format)) readFrom.set(doc, format)
  return doc
}

/**
 * For a glTF output of a document read from OBJ, STL or PLY: gives every primitive without a material
 * one shared plain material, non-metallic (metallic 0, roughness 1: what an OBJ without an `.mtl`
 * looks like in its viewers, and what obj2gltf writes for one, at 0.5 grey), base colour 0.8 grey; a
 * primitive with vertex colours gets a white one instead, so that its colours show as they are (glTF
 * multiplies them by the base colour). Returns the task's note, or undefined when nothing changed.
 *
 * @example
 * const note = givePlainMaterial(readObj(cowObj)) // cow.obj has no .mtl
 * // 'no material in the OBJ: 1 primitive given a plain grey non-metallic material, as OBJ viewers show it'
 */
export function givePlainMaterial(doc: Document): string | undefined {
  const format = readFrom.get(doc)
  if (!format) return undefined
  const made = new Map<'grey' | 'white', Material>()
  const plain = (kind: 'grey' | 'white') => {
    let material = made.get(kind)
    if (!material) {
      const shade = kind === 'grey' ? PLAIN_GREY : 1
      material = doc
        .createMaterial(kind === 'grey' ? 'plain' : 'plain (vertex colours)')
        .setBaseColorFactor([shade, shade, shade, 1])
        .setMetallicFactor(0)
        .setRoughnessFactor(1)
      made.set(kind, material)
    }
    return material
  }
  let count = 0
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      if (prim.getMaterial()) continue
      prim.setMaterial(plain(prim.getAttribute('COLOR_0') ? 'white' : 'grey'))
      count++
    }
  }
  if (count === 0) return undefined
  const name = format.toUpperCase()
  const which = count === 1 ? '1 primitive' : `${count} primitives`
  return `no material in the ${name}: ${which} given a plain ${made.has('grey') ? 'grey ' : ''}non-metallic material, as ${name} viewers show it`
}
