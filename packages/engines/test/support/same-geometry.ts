import { createHash } from 'node:crypto'
import type { Document, TypedArray } from '@gltf-transform/core'
import { expect } from 'vitest'

/**
 * Asserts two documents draw the same geometry in the same layout: per primitive, the same mode,
 * index array (type and values) and, per attribute and morph target, the same array type and values.
 */
export function expectSameGeometry(actual: Document, expected: Document): void {
  const layout = (doc: Document) =>
    doc
      .getRoot()
      .listMeshes()
      .map((mesh) =>
        mesh.listPrimitives().map((prim) => ({
          mode: prim.getMode(),
          indices: digest(prim.getIndices()?.getArray()),
          attributes: Object.fromEntries(prim.listSemantics().map((s) => [s, digest(prim.getAttribute(s)!.getArray())])),
          targets: prim
            .listTargets()
            .map((t) => Object.fromEntries(t.listSemantics().map((s) => [s, digest(t.getAttribute(s)!.getArray())]))),
        })),
      )
  const a = layout(actual)
  const b = layout(expected)
  expect(a.flat().length).toBeGreaterThan(0)
  expect(a).toStrictEqual(b)
  expect(actual.getRoot().listAccessors().length).toBe(expected.getRoot().listAccessors().length)
}

/** An array as its type, length and a hash of its bytes (deep equality element by element takes seconds). */
function digest(array: TypedArray | null | undefined): string | null {
  if (!array) return null
  const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength)
  return `${array.constructor.name}[${array.length}] ${createHash('sha1').update(bytes).digest('hex')}`
}
