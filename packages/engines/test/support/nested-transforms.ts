import type { Document } from '@gltf-transform/core'

type Quat = [number, number, number, number]

/** Quaternion for `degrees` about a unit axis. */
function axisAngle(axis: [number, number, number], degrees: number): Quat {
  const half = (degrees * Math.PI) / 360
  const s = Math.sin(half)
  return [axis[0] * s, axis[1] * s, axis[2] * s, Math.cos(half)]
}

/** a · b (apply b first). */
function multiply(a: Quat, b: Quat): Quat {
  const [ax, ay, az, aw] = a
  const [bx, by, bz, bw] = b
  return [
    aw * bx + ax * bw + ay * bz - az * by,
    aw * by - ax * bz + ay * bw + az * bx,
    aw * bz + ax * by - ay * bx + az * bw,
    aw * bw - ax * bx - ay * by - az * bz,
  ]
}

/**
 * Moves the document's scene under a chain of three nodes with awkward transforms: non-uniform
 * scale, an arbitrary rotation, and one at gimbal lock for Euler XYZ (Y = 90°), so a writer that
 * gets rotation order, sign or matrix layout wrong moves the bounds.
 */
export function nestUnderAwkwardTransforms(doc: Document): Document {
  const scene = doc.getRoot().listScenes()[0]!
  const outer = doc
    .createNode('outer')
    .setTranslation([1, 2, 3])
    .setRotation(multiply(axisAngle([0, 0, 1], 40), axisAngle([1, 0, 0], 25)))
    .setScale([1, 2, 0.5])
  const gimbal = doc
    .createNode('gimbal')
    .setTranslation([0, -1, 0.5])
    .setRotation(multiply(axisAngle([0, 1, 0], 90), axisAngle([1, 0, 0], 30)))
  const inner = doc
    .createNode('inner')
    .setRotation(multiply(axisAngle([0.6, 0, 0.8], -120), axisAngle([0, 1, 0], 15)))
    .setScale([0.5, 0.5, 1.5])
  outer.addChild(gimbal)
  gimbal.addChild(inner)
  for (const child of scene.listChildren()) {
    scene.removeChild(child)
    inner.addChild(child)
  }
  scene.addChild(outer)
  return doc
}
