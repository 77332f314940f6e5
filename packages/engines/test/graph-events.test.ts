import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Document } from '@gltf-transform/core'
import { describe, expect, it } from 'vitest'
import { skipUnheardGraphEvents } from '../src/graph-events.ts'

const TRACE = fileURLToPath(new URL('./support/graph-event-trace.ts', import.meta.url))

describe('skipUnheardGraphEvents', () => {
  it('installs on the property-graph glTF-Transform ships with, once', () => {
    expect(skipUnheardGraphEvents()).toBe(true)
    expect(skipUnheardGraphEvents()).toBe(true)
  })

  it('delivers to listeners exactly the events they heard before (traced in two processes)', () => {
    const trace = (...flags: string[]) =>
      JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', TRACE, ...flags], { encoding: 'utf8' })) as string[]
    const before = trace()
    const after = trace('--skip-unheard')
    expect(after).toEqual(before)
    expect(after).toContain('node change true translation')
    expect(after.filter((e) => e.startsWith('graph node:create')).length).toBeGreaterThanOrEqual(2)
    expect(after.at(-1)).toBe('graph node:dispose a ')
  })

  it('keeps documents whole: what is created and disposed is tracked, references follow swaps', () => {
    skipUnheardGraphEvents()
    const doc = new Document()
    const [a, b] = [doc.createAccessor('a'), doc.createAccessor('b')]
    const prim = doc.createPrimitive().setAttribute('POSITION', a)
    doc.createMesh('m').addPrimitive(prim)
    prim.swap(a, b)
    expect(prim.getAttribute('POSITION')).toBe(b)
    expect(a.listParents().map((p) => p.propertyType)).toEqual(['Root'])
    a.dispose()
    expect(doc.getRoot().listAccessors()).toEqual([b])
    expect(doc.getRoot().listMeshes()[0]!.listPrimitives()[0]!.getAttribute('POSITION')).toBe(b)
  })
})
