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
  // glTF 1.0 keeps these as objects keyed by id, 2.0 as arrays: both are embedded.
  const list = (value: unknown) => Object.values((value ?? {}) as Record<string, { uri?: string }>)
  for (const item of [...list(json.buffers), ...list(json.images)]) {
    if (!item.uri || item.uri.startsWith('data:')) continue
    const sibling = join(dirname(path), decodeURIComponent(item.uri))
    if (!existsSync(sibling)) continue
    const mime = MIME[extname(sibling).toLowerCase()] ?? 'application/octet-stream'
    item.uri = `data:${mime};base64,${readFileSync(sibling).toString('base64')}`
  }
  return new TextEncoder().encode(JSON.stringify(json))
}

/** A 2×2 PNG of four colours (not solid: prune would fold a solid texture into its material's factor). */
export const FOUR_COLOURS_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAYAAABytg0kAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAE0lEQVQImWP4z8DwHwwZGP6DAQBJyAn3iFfyTAAAAABJRU5ErkJggg=='

/**
 * A triangle drawn twice, under two textured materials that share its texture coordinates, which run
 * outside [0, 1]: no one material's texture grid can cover them, so meshopt keeps them as floats.
 * (Coordinates that no texture reads are dropped by compress, so a texture must read them.)
 */
export function sharedWideUvs(): Document {
  const doc = new Document()
  const buffer = doc.createBuffer()
  const accessor = (type: 'VEC2' | 'VEC3', values: number[]) =>
    doc.createAccessor().setType(type).setArray(new Float32Array(values)).setBuffer(buffer)
  const position = accessor('VEC3', [0, 0, 0, 1, 0, 0, 0, 1, 0])
  const uv = accessor('VEC2', [-1, 0, 2, 0, 0, 3])
  const texture = doc.createTexture().setMimeType('image/png').setImage(Buffer.from(FOUR_COLOURS_PNG, 'base64'))
  const mesh = doc.createMesh()
  for (const colour of [
    [1, 1, 1, 1],
    [1, 0.5, 0.5, 1],
  ]) {
    const material = doc
      .createMaterial()
      .setBaseColorTexture(texture)
      .setBaseColorFactor(colour as [number, number, number, number])
    mesh.addPrimitive(doc.createPrimitive().setAttribute('POSITION', position).setAttribute('TEXCOORD_0', uv).setMaterial(material))
  }
  doc.createScene().addChild(doc.createNode().setMesh(mesh))
  return doc
}
