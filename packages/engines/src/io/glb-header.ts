/** The first four bytes of every binary glTF, "glTF" read as a little-endian integer. */
export const GLB_MAGIC = 0x46546c67

/** True when the bytes start with the GLB header magic (whatever the file is named). */
export function isGlb(bytes: Uint8Array): boolean {
  return bytes.byteLength >= 12 && new DataView(bytes.buffer, bytes.byteOffset, 12).getUint32(0, true) === GLB_MAGIC
}
