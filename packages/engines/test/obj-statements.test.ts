import { describe, expect, it } from 'vitest'
import { readObj } from '../src/io/obj.ts'

/** The positions and indices of every primitive, in order. */
function geometry(text: string): number[][] {
  const doc = readObj(new TextEncoder().encode(text))
  return doc
    .getRoot()
    .listMeshes()
    .flatMap((mesh) => mesh.listPrimitives())
    .flatMap((prim) => [Array.from(prim.getAttribute('POSITION')!.getArray()!), Array.from(prim.getIndices()!.getArray()!)])
}

describe('OBJ statements', () => {
  it('reads a keyword and its values alike whatever spaces, tabs, line ends, comments and continuations surround them', () => {
    const plain = 'v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3\nf 1 3 4\n'
    const varied = [
      'v\t0 0 0\r\n', // a tab after the keyword, CRLF
      'v  1 0 0 # two spaces, then a comment\r', // a lone CR ends the line too
      '  v 1\t1 0   \n', // leading and trailing spaces
      'v\u00a00 1 0\n', // a no-break space is whitespace to the keyword's cut
      'f 1 2 \\\n3\n', // a statement continued on the next line
      'f 1 3 4',
    ].join('')
    expect(geometry(varied)).toEqual(geometry(plain))
  })
})
