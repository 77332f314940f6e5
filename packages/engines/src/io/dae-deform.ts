import type { ExportAnimation } from './export-animation.ts'
import type { ExportMesh, ExportNode } from './export-scene.ts'
import { attr, daeSource, join } from './dae-xml.ts'

/**
 * COLLADA skins and animations: per skinned node a `<skin>` controller over its mesh's geometry;
 * per glTF animation one `<animation>` whose channels key a node's whole `<matrix sid="transform">`.
 * Morph targets are not written: assimp 5.2 (our reader and Debian's) fails to open COLLADA files
 * with a `<morph>` controller written as the 1.4.1 schema has it (see docs/formats-fbx-dae.md).
 */

/** What a node's `instance_controller` points at. */
export interface NodeController {
  url: string
  /** `<skeleton>` roots: the skin's topmost joints. */
  skeletons: string[]
}

/** The skin controller of a skinned node, from the node's id (the id maker keeps `-skin` ids free). */
export function nodeSkin(
  node: ExportNode,
  nodeId: string,
  geometryId: string,
  nodeIds: Map<ExportNode, string>,
): { xml: string; controller: NodeController } | undefined {
  const { mesh, skin } = node
  if (!mesh?.skinning || !skin) return undefined
  const id = `${nodeId}-skin`
  const joints = skin.joints.map((joint) => nodeIds.get(joint)!)
  return {
    xml: skinController(mesh, id, `#${geometryId}`, joints, skin.inverseBindMatrices),
    controller: { url: `#${id}`, skeletons: skin.roots.map((root) => nodeIds.get(root)!) },
  }
}

function skinController(mesh: ExportMesh, id: string, source: string, joints: string[], inverseBindMatrices: Float32Array): string {
  const { joints: indices, weights, influences } = mesh.skinning!
  const vertexCount = mesh.positions.length / 3
  // Only non-zero influences are listed: COLLADA gives each vertex its own count.
  const counts = new Uint32Array(vertexCount)
  const pairs: number[] = []
  const weightValues: number[] = []
  for (let v = 0; v < vertexCount; v++) {
    for (let k = 0; k < influences; k++) {
      const weight = weights[v * influences + k]!
      const joint = indices[v * influences + k]!
      if (weight <= 0 || joint >= joints.length) continue
      counts[v]!++
      pairs.push(joint, weightValues.length)
      weightValues.push(weight)
    }
  }
  return [
    `    <controller id="${id}" name="${attr(mesh.name)}"><skin source="${source}">`,
    '      <bind_shape_matrix>1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1</bind_shape_matrix>',
    `      ${daeSource(`${id}-joints`, joints, [['JOINT', 'name']])}`,
    `      ${daeSource(`${id}-bind_poses`, inverseBindMatrices, [['TRANSFORM', 'float4x4']])}`,
    `      ${daeSource(`${id}-weights`, weightValues, [['WEIGHT', 'float']])}`,
    `      <joints><input semantic="JOINT" source="#${id}-joints"/><input semantic="INV_BIND_MATRIX" source="#${id}-bind_poses"/></joints>`,
    `      <vertex_weights count="${vertexCount}"><input semantic="JOINT" source="#${id}-joints" offset="0"/><input semantic="WEIGHT" source="#${id}-weights" offset="1"/>`,
    `        <vcount>${join(counts)}</vcount><v>${join(pairs)}</v></vertex_weights>`,
    '    </skin></controller>',
  ].join('\n')
}

/**
 * `<library_animations>` entries: one `<animation>` per glTF animation, named after it, holding a
 * sampler and channel per track (assimp reads each top-level animation as one, by its name).
 */
export function daeAnimations(animations: ExportAnimation<ExportNode>[], nodeIds: Map<ExportNode, string>): string[] {
  return animations.map((animation, a) => {
    const body: string[] = []
    animation.tracks.forEach((track, t) => {
      const id = `anim-${a}-${t}`
      const interpolations = Array.from(track.times, () => track.interpolation)
      body.push(
        `      ${daeSource(`${id}-input`, track.times, [['TIME', 'float']])}`,
        `      ${daeSource(`${id}-output`, track.matrices, [['TRANSFORM', 'float4x4']])}`,
        `      ${daeSource(`${id}-interpolation`, interpolations, [['INTERPOLATION', 'name']])}`,
        `      <sampler id="${id}-sampler"><input semantic="INPUT" source="#${id}-input"/><input semantic="OUTPUT" source="#${id}-output"/><input semantic="INTERPOLATION" source="#${id}-interpolation"/></sampler>`,
        `      <channel source="#${id}-sampler" target="${nodeIds.get(track.node)!}/transform"/>`,
      )
    })
    return [`    <animation id="anim-${a}" name="${attr(animation.name || `animation_${a}`)}">`, ...body, '    </animation>'].join('\n')
  })
}
