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

  it('reads plain lines in place as it reads lines cut one by one (files with continuations or lone CRs)', () => {
    // No continuation and no lone CR: each line is read where it lies in the text.
    const inPlace = [
      'o part\r\n',
      'v\t0 0 0\r\n', // a tab after the keyword, CRLF
      'v 1 0 0#a comment right after a number\n',
      '  v 1\t1 0   \n', // leading and trailing spaces
      'v\u00a00 1 0\n', // a no-break space is whitespace to the keyword's cut
      'f 1 2 3\u00a0\n', // and to the trim at the line's end
      '# a whole-line comment\n',
      '\n',
      'usemtl  red  \n',
      'f 1/ 3 4', // no line end at the end of the file
    ].join('')
    const root = readObj(new TextEncoder().encode(inPlace)).getRoot()
    const names = [...root.listMeshes(), ...root.listMaterials()].map((property) => property.getName())
    expect(names).toEqual(['part', 'red'])
    const plain = 'o part\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3\nusemtl red\nf 1 3 4\n'
    expect(geometry(inPlace)).toEqual(geometry(plain))
    // The same lines before a continued one: every line of the file is then cut as a string.
    expect(geometry(`${inPlace}\nv 5 \\\n5 5\n`)).toEqual(geometry(inPlace))
  })
})
