import { describe, expect, it } from 'vitest'
import type { TaskRecord } from '../src/types.ts'
import { stepLines } from '../src/work/step-reports.tsx'

const completed = (steps: Record<string, unknown>): TaskRecord => ({ task_id: 't', type: 'compress', status: 'completed', ...steps })

describe("a task card's step lines", () => {
  it('names each step the record reports, in the order the steps ran, with its figures', () => {
    const lines = stepLines(
      completed({
        textures_resized: [
          { before: 4_000_000, after: 1_000_000 },
          { before: 10, after: 10, skipped: 'KTX2' },
        ],
        palette: { materials_before: 34, materials_after: 1, entries: 7, textures: [{ bytes: 104 }] },
        instance: { instanced_meshes: 3, instances: 12 },
        merge: { nodes_before: 82, nodes_after: 2, draw_calls_before: 115, draw_calls_after: 77 },
        simplify: {
          target_ratio: 0.5,
          max_error: 0.01,
          triangles_before: 31_894,
          triangles_after: 15_947,
          ratio: 0.5,
          error: 0.00123,
          skipped: ['mesh 2: morph targets'],
        },
        textures_repacked: [
          { before: 5033, after: 215 },
          { before: 144_210, after: 122_503 },
        ],
      }),
    )
    expect(lines).toEqual([
      'Textures resized: 1 (3.81 MB → 976.6 KB)',
      'Palette: 34 materials → 1, 7 colours in 1 texture (104 B)',
      'Instanced: 3 meshes drawn as 12 GPU instances',
      'Merged: 115 → 77 draw calls, 82 → 2 nodes',
      'Simplified: 31,894 → 15,947 triangles (50.0%), error 0.12% of the extent, 1 primitive skipped',
      'Textures re-coded losslessly: 2 (145.7 KB → 119.8 KB)',
    ])
  })

  it('says what a texture operation did to each texture, the one it kept too, and the totals', () => {
    const lines = stepLines(
      completed({
        type: 'texture_optimize',
        textures: [
          {
            name: 'CesiumLogoFlat',
            from: 'image/png',
            to: 'image/png',
            before: 5033,
            after: 5033,
            note: 'original kept: WebP quality 82 would be 5420 bytes, not smaller than its 5033',
          },
          { name: 'wood', from: 'image/jpeg', to: 'image/webp', before: 40_960, after: 20_480 },
          { name: '', from: 'image/ktx2', to: 'image/ktx2', before: 300, after: 300, skipped: 'image/ktx2 is not re-encoded' },
        ],
        texture_bytes_before: 46_293,
        texture_bytes_after: 25_813,
      }),
    )
    expect(lines).toEqual([
      'Texture CesiumLogoFlat: kept as PNG, 4.9 KB → 4.9 KB (original kept: WebP quality 82 would be 5420 bytes, not smaller than its 5033)',
      'Texture wood: JPEG → WebP, 40.0 KB → 20.0 KB',
      'Texture texture 3: left as it was (image/ktx2 is not re-encoded)',
      'Textures in all: 45.2 KB → 25.2 KB',
    ])
    expect(
      stepLines(completed({ textures: [{ name: 'a', from: 'image/png', to: 'image/ktx2', mode: 'etc1s', before: 10, after: 20 }] })),
    ).toEqual(['Texture a: PNG → KTX2 (ETC1S), 10 B → 20 B'])
  })

  it('says what repair fixed, and that it found nothing to fix', () => {
    expect(stepLines(completed({ repairs: { normals_recomputed: 4, duplicate_vertices_merged: 0, unused_removed: 1 } }))).toEqual([
      'Repaired: 4 normals recomputed, 1 unused removed',
    ])
    expect(stepLines(completed({ repairs: { normals_recomputed: 0 } }))).toEqual(['Repaired: nothing, the model needed no repair'])
  })

  it('says what the output-size rule did', () => {
    const note = 'the result, 584.6 KB (598,580 bytes), is larger than the input, 232.3 KB (237,848 bytes): the input is returned unchanged'
    expect(stepLines(completed({ size_rule: { input_bytes: 237_848, result_bytes: 598_580, kept_input: true, note } }))).toEqual([
      `Output size: ${note}`,
    ])
  })

  it('has nothing to say for a task that ran no step', () => {
    expect(stepLines(completed({ output: { filename: 'a.glb', size_bytes: 10 } }))).toEqual([])
    expect(stepLines(completed({ textures_resized: [{ before: 1, after: 1, skipped: 'KTX2' }] }))).toEqual([])
  })
})
