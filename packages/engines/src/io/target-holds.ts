import type { Document, Material, Mesh, Primitive, Texture } from '@gltf-transform/core'
import { ModelInputError } from '../errors.ts'
import { mapUvSets, uvSetWritten } from './texture-slots.ts'

/** The material texture slots a target can hold by name (glTF's property names). */
type TextureSlot = 'baseColorTexture' | 'emissiveTexture' | 'normalTexture' | 'occlusionTexture' | 'metallicRoughnessTexture'

/** How a target keeps an attribute that not every part of the model has. */
type PartAttribute = 'kept' | 'when-every-part-has-it' | 'when-every-part-of-its-mesh-has-it' | 'dropped'

/**
 * What one output format holds of a scene, kind by kind. This is the one place that says it: the
 * notes on a convert task and the refusal of an output that would be empty both come from here,
 * by comparing the input scene against it (docs/formats.md prints the resulting matrix).
 */
export interface TargetHolds {
  /** Name used in notes and errors. */
  label: string
  triangles: boolean
  lines: boolean
  /** 'alone': only in a model without triangles (a point cloud). */
  points: boolean | 'alone'
  /** 'facet': one normal per triangle, computed from the geometry. */
  normals: PartAttribute | 'facet'
  /** How many UV sets (TEXCOORD_0 …). */
  uvSets: number
  /**
   * Which set a target of one UV set per part writes: 'first' (TEXCOORD_0; FBX drops maps reading
   * another, export-maps.ts) or 'maps' (the set the material's maps read, base colour's first: OBJ
   * and PLY, flatten.ts), where maps of one material reading different sets cannot all be held.
   */
  uvSetWritten: 'first' | 'maps'
  uvs: PartAttribute
  /** Whether normals and UVs of points and lines are kept (OBJ's `p` and `l` take positions only). */
  pointAttributes: boolean
  colors: boolean
  materials: boolean
  /** Which material textures: every one, those of the listed slots (glTF's `baseColorTexture`, …), or none. */
  textures: 'all' | readonly TextureSlot[] | 'none'
  /**
   * Whether `KHR_texture_transform` (offset, rotation, scale of a map's UVs) is kept with the maps;
   * 'baked': applied to the UVs instead (the look kept, the transform itself gone).
   */
  textureTransforms: boolean | 'baked'
  skins: boolean
  animations: boolean
  morphTargets: boolean
  cameras: boolean
  lights: boolean
  /** 'default': the default scene only; 'merged': every scene, flattened into one. */
  scenes: 'all' | 'default' | 'merged'
}

const GLTF: TargetHolds = {
  label: 'glTF',
  triangles: true,
  lines: true,
  points: true,
  normals: 'kept',
  uvSets: Number.POSITIVE_INFINITY,
  uvSetWritten: 'first',
  uvs: 'kept',
  pointAttributes: true,
  colors: true,
  materials: true,
  textures: 'all',
  textureTransforms: true,
  skins: true,
  animations: true,
  morphTargets: true,
  cameras: true,
  lights: true,
  scenes: 'all',
}

/** Single-space formats: geometry of every scene placed in world space, at rest pose. */
const FLAT = {
  ...GLTF,
  materials: false,
  textures: 'none',
  textureTransforms: false,
  uvSets: 1,
  uvSetWritten: 'maps',
  skins: false,
  animations: false,
  morphTargets: false,
  cameras: false,
  lights: false,
  scenes: 'merged',
} as const

/** FBX and COLLADA as our writers write them (export-scene.ts): the default scene's node tree. */
const SCENE_TREE = {
  ...FLAT,
  materials: true,
  // Phong/FBX materials: diffuse, emission and a normal (bump) map; KHR_texture_transform baked into the UVs.
  textures: ['baseColorTexture', 'emissiveTexture', 'normalTexture'],
  textureTransforms: 'baked',
  uvSetWritten: 'first',
  normals: 'when-every-part-of-its-mesh-has-it',
  scenes: 'default',
} as const

/** Per writable format, what its writer keeps. */
export const TARGET_HOLDS: Record<string, TargetHolds> = {
  glb: GLTF,
  gltf: GLTF,
  // With materials beyond names, the .obj comes zipped with its .mtl (Kd, Ke, d; map_Kd, map_Ke, map_Bump) and images.
  obj: {
    ...FLAT,
    label: 'OBJ',
    pointAttributes: false,
    materials: true,
    textures: ['baseColorTexture', 'emissiveTexture', 'normalTexture'],
  },
  stl: { ...FLAT, label: 'STL', lines: false, points: false, normals: 'facet', uvSets: 0, uvs: 'dropped', colors: false },
  // Base colour maps as MeshLab writes them (`comment TextureFile`, face `texnumber`), zipped with the .ply.
  ply: {
    ...FLAT,
    label: 'PLY',
    lines: false,
    points: 'alone',
    normals: 'when-every-part-has-it',
    uvs: 'when-every-part-has-it',
    textures: ['baseColorTexture'],
  },
  fbx: { ...SCENE_TREE, label: 'FBX', lines: false, points: false },
  // COLLADA keeps skins and node animations, and every UV set (export-scene.ts, dae-writer.ts).
  dae: { ...SCENE_TREE, label: 'COLLADA', points: false, skins: true, animations: true, uvSets: Number.POSITIVE_INFINITY },
}

/** What a target holds (glTF's everything for a format the table does not list). */
export function targetHolds(format: string): TargetHolds {
  return TARGET_HOLDS[format] ?? GLTF
}

/** One primitive as drawn by one node (a mesh used by two nodes is drawn twice). */
interface DrawnPrimitive {
  mesh: Mesh
  prim: Primitive
  kind: 'triangles' | 'lines' | 'points'
  /** Triangles, line segments or points it draws. */
  elements: number
}

function listDrawn(doc: Document, scenes: 'all' | 'default'): DrawnPrimitive[] {
  const root = doc.getRoot()
  const defaultScene = root.getDefaultScene() ?? root.listScenes()[0]
  const drawn: DrawnPrimitive[] = []
  for (const scene of scenes === 'default' ? (defaultScene ? [defaultScene] : []) : root.listScenes()) {
    scene.traverse((node) => {
      const mesh = node.getMesh()
      for (const prim of mesh?.listPrimitives() ?? []) {
        const count = prim.getAttribute('POSITION')?.getCount() ?? 0
        if (!mesh || count === 0) continue
        const n = prim.getIndices()?.getCount() ?? count
        const mode = prim.getMode()
        if (mode >= 4) drawn.push({ mesh, prim, kind: 'triangles', elements: mode === 4 ? Math.floor(n / 3) : Math.max(0, n - 2) })
        else if (mode >= 1) drawn.push({ mesh, prim, kind: 'lines', elements: mode === 1 ? Math.floor(n / 2) : mode === 2 ? n : n - 1 })
        else drawn.push({ mesh, prim, kind: 'points', elements: n })
      }
    })
  }
  return drawn
}

const sum = (drawn: DrawnPrimitive[], kind: DrawnPrimitive['kind']) =>
  drawn.filter((d) => d.kind === kind).reduce((n, d) => n + d.elements, 0)

/**
 * Refuses a model that draws nothing, or nothing the target holds: an empty STL, PLY, FBX or COLLADA
 * file helps nobody. The message names what the target holds and what the model has.
 */
export function checkTargetCanHold(doc: Document, format: string): void {
  const drawn = listDrawn(doc, 'all')
  if (drawn.length === 0) throw new ModelInputError('the model has no geometry in any scene')
  const holds = targetHolds(format)
  const has = { triangles: sum(drawn, 'triangles') > 0, lines: sum(drawn, 'lines') > 0, points: sum(drawn, 'points') > 0 }
  const held = (['triangles', 'lines', 'points'] as const).filter((kind) => holds[kind] !== false)
  if (held.some((kind) => has[kind])) return
  const present = (['lines', 'points'] as const).filter((kind) => has[kind])
  throw new ModelInputError(`${holds.label} holds only ${held.join(' and ')}; this model has only ${present.join(' and ')}`)
}

/**
 * Notes for everything the target cannot hold of this model, one per kind, with counts: the
 * model's scene compared against {@link targetHolds}. Empty for glTF targets.
 */
export function droppedByTarget(doc: Document, format: string): string[] {
  const holds = targetHolds(format)
  const notes: string[] = []
  const drop = (what: string, detail: string) => notes.push(`${holds.label} cannot hold ${what}: ${detail}`)
  const root = doc.getRoot()
  const all = listDrawn(doc, 'all')
  const drawn = holds.scenes === 'default' ? listDrawn(doc, 'default') : all
  if (holds.scenes === 'default' && root.listScenes().length > 1) {
    drop('more than one scene', `${root.listScenes().length - 1} scene(s) besides the default one dropped`)
  }
  const triangles = drawn.filter((d) => d.kind === 'triangles')
  const points = sum(drawn, 'points')
  if (points > 0 && (holds.points === false || (holds.points === 'alone' && triangles.length > 0))) {
    drop(holds.points === 'alone' ? 'points beside faces' : 'points', `${points} points dropped`)
  }
  const lines = sum(drawn, 'lines')
  if (lines > 0 && !holds.lines) drop('lines', `${lines} line segments dropped`)
  // Attributes are counted on the parts the target keeps (the faces; points of a point cloud).
  const kept = drawn.filter((d) => holds[d.kind] === true || (d.kind === 'points' && holds.points === 'alone' && triangles.length === 0))
  notes.push(...attributeNotes(holds, kept))
  notes.push(...materialNotes(doc, holds, kept))
  const skins = new Set(root.listNodes().flatMap((node) => (node.getSkin() ? [node.getSkin()] : [])))
  if (skins.size > 0 && !holds.skins) drop('skins', `${skins.size} skin(s) dropped (meshes written in their bind pose)`)
  const animations = root.listAnimations().length
  if (animations > 0 && !holds.animations) drop('animations', `${animations} animation(s) dropped`)
  const targets = unique(drawn.map((d) => d.prim)).reduce((n, prim) => n + prim.listTargets().length, 0)
  if (targets > 0 && !holds.morphTargets) drop('morph targets', `${targets} morph target(s) dropped (meshes written at rest)`)
  const cameras = root.listNodes().filter((node) => node.getCamera()).length
  if (cameras > 0 && !holds.cameras) drop('cameras', `${cameras} camera(s) dropped`)
  const lights = root.listNodes().filter((node) => node.getExtension('KHR_lights_punctual')).length
  if (lights > 0 && !holds.lights) drop('lights', `${lights} light(s) dropped`)
  return notes
}

function unique<T>(items: T[]): T[] {
  return [...new Set(items)]
}

/** Normals, UV sets and vertex colours the target leaves out of the parts it keeps. */
function attributeNotes(holds: TargetHolds, kept: DrawnPrimitive[]): string[] {
  const notes: string[] = []
  const prims = unique(kept.map((d) => d.prim))
  const faces = kept.filter((d) => d.kind === 'triangles')
  const withNormals = unique(faces.filter((d) => d.prim.getAttribute('NORMAL')).map((d) => d.prim))
  if (withNormals.length > 0) {
    if (holds.normals === 'facet')
      notes.push(`${holds.label} holds only facet normals: vertex normals of ${withNormals.length} part(s) replaced by facet normals`)
    else if (!partsAllHave(holds.normals, faces, 'NORMAL')) {
      notes.push(`${holds.label} holds normals only where every part has them: normals of ${withNormals.length} part(s) dropped`)
    }
  }
  const loose = unique(kept.filter((d) => d.kind !== 'triangles').map((d) => d.prim))
  const looseWith = (semantic: string) => loose.filter((prim) => prim.getAttribute(semantic)).length
  if (!holds.pointAttributes && looseWith('NORMAL') + looseWith('TEXCOORD_0') > 0) {
    notes.push(
      `${holds.label} holds normals and UVs only on faces: normals of ${looseWith('NORMAL')} and UVs of ${looseWith('TEXCOORD_0')} point or line part(s) dropped`,
    )
  }
  const withUvs = prims.filter((prim) => prim.getAttribute('TEXCOORD_0'))
  const sets = withUvs.reduce((n, prim) => n + uvSetCount(prim), 0)
  if (withUvs.length > 0 && holds.uvSets === 0)
    notes.push(`${holds.label} cannot hold UVs: ${sets} UV set(s) of ${withUvs.length} part(s) dropped`)
  else if (withUvs.length > 0 && !partsAllHave(holds.uvs, kept, 'TEXCOORD_0')) {
    notes.push(`${holds.label} holds UVs only where every part has them: ${sets} UV set(s) of ${withUvs.length} part(s) dropped`)
  } else {
    const extra = prims.reduce((n, prim) => n + Math.max(0, uvSetCount(prim) - holds.uvSets), 0)
    if (extra > 0) notes.push(`${holds.label} holds ${holds.uvSets} UV set(s) per part: ${extra} more UV set(s) dropped`)
  }
  const withColors = prims.filter((prim) => prim.getAttribute('COLOR_0'))
  if (withColors.length > 0 && !holds.colors)
    notes.push(`${holds.label} cannot hold vertex colours: colours of ${withColors.length} part(s) dropped`)
  return notes
}

function uvSetCount(prim: Primitive): number {
  return prim.listSemantics().filter((semantic) => semantic.startsWith('TEXCOORD_')).length
}

/** Whether an attribute some parts have survives a target that writes it only when every part (of the file or its mesh) has it. */
function partsAllHave(rule: PartAttribute | 'facet', parts: DrawnPrimitive[], semantic: string): boolean {
  if (rule === 'kept') return true
  if (rule === 'dropped' || rule === 'facet') return false
  const groups =
    rule === 'when-every-part-has-it' ? [parts] : unique(parts.map((d) => d.mesh)).map((mesh) => parts.filter((d) => d.mesh === mesh))
  return groups.every((group) => group.every((d) => d.prim.getAttribute(semantic)) || group.every((d) => !d.prim.getAttribute(semantic)))
}

/** Whether the target keeps the UVs maps are read with: one that drops UVs some parts lack (PLY) drops the maps with them. */
function mapsReadable(holds: TargetHolds, drawn: DrawnPrimitive[]): boolean {
  const faces = drawn.filter((d) => d.kind === 'triangles')
  return partsAllHave(holds.uvs, faces, 'TEXCOORD_0')
}

/** Materials, and their textures by slot, that the target leaves out. */
function materialNotes(doc: Document, holds: TargetHolds, kept: DrawnPrimitive[]): string[] {
  const notes: string[] = []
  const materials = unique(kept.flatMap((d) => (d.prim.getMaterial() ? [d.prim.getMaterial()!] : [])))
  const readable = mapsReadable(holds, kept)
  if (materials.length > 0 && !holds.materials) {
    const maps = readable && holdsSlot(holds, 'baseColorTexture') && materials.some((m) => m.getBaseColorTexture())
    notes.push(
      `${holds.label} cannot hold materials: ${materials.length} material(s) dropped${maps ? ', their base colour maps kept' : ''}`,
    )
  }
  const heldMaps = holds.textures
  const bySlot = [...texturesBySlot(doc)]
  const dropped = bySlot.filter(([slot]) => !holdsSlot(holds, slot))
  const count = unique(dropped.flatMap(([, textures]) => [...textures])).length
  if (count > 0) {
    const which = heldMaps === 'none' ? 'textures' : 'these material maps'
    const slots = dropped.map(([slot, textures]) => `${slot.replace(/Texture$/, '')} ${textures.size}`).join(', ')
    notes.push(`${holds.label} cannot hold ${which}: ${count} texture(s) dropped (${slots})`)
  }
  const unread = unique(bySlot.filter(([slot]) => holdsSlot(holds, slot) && !readable).flatMap(([, textures]) => [...textures])).length
  if (unread > 0) {
    notes.push(`${holds.label} holds maps only with the UVs of every part: ${unread} texture(s) dropped with the UVs`)
  }
  if (readable) notes.push(...uvSetNotes(doc, holds, materials))
  // Transforms of maps dropped anyway need no word of their own; those of kept base colour maps do.
  const transformed = materials.filter((m) => m.getBaseColorTextureInfo()?.getExtension('KHR_texture_transform')).length
  if (holds.textures !== 'none' && holds.textureTransforms === 'baked' && transformed > 0) {
    notes.push(
      `${holds.label} cannot hold texture transforms: KHR_texture_transform of ${transformed} base colour map(s) replaced by UVs baked with it`,
    )
  } else if (holds.textures !== 'none' && !holds.textureTransforms && transformed > 0) {
    notes.push(`${holds.label} cannot hold texture transforms: KHR_texture_transform of ${transformed} base colour map(s) dropped`)
  }
  return notes
}

/**
 * Maps a target of one UV set per part places with the set it writes for their material (the base
 * colour's), where they read another: drawn with coordinates that are not theirs.
 */
function uvSetNotes(doc: Document, holds: TargetHolds, materials: Material[]): string[] {
  if (holds.uvSetWritten !== 'maps' || holds.uvSets !== 1) return []
  const misread = materials.flatMap((material) => {
    const written = uvSetWritten(material)
    const index = doc.getRoot().listMaterials().indexOf(material)
    const name = material.getName() ? `material "${material.getName()}"` : `material ${index}`
    return mapUvSets(material)
      .filter(([slot, set]) => holdsSlot(holds, `${slot}Texture`) && set !== written)
      .map(([slot, set]) => `the ${slot} map of ${name} reads UV set ${set}, set ${written} written`)
  })
  if (misread.length === 0) return []
  return [
    `${holds.label} holds one UV set per part, the one the base colour map reads: ${misread.length} map(s) reading another set are drawn with it (${misread.join('; ')})`,
  ]
}

/** Each material slot (`baseColorTexture`, …) and the textures in it. */
function texturesBySlot(doc: Document): Map<string, Set<Texture>> {
  const slots = new Map<string, Set<Texture>>()
  for (const texture of doc.getRoot().listTextures()) {
    for (const edge of doc.getGraph().listParentEdges(texture)) {
      const slot = edge.getName()
      if (!slot.endsWith('Texture')) continue
      slots.set(slot, (slots.get(slot) ?? new Set()).add(texture))
    }
  }
  return slots
}

function holdsSlot(holds: TargetHolds, slot: string): boolean {
  return holds.textures === 'all' || (holds.textures !== 'none' && holds.textures.includes(slot as TextureSlot))
}

/**
 * The textures the target writes: those in a slot it holds (every one for glTF, none for STL and
 * PLY). Convert re-codes these only, so it neither works on nor reports an image the target leaves out.
 */
export function texturesTargetWrites(doc: Document, format: string): Set<Texture> {
  const holds = targetHolds(format)
  // glTF writes every texture the document holds, those of no material too.
  if (holds.textures === 'all') return new Set(doc.getRoot().listTextures())
  const written = new Set<Texture>()
  if (!mapsReadable(holds, listDrawn(doc, holds.scenes === 'default' ? 'default' : 'all'))) return written
  for (const [slot, textures] of texturesBySlot(doc)) if (holdsSlot(holds, slot)) for (const texture of textures) written.add(texture)
  return written
}
