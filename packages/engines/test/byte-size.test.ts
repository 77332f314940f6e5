// How a task's notes say a size (byte-size.ts): for people, as the console shows sizes, and exactly.
import { describe, expect, it } from 'vitest'
import { byteSize } from '../src/byte-size.ts'

describe('byteSize', () => {
  it('says a size under 1 KB in bytes, a larger one in KB or MB with the exact count beside it', () => {
    expect(byteSize(0)).toBe('0 bytes')
    expect(byteSize(588)).toBe('588 bytes')
    expect(byteSize(1023)).toBe('1,023 bytes')
    expect(byteSize(1024)).toBe('1.0 KB (1,024 bytes)')
    // The repaired cow.obj's size note, which read '376020 bytes'.
    expect(byteSize(376_020)).toBe('367.2 KB (376,020 bytes)')
    // many-cubes.gltf and its .bin unpacked.
    expect(byteSize(1_474_201)).toBe('1.41 MB (1,474,201 bytes)')
  })
})
