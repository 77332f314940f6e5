import { existsSync, readFileSync } from 'node:fs'
import { Document } from '@gltf-transform/core'
import { dirname, extname, join } from 'node:path'

const MIME: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.bin': 'application/octet-stream',
}

/**
 * A corpus .gltf with its sibling files (.bin, textures) embedded as data URIs, in memory, so the
 * jobs can read it as one upload (files the corpus lacks, as in MissingBin, stay external).
 */
export function embeddedGltf(path: string): Uint8Array {
  const json = JSON.parse(readFileSync(path, 'utf8')) as { buffers?: unknown; images?: unknown }
  // glTF 1.0 keeps these as objects; those files are refused anyway, left as they are.
  const list = (value: unknown) => (Array.isArray(value) ? (value as { uri?: string }[]) : [])
  for (const item of [...list(json.buffers), ...list(json.images)]) {
    if (!item.uri || item.uri.startsWith('data:')) continue
    const sibling = join(dirname(path), decodeURIComponent(item.uri))
    if (!existsSync(sibling)) continue
    const mime = MIME[extname(sibling).toLowerCase()] ?? 'application/octet-stream'
    item.uri = `data:${mime};base64,${readFileSync(sibling).toString('base64')}`
  }
  return new TextEncoder().encode(JSON.stringify(json))
}

/** A triangle with no material whose texture coordinates run outside [0, 1]: no texture grid covers them. */
export function untexturedWideUvs(): Document {
  const doc = new Document()
  const buffer = doc.createBuffer()
  const accessor = (type: 'VEC2' | 'VEC3', values: number[]) =>
    doc.createAccessor().setType(type).setArray(new Float32Array(values)).setBuffer(buffer)
  const prim = doc
    .createPrimitive()
    .setAttribute('POSITION', accessor('VEC3', [0, 0, 0, 1, 0, 0, 0, 1, 0]))
    .setAttribute('TEXCOORD_0', accessor('VEC2', [-1, 0, 2, 0, 0, 3]))
  doc.createScene().addChild(doc.createNode().setMesh(doc.createMesh().addPrimitive(prim)))
  return doc
}
