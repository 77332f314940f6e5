import type { mat4 } from '@gltf-transform/core'

// gl-matrix (MIT) mat4 helpers, as glTF-Transform bundles them: the same operations in the same
// order, so that the node matrices and grid positions come out bit for bit as quantize()'s.

/** fromRotationTranslationScale with the identity rotation (its zeros are 0 · s there too). */
export function scaleThenMove(s: number, v: number[]): number[] {
  return [s, 0 * s, 0 * s, 0, 0 * s, s, 0 * s, 0, 0 * s, 0 * s, s, 0, v[0]!, v[1]!, v[2]!, 1]
}

export function invert(a: number[]): number[] {
  const [a00, a01, a02, a03, a10, a11, a12, a13, a20, a21, a22, a23, a30, a31, a32, a33] = a as mat4
  const b00 = a00 * a11 - a01 * a10
  const b01 = a00 * a12 - a02 * a10
  const b02 = a00 * a13 - a03 * a10
  const b03 = a01 * a12 - a02 * a11
  const b04 = a01 * a13 - a03 * a11
  const b05 = a02 * a13 - a03 * a12
  const b06 = a20 * a31 - a21 * a30
  const b07 = a20 * a32 - a22 * a30
  const b08 = a20 * a33 - a23 * a30
  const b09 = a21 * a32 - a22 * a31
  const b10 = a21 * a33 - a23 * a31
  const b11 = a22 * a33 - a23 * a32
  let det = b00 * b11 - b01 * b10 + b02 * b09 + b03 * b08 - b04 * b07 + b05 * b06
  if (!det) return [] // gl-matrix returns null; quantize() then transforms by an empty matrix (NaN everywhere)
  det = 1 / det
  return [
    (a11 * b11 - a12 * b10 + a13 * b09) * det,
    (a02 * b10 - a01 * b11 - a03 * b09) * det,
    (a31 * b05 - a32 * b04 + a33 * b03) * det,
    (a22 * b04 - a21 * b05 - a23 * b03) * det,
    (a12 * b08 - a10 * b11 - a13 * b07) * det,
    (a00 * b11 - a02 * b08 + a03 * b07) * det,
    (a32 * b02 - a30 * b05 - a33 * b01) * det,
    (a20 * b05 - a22 * b02 + a23 * b01) * det,
    (a10 * b10 - a11 * b08 + a13 * b06) * det,
    (a01 * b08 - a00 * b10 - a03 * b06) * det,
    (a30 * b04 - a31 * b02 + a33 * b00) * det,
    (a21 * b02 - a20 * b04 - a23 * b00) * det,
    (a11 * b07 - a10 * b09 - a12 * b06) * det,
    (a00 * b09 - a01 * b07 + a02 * b06) * det,
    (a31 * b01 - a30 * b03 - a32 * b00) * det,
    (a20 * b03 - a21 * b01 + a22 * b00) * det,
  ]
}

/** a × b, column-major 4×4 (glTF's layout). */
export function multiply(a: number[], b: number[]): number[] {
  const out = new Array<number>(16)
  for (let col = 0; col < 4; col++) {
    const [b0, b1, b2, b3] = [b[col * 4]!, b[col * 4 + 1]!, b[col * 4 + 2]!, b[col * 4 + 3]!]
    for (let row = 0; row < 4; row++) out[col * 4 + row] = b0 * a[row]! + b1 * a[4 + row]! + b2 * a[8 + row]! + b3 * a[12 + row]!
  }
  return out
}
