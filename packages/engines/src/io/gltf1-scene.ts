import type { Camera, Document, Material, mat4, Node, vec3, vec4 } from '@gltf-transform/core'
import { type Entry, entries, type Gltf1Data, readGltf1Accessor } from './gltf1-json.ts'
import { type Gltf1Lights, restoreGltf1Lights } from './gltf1-lights.ts'
import { KHRMaterialsUnlit } from '@gltf-transform/extensions'
import { restoreGltf1Colors } from './gltf1-colors.ts'
import { type Gltf1Skins, restoreGltf1Skins } from './gltf1-skins.ts'
import { type Gltf1Textures, type Gltf1TextureSource, restoreGltf1Textures } from './gltf1-textures.ts'
import type { ResolveFile } from './upload-files.ts'
import { type Gltf1Nodes, matchGltf1Nodes, OUTSIDE_SCENE } from './gltf1-nodes.ts'

export { type Entry, entries }

/**
 * What assimp's glTF 1.0 importer gets wrong or leaves out of the scene, put right from the file's
 * own JSON after the import (gltf1.ts): assimp names each node after its 1.0 id, which is how the
 * nodes are found again.
 *
 * - Node transforms: assimp composes a node's translation and rotation in the wrong order (R·T where
 *   glTF says T·R·S), which moved CesiumMilkTruck's wheels 0.26 units into the truck. Every node
 *   gets its transform back as the file gives it (matrix, or translation, rotation and scale).
 * - Node names: the author's `name` (glTF 2.0 has no ids), where assimp kept the id (nodes are
 *   matched by walking both trees, gltf1-nodes.ts).
 * - Animations: assimp imports none; each 1.0 animation becomes a 2.0 animation (the same samplers,
 *   interpolation and keyframes on the same nodes).
 * - Cameras: assimp drops perspective ones and fails on orthographic ones; each is made on its nodes.
 * - Lights (KHR_materials_common's): assimp imports none; made as KHR_lights_punctual (gltf1-lights.ts).
 * - Material states: double sides, blending with its transparency, the emission colour (the
 *   colour of an unlit KHR_materials_common CONSTANT material), the
 *   diffuse texture's sampler and the emission texture, which assimp drops (gltf1-textures.ts).
 * - `extras` of nodes and materials.
 * - Skins: assimp imports none; made as 2.0 skins on their nodes' meshes (gltf1-skins.ts).
 * - Vertex colours: assimp drops them; their meshes are made from the file (gltf1-colors.ts).
 */

/** The parts of a glTF 1.0 JSON this module reads. */
export interface Gltf1Scene extends Gltf1Nodes, Gltf1Lights, Gltf1Skins, Gltf1Textures {
  nodes?: Record<string, Entry>
  cameras?: Record<string, Entry>
  materials?: Record<string, Entry>
  techniques?: Record<string, Entry>
  animations?: Record<string, Entry>
}

/** 1.0 paths and the 2.0 path each animates (the same three). */
const PATHS = new Set(['translation', 'rotation', 'scale'])
const FLOAT = 5126

/**
 * Restores node transforms and names, cameras, lights and material states, and rebuilds the animations.
 * `buffers` holds each 1.0 buffer's bytes by id; `resolve` finds the image files the JSON names. Returns a note per animation channel it could not take,
 * and for what of the lights glTF 2.0 cannot hold.
 */
export function restoreGltf1Scene(doc: Document, json: Gltf1Scene, buffers: Map<string, Uint8Array>, resolve: ResolveFile): string[] {
  const nodes = matchGltf1Nodes(doc, json)
  for (const [id, node] of nodes) restoreNode(node, json.nodes![id]!)
  restoreCameras(doc, json, nodes)
  const notes = restoreGltf1Lights(doc, json, nodes)
  const materials = byUniqueName(doc.getRoot().listMaterials(), entries(json.materials))
  notes.push(...restoreMaterials(doc, { json, resolve }, materials))
  notes.push(...restoreGltf1Skins(doc, json, nodes, materials, buffers))
  notes.push(...restoreGltf1Colors(doc, json, nodes, materials, buffers))
  for (const [id, animation] of entries(json.animations)) buildAnimation(doc, id, animation, json, nodes, buffers, notes)
  return notes
}

/** The document's material for each 1.0 id, where exactly one carries that name: assimp names materials after their ids. */
function byUniqueName(properties: Material[], ids: [string, Entry][]): Map<string, Material> {
  const byName = new Map<string, Material[]>()
  for (const property of properties) byName.set(property.getName(), [...(byName.get(property.getName()) ?? []), property])
  const found = new Map<string, Material>()
  for (const [id] of ids) {
    const named = byName.get(id)
    if (named?.length === 1) found.set(id, named[0]!)
  }
  return found
}

function restoreNode(node: Node, source: Entry): void {
  if (isNumbers(source.matrix, 16)) node.setMatrix(source.matrix as unknown as mat4)
  else {
    node.setTranslation(isNumbers(source.translation, 3) ? (source.translation as vec3) : [0, 0, 0])
    node.setRotation(isNumbers(source.rotation, 4) ? (source.rotation as vec4) : [0, 0, 0, 1])
    node.setScale(isNumbers(source.scale, 3) ? (source.scale as vec3) : [1, 1, 1])
  }
  if (typeof source.name === 'string' && source.name !== '') node.setName(source.name)
  setExtras(node, source)
}

/** An object's `extras` (application data, the same in 2.0), which assimp drops. */
function setExtras(property: Node | Material, source: Entry): void {
  const extras = source.extras
  if (typeof extras === 'object' && extras !== null && !Array.isArray(extras)) property.setExtras(extras as Record<string, unknown>)
}

/**
 * The cameras, each on the nodes that carry it. assimp's glTF 1.0 importer drops perspective cameras
 * and fails on a whole file with an orthographic one, so it is handed the file without them
 * (gltf1.ts) and they are made here: 1.0 and 2.0 describe both kinds with the same numbers.
 */
function restoreCameras(doc: Document, json: Gltf1Scene, nodes: Map<string, Node>): void {
  const made = new Map<string, Camera | null>()
  const cameraOf = (id: string): Camera | null => {
    if (!made.has(id)) made.set(id, makeCamera(doc, id, json.cameras?.[id]))
    return made.get(id)!
  }
  for (const [id, node] of nodes) {
    const camera = json.nodes![id]!.camera
    if (typeof camera !== 'string' || node.getCamera()) continue
    const found = cameraOf(camera)
    if (found) node.setCamera(found)
  }
}

function makeCamera(doc: Document, id: string, source: Entry | undefined): Camera | null {
  const positive = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value > 0
  const name = typeof source?.name === 'string' ? source.name : id
  if (source?.type === 'perspective') {
    const p = (source.perspective ?? {}) as Entry
    if (!positive(p.yfov) || !positive(p.znear)) return null
    const camera = doc
      .createCamera(name)
      .setType('perspective')
      .setYFov(p.yfov as number)
      .setZNear(p.znear as number)
    // 2.0 takes an infinite projection where zfar is absent; 1.0 required it.
    if (positive(p.zfar) && (p.zfar as number) > (p.znear as number)) camera.setZFar(p.zfar as number)
    if (positive(p.aspectRatio)) camera.setAspectRatio(p.aspectRatio as number)
    return camera
  }
  if (source?.type === 'orthographic') {
    const o = (source.orthographic ?? {}) as Entry
    const finite = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value !== 0
    if (!finite(o.xmag) || !finite(o.ymag) || !(Number(o.znear) >= 0) || !(Number(o.zfar) > Number(o.znear))) return null
    return doc
      .createCamera(name)
      .setType('orthographic')
      .setXMag(o.xmag as number)
      .setYMag(o.ymag as number)
      .setZNear(Number(o.znear))
      .setZFar(Number(o.zfar))
  }
  return null
}

/** WebGL's enums a 1.0 technique's `states.enable` lists. */
const CULL_FACE = 2884
const BLEND = 3042

/**
 * What assimp's glTF 1.0 importer reads of a material's colour but not of its states: whether both
 * sides are drawn (no CULL_FACE in its technique's states, or KHR_materials_common's `doubleSided`),
 * blending (BLEND in the states, or `transparent`) with the `transparency` value as the base colour's
 * alpha, and the emission colour; and its textures: the diffuse one's sampler, the emission one (gltf1-textures.ts). assimp names
 * each material after its 1.0 id. Returns a note for each texture that is not carried.
 */
function restoreMaterials(doc: Document, textures: Gltf1TextureSource & { json: Gltf1Scene }, materials: Map<string, Material>): string[] {
  const { json } = textures
  const notes: string[] = []
  for (const [id, material] of materials) {
    const source = json.materials![id]!
    const common = ((source.extensions ?? {}) as Record<string, Entry>).KHR_materials_common
    const technique = typeof source.technique === 'string' ? json.techniques?.[source.technique] : undefined
    const values = { ...techniqueDefaults(technique), ...((common?.values ?? source.values ?? {}) as Entry) }
    // A technique enables what it draws with; nothing enabled is WebGL's default: both sides, no blending.
    const enabled = ((technique?.states ?? {}) as Entry).enable
    const states = Array.isArray(enabled) ? (enabled as unknown[]) : []
    if (common) material.setDoubleSided(common.doubleSided === true)
    else if (technique) material.setDoubleSided(!states.includes(CULL_FACE))
    if (common ? common.transparent === true : states.includes(BLEND)) {
      const [r, g, b, a] = material.getBaseColorFactor()
      const transparency = scalar(values.transparency)
      material
        .setAlphaMode('BLEND')
        .setBaseColorFactor([r, g, b, a * (transparency !== undefined ? Math.min(1, Math.max(0, transparency)) : 1)])
    }
    const emission = values.emission
    if (
      Array.isArray(emission) &&
      emission.length >= 3 &&
      emission.slice(0, 3).every((n) => typeof n === 'number' && Number.isFinite(n) && n >= 0)
    ) {
      material.setEmissiveFactor(emission.slice(0, 3) as vec3)
    }
    notes.push(...restoreGltf1Textures(doc, textures, id, material, values, technique))
    if (common?.technique === 'CONSTANT') makeUnlit(doc, material)
    setExtras(material, source)
  }
  return notes
}

/**
 * KHR_materials_common's CONSTANT technique draws unlit, in its emission colour or texture (plus the scene's
 * ambient light, which 2.0 has none of): as KHR_materials_unlit, whose colour is the base colour.
 * assimp read it as a lit material, shaded by the lights, of base colour white.
 */
function makeUnlit(doc: Document, material: Material): void {
  const [r, g, b] = material.getEmissiveFactor()
  const texture = material.getEmissiveTexture()
  const emissive = material.getEmissiveTextureInfo()
  material
    .setBaseColorFactor([r, g, b, material.getBaseColorFactor()[3]])
    .setEmissiveFactor([0, 0, 0])
    // CONSTANT takes no diffuse: a 1.0 viewer did not draw one. Its emission texture is its colour.
    .setBaseColorTexture(texture)
    .setEmissiveTexture(null)
    .setExtension('KHR_materials_unlit', doc.createExtension(KHRMaterialsUnlit).createUnlit())
  const base = material.getBaseColorTextureInfo()
  if (emissive && base) {
    base
      .setTexCoord(emissive.getTexCoord())
      .setWrapS(emissive.getWrapS())
      .setWrapT(emissive.getWrapT())
      .setMagFilter(emissive.getMagFilter())
      .setMinFilter(emissive.getMinFilter())
  }
}

/** A technique's parameter values, where its materials give none. */
function techniqueDefaults(technique: Entry | undefined): Entry {
  const parameters = (technique?.parameters ?? {}) as Record<string, Entry>
  return Object.fromEntries(
    Object.entries(parameters).flatMap(([name, parameter]) => (parameter?.value !== undefined ? [[name, parameter.value]] : [])),
  )
}

/** A 1.0 value given as a number or as a one-number array. */
function scalar(value: unknown): number | undefined {
  const n = Array.isArray(value) ? value[0] : value
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined
}

function isNumbers(value: unknown, length: number): boolean {
  return Array.isArray(value) && value.length === length && value.every((n) => typeof n === 'number' && Number.isFinite(n))
}

/**
 * One 1.0 animation as a 2.0 one. In 1.0 a sampler names its input and output through the
 * animation's `parameters` (TIME → an accessor id); a channel targets a node id and a path.
 */
function buildAnimation(
  doc: Document,
  id: string,
  source: Entry,
  json: Gltf1Scene,
  nodes: Map<string, Node>,
  buffers: Map<string, Uint8Array>,
  notes: string[],
): void {
  const parameters = (source.parameters ?? {}) as Record<string, unknown>
  const samplers = (source.samplers ?? {}) as Record<string, Entry>
  const channels = Array.isArray(source.channels) ? (source.channels as Entry[]) : []
  const animation = doc.createAnimation(typeof source.name === 'string' ? source.name : id)
  const buffer = doc.getRoot().listBuffers()[0] ?? doc.createBuffer()
  for (const channel of channels) {
    const target = (channel.target ?? {}) as Entry
    const sampler = samplers[String(channel.sampler)]
    const node = nodes.get(String(target.id))
    const path = String(target.path)
    if (!sampler || !node || !PATHS.has(path)) {
      const why = !node
        ? `node "${String(target.id)}" not carried (${OUTSIDE_SCENE})`
        : !PATHS.has(path)
          ? `path "${path}" not carried (glTF 2.0 has no such target)`
          : `node "${node.getName()}" not carried (it names no sampler of the animation)`
      notes.push(`animation "${id}": a channel on ${why}`)
      continue
    }
    const input = floats(json, String(parameters[String(sampler.input)]), buffers, 'SCALAR')
    const output = floats(json, String(parameters[String(sampler.output)]), buffers, path === 'rotation' ? 'VEC4' : 'VEC3')
    if (!input || !output || output.length !== input.length * (path === 'rotation' ? 4 : 3)) {
      notes.push(
        `animation "${id}": a channel on node "${node.getName()}" not carried (its keyframes are not float ${path} values, one per time)`,
      )
      continue
    }
    const interpolation = sampler.interpolation === 'STEP' ? 'STEP' : 'LINEAR'
    const created = doc
      .createAnimationSampler()
      .setInput(doc.createAccessor().setType('SCALAR').setArray(input).setBuffer(buffer))
      .setOutput(
        doc
          .createAccessor()
          .setType(path === 'rotation' ? 'VEC4' : 'VEC3')
          .setArray(output)
          .setBuffer(buffer),
      )
      .setInterpolation(interpolation)
    animation.addSampler(created).addChannel(
      doc
        .createAnimationChannel()
        .setTargetNode(node)
        .setTargetPath(path as 'rotation')
        .setSampler(created),
    )
  }
  if (animation.listChannels().length === 0) animation.dispose()
}

/** A float accessor's values, packed (1.0 animation data is float); undefined for anything else. */
function floats(json: Gltf1Data, id: string, buffers: Map<string, Uint8Array>, type: string): Float32Array | undefined {
  const read = readGltf1Accessor(json, id, buffers)
  return read && read.componentType === FLOAT && read.type === type ? new Float32Array(read.values) : undefined
}
