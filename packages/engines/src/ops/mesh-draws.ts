import type { Document, Mesh, Node } from '@gltf-transform/core'
import type { InstancedMesh } from '@gltf-transform/extensions'

/** How often the scenes draw a mesh, and the largest scale it is drawn at. */
export interface MeshDraws {
  draws: number
  scale: number
}

/**
 * Every drawn mesh's draws: one per node, or per instance where EXT_mesh_gpu_instancing repeats it,
 * and the largest world scale among them (the instance's own scale included), so that a distance on
 * the mesh can be told in what the viewer sees.
 */
export function meshDraws(doc: Document): Map<Mesh, MeshDraws> {
  const draws = new Map<Mesh, MeshDraws>()
  for (const scene of doc.getRoot().listScenes()) {
    scene.traverse((node) => {
      const mesh = node.getMesh()
      if (!mesh) return
      const batch = node.getExtension<InstancedMesh>('EXT_mesh_gpu_instancing')
      const measured = largestScale(node.getWorldMatrix()) * (batch ? largestInstanceScale(batch) : 1)
      // A transform that is not a number (the file's fault) says nothing of size: the mesh's own is taken.
      const scale = Number.isFinite(measured) ? measured : 1
      const seen = draws.get(mesh) ?? { draws: 0, scale: 0 }
      draws.set(mesh, { draws: seen.draws + instanceCount(batch), scale: Math.max(seen.scale, scale) })
    })
  }
  return draws
}

/** The longest of a matrix's three axes: how much it can stretch a distance. */
function largestScale(m: ReturnType<Node['getWorldMatrix']>): number {
  return Math.max(Math.hypot(m[0], m[1], m[2]), Math.hypot(m[4], m[5], m[6]), Math.hypot(m[8], m[9], m[10]))
}

function instanceCount(batch: InstancedMesh | null): number {
  if (!batch) return 1
  return batch.listAttributes()[0]?.getCount() ?? 1
}

function largestInstanceScale(batch: InstancedMesh): number {
  const scales = batch.getAttribute('SCALE')?.getArray()
  if (!scales) return 1
  let largest = 0
  for (const s of scales) largest = Math.max(largest, Math.abs(s))
  return largest
}
