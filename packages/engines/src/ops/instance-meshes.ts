import { type Document, MathUtils, type mat4, type Mesh, type Node, type vec3, type vec4 } from '@gltf-transform/core'
import { EXTMeshGPUInstancing } from '@gltf-transform/extensions'

/** What instancing did, for the task's details. */
export interface InstanceReport {
  /** Meshes now drawn once through EXT_mesh_gpu_instancing. */
  instanced_meshes: number
  /** The node transforms those carry as instances. */
  instances: number
}

/**
 * Meshes drawn by two nodes or more (as gltfpack's `-mi`) become one node at the scene's root with
 * EXT_mesh_gpu_instancing, holding each node's world transform as translation, rotation and scale.
 * Repeats are found by mesh identity, so the caller runs `dedup()` first. Not glTF-Transform's
 * `instance()`, which decomposes every world matrix into those three even where they cannot hold it
 * (2CylinderEngine's sheared and mirrored matrices moved parts by half the model): here a node is an
 * instance only when its matrix composes back from them, and never when skinned or animated.
 * The nodes left without a mesh are removed by compress's prune when they hold nothing else.
 */
export function instanceMeshes(doc: Document): InstanceReport {
  const report: InstanceReport = { instanced_meshes: 0, instances: 0 }
  const animated = animatedNodes(doc)
  for (const scene of doc.getRoot().listScenes()) {
    const drawing = new Map<Mesh, { node: Node; trs: [vec3, vec4, vec3] }[]>()
    scene.traverse((node) => {
      const mesh = node.getMesh()
      if (!mesh || node.getSkin() || node.getExtension('EXT_mesh_gpu_instancing') || animated.has(node)) return
      const trs = decomposable(node.getWorldMatrix())
      if (trs) drawing.set(mesh, [...(drawing.get(mesh) ?? []), { node, trs }])
    })
    for (const [mesh, instances] of drawing) {
      if (instances.length < 2) continue
      const attribute = (index: 0 | 1 | 2, type: 'VEC3' | 'VEC4') =>
        doc
          .createAccessor()
          .setType(type)
          .setArray(new Float32Array(instances.flatMap(({ trs }) => [...trs[index]])))
          .setBuffer(doc.getRoot().listBuffers()[0] ?? doc.createBuffer())
      const batch = doc
        .createExtension(EXTMeshGPUInstancing)
        .createInstancedMesh()
        .setAttribute('TRANSLATION', attribute(0, 'VEC3'))
        .setAttribute('ROTATION', attribute(1, 'VEC4'))
        .setAttribute('SCALE', attribute(2, 'VEC3'))
      scene.addChild(doc.createNode(mesh.getName()).setMesh(mesh).setExtension('EXT_mesh_gpu_instancing', batch))
      for (const { node } of instances) node.setMesh(null)
      report.instanced_meshes++
      report.instances += instances.length
    }
  }
  return report
}

/** Nodes an animation moves, and their descendants: their world matrix is not one transform. */
function animatedNodes(doc: Document): Set<Node> {
  const moved = new Set<Node>()
  for (const animation of doc.getRoot().listAnimations()) {
    for (const channel of animation.listChannels()) {
      const node = channel.getTargetNode()
      if (node && channel.getTargetPath() !== 'weights') node.traverse((child) => moved.add(child))
    }
  }
  return moved
}

/** The matrix as translation, rotation and scale, when they compose back to it (no shear, no mirroring lost). */
function decomposable(matrix: mat4): [vec3, vec4, vec3] | undefined {
  const t: vec3 = [0, 0, 0]
  const r: vec4 = [0, 0, 0, 1]
  const s: vec3 = [1, 1, 1]
  MathUtils.decompose(matrix, t, r, s)
  const back = MathUtils.compose(t, r, s, [...matrix] as mat4)
  const size = Math.max(...matrix.map(Math.abs))
  return matrix.every((value, i) => Math.abs(value - back[i]!) <= 1e-5 * size) ? [t, r, s] : undefined
}
