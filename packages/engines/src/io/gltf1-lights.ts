import type { Document, Node, vec3 } from '@gltf-transform/core'
import { KHRLightsPunctual, type Light } from '@gltf-transform/extensions'
import { type Entry, entries } from './gltf1-json.ts'
import { OUTSIDE_SCENE } from './gltf1-nodes.ts'

/** The parts of a glTF 1.0 JSON the lights are read from. */
export interface Gltf1Lights {
  nodes?: Record<string, Entry>
  extensions?: Record<string, unknown>
}

/**
 * KHR_materials_common's lights (glTF 1.0), which assimp's importer leaves out, made again as
 * KHR_lights_punctual on the nodes that place them. Directional, point and spot lights map over:
 * both extensions point a light down the node's −Z and give its colour in linear RGB. What does not
 * map is returned as notes: ambient lights (glTF 2.0 has none), the 1.0 attenuation factors and spot
 * exponent (punctual lights fall off by the inverse square, spots between two cone angles).
 * A 1.0 spot's `fallOffAngle` is the whole cone (COLLADA's `falloff_angle`, which collada2gltf wrote
 * in radians; its default π is a hemisphere), so its half is the outer cone angle, at most π/2.
 */
export function restoreGltf1Lights(doc: Document, json: Gltf1Lights, nodes: Map<string, Node>): string[] {
  const common = json.extensions?.KHR_materials_common as { lights?: Record<string, Entry> } | undefined
  const sources = common?.lights ?? {}
  const made = new Map<string, Light | null>()
  const skipped = { ambient: 0, unknown: 0, falloff: new Set<string>() }
  const lightOf = (id: string): Light | null => {
    if (!made.has(id)) made.set(id, makeLight(doc, id, sources[id], skipped))
    return made.get(id)!
  }
  const outside: string[] = []
  for (const [id, source] of entries(json.nodes)) {
    const lightId = ((source.extensions as Record<string, Entry> | undefined)?.KHR_materials_common as Entry | undefined)?.light
    if (typeof lightId !== 'string') continue
    const node = nodes.get(id)
    if (!node) {
      outside.push(`"${lightId}" on node "${id}"`)
      continue
    }
    const light = lightOf(lightId)
    if (light) node.setExtension('KHR_lights_punctual', light)
  }
  const notes: string[] = []
  if (outside.length > 0) notes.push(`${outside.length} light(s) not carried (${outside.join(', ')}): ${OUTSIDE_SCENE}`)
  if (skipped.ambient > 0) notes.push(`${skipped.ambient} ambient light(s) not carried: glTF 2.0 has no ambient light`)
  if (skipped.unknown > 0) notes.push(`${skipped.unknown} light(s) of no known type (ambient, directional, point, spot) not carried`)
  if (skipped.falloff.size > 0) {
    notes.push(
      `the attenuation factors or spot exponent of ${skipped.falloff.size} light(s) not carried (${[...skipped.falloff].join(', ')}): KHR_lights_punctual lights fall off by the inverse square of the distance`,
    )
  }
  return notes
}

const PUNCTUAL = new Set(['directional', 'point', 'spot'])

function makeLight(
  doc: Document,
  id: string,
  source: Entry | undefined,
  skipped: { ambient: number; unknown: number; falloff: Set<string> },
): Light | null {
  const type = source?.type
  if (type === 'ambient') skipped.ambient++
  if (typeof type !== 'string' || !PUNCTUAL.has(type)) {
    if (type !== 'ambient') skipped.unknown++
    return null
  }
  const values = (source![type] ?? {}) as Entry
  const name = typeof source!.name === 'string' ? source!.name : id
  const light = doc
    .createExtension(KHRLightsPunctual)
    .createLight(name)
    .setType(type as 'directional' | 'point' | 'spot')
    .setColor(colorOf(values.color))
    .setIntensity(1)
  if (type === 'spot') {
    const angle = typeof values.fallOffAngle === 'number' && values.fallOffAngle > 0 ? values.fallOffAngle : Math.PI
    light.setInnerConeAngle(0).setOuterConeAngle(Math.min(angle / 2, Math.PI / 2))
  }
  const falloff = ['linearAttenuation', 'quadraticAttenuation', 'fallOffExponent'].some(
    (key) => typeof values[key] === 'number' && values[key] !== 0,
  )
  if (type !== 'directional' && falloff) skipped.falloff.add(name)
  return light
}

/** A 1.0 light's colour (RGB, or RGBA in the extension's prose), white where it gives none. */
function colorOf(value: unknown): vec3 {
  if (!Array.isArray(value) || value.length < 3 || !value.slice(0, 3).every((n) => typeof n === 'number' && Number.isFinite(n))) {
    return [1, 1, 1]
  }
  return value.slice(0, 3).map((n: number) => Math.max(0, n)) as vec3
}
