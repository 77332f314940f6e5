import { describe, expect, it } from 'vitest'
import { extensionOf } from '../src/viewer/load-model.ts'
import { chosenProblems } from '../src/work/chosen-problems.ts'

const compress = { type: 'compress', input_formats: ['glb', 'obj'] }
const file = (name: string, bytes: number) => new File([new Uint8Array(bytes)], name)

describe('what the page says of the files chosen', () => {
  it('says nothing of models the operation takes', () => {
    expect(chosenProblems([file('a.glb', 10), file('b.obj', 3)], compress, extensionOf)).toBe('')
  })

  it('names a format the operation does not take, and an empty file, each in its words', () => {
    expect(chosenProblems([file('notes.txt', 5)], compress, extensionOf)).toBe('notes.txt: compress takes glb, obj files')
    expect(chosenProblems([file('empty.glb', 0), file('a.glb', 10)], compress, extensionOf)).toBe(
      'empty.glb: the file is empty (0 bytes), which the service refuses',
    )
    // An empty file of a format not taken is said once, for its format.
    expect(chosenProblems([file('notes.txt', 0), file('x.obj', 0), file('y.glb', 0)], compress, extensionOf)).toBe(
      'notes.txt: compress takes glb, obj files. x.obj, y.glb: the files are empty (0 bytes), which the service refuses',
    )
  })
})
