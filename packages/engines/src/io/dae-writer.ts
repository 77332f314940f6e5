import type { Document } from '@gltf-transform/core'
import { ModelInputError } from '../errors.ts'
import { daeAnimations, type NodeController, nodeSkin } from './dae-deform.ts'
import { attr, daeSource, join, num, text } from './dae-xml.ts'
import { trsMatrix } from './export-animation.ts'
import {
  collectExportScene,
  type ExportImage,
  type ExportMaterial,
  type ExportMesh,
  type ExportNode,
  type ExportScene,
  flippedV,
} from './export-scene.ts'
import { type MapSlot, mapNotes } from './export-maps.ts'
import type { WrittenModel } from './index.ts'
import { zipFiles } from './zip.ts'

/**
 * Writes a Document as COLLADA 1.4.1: the default scene's node tree (one matrix per node), one
 * geometry per mesh with triangles and lines, normals, every UV set and vertex colours, Phong
 * effects with base colour, emission and normal (bump) maps, skin controllers, and the node
 * animations resampled as matrix keys, one `<animation>` per glTF animation.
 * COLLADA only references images, so a model with textures becomes a zip holding `model.dae` and
 * the image files; without textures it is the .dae alone. Points, morph targets, cameras and the
 * maps Phong has no place for are left out (target-holds.ts notes them).
 */
export async function writeDae(doc: Document): Promise<WrittenModel> {
  const scene = collectExportScene(doc, { lines: true, deform: true })
  const uvSets = Math.max(0, ...scene.meshes.map((mesh) => mesh.uvSets.length))
  const notes = [...scene.notes, ...mapNotes(scene, 'COLLADA', DAE_MAPS, Math.max(uvSets, 1))]
  const withNotes = notes.length > 0 ? { notes } : {}
  const dae = new TextEncoder().encode(colladaXml(scene))
  const images = referencedImages(scene.materials)
  if (images.length === 0) return { bytes: dae, extension: 'dae', ...withNotes }
  // The XML deflates well; images are already compressed, so they are stored.
  const entries = Object.fromEntries([
    ['model.dae', { bytes: dae, level: 6 as const }],
    ...images.map((image) => [image.fileName, { bytes: image.bytes, level: 0 as const }] as const),
  ])
  return { bytes: zipFiles(entries), extension: 'zip', ...withNotes }
}

/** Each image a kept map shows, once by file name, in the order the materials reference them. */
function referencedImages(materials: ExportMaterial[]): ExportImage[] {
  return [
    ...new Map(
      materials.flatMap((m) =>
        DAE_MAPS.flatMap((slot) => (m.maps[slot] ? [[m.maps[slot].image.fileName, m.maps[slot].image] as const] : [])),
      ),
    ).values(),
  ]
}

/**
 * Ids for every node and mesh. assimp (and other readers) name nodes and meshes after their
 * COLLADA ids, so ids carry the names; nodes choose first, so a mesh named like its node is the
 * one that gets a suffix.
 */
function sceneIds(scene: ExportScene): { nodeIds: Map<ExportNode, string>; geometryIds: Map<ExportMesh, string> } {
  const ids = createIdMaker()
  const nodeIds = new Map<ExportNode, string>()
  const nameNodes = (node: ExportNode) => {
    nodeIds.set(node, ids(node.name, 'node'))
    node.children.forEach(nameNodes)
  }
  scene.roots.forEach(nameNodes)
  return { nodeIds, geometryIds: new Map(scene.meshes.map((mesh) => [mesh, ids(mesh.name, 'mesh')])) }
}

/** The skin controller of every skinned node, and their XML. */
function skinControllers(nodeIds: Map<ExportNode, string>, geometryIds: Map<ExportMesh, string>) {
  const controllers = new Map<ExportNode, NodeController>()
  const xml: string[] = []
  for (const [node, id] of nodeIds) {
    if (!node.mesh) continue
    const skin = nodeSkin(node, id, geometryIds.get(node.mesh)!, nodeIds)
    if (!skin) continue
    xml.push(skin.xml)
    controllers.set(node, skin.controller)
  }
  return { controllers, xml }
}

/** The scene as one COLLADA document. */
function colladaXml(scene: ExportScene): string {
  const { nodeIds, geometryIds } = sceneIds(scene)
  const images = referencedImages(scene.materials)
  const { controllers, xml: controllerXml } = skinControllers(nodeIds, geometryIds)
  const animations = daeAnimations(scene.animations, nodeIds)
  try {
    return [
      '<?xml version="1.0" encoding="utf-8"?>',
      '<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">',
      '  <asset><contributor><authoring_tool>Mos</authoring_tool></contributor>',
      `    <created>${new Date(0).toISOString()}</created><modified>${new Date(0).toISOString()}</modified>`,
      '    <unit name="meter" meter="1"/><up_axis>Y_UP</up_axis></asset>',
      '  <library_images>',
      ...images.map(
        (image, i) =>
          `    <image id="image-${i}" name="${attr(image.fileName)}"><init_from>${text(encodeURI(image.fileName))}</init_from></image>`,
      ),
      '  </library_images>',
      '  <library_effects>',
      ...scene.materials.map((material) => effect(material, images)),
      '  </library_effects>',
      '  <library_materials>',
      ...scene.materials.map(
        (m) => `    <material id="material-${m.index}" name="${attr(m.name)}"><instance_effect url="#effect-${m.index}"/></material>`,
      ),
      '  </library_materials>',
      '  <library_geometries>',
      ...scene.meshes.map((mesh) => geometry(mesh, geometryIds.get(mesh)!)),
      '  </library_geometries>',
      ...(controllerXml.length > 0 ? ['  <library_controllers>', ...controllerXml, '  </library_controllers>'] : []),
      ...(animations.length > 0 ? ['  <library_animations>', ...animations, '  </library_animations>'] : []),
      '  <library_visual_scenes>',
      '    <visual_scene id="scene" name="scene">',
      ...scene.roots.map((root) => visualNode(root, '      ', { nodeIds, geometryIds, controllers })),
      '    </visual_scene>',
      '  </library_visual_scenes>',
      '  <scene><instance_visual_scene url="#scene"/></scene>',
      '</COLLADA>',
      '',
    ].join('\n')
  } catch (error) {
    // V8 strings end near 512 M characters: past that the model does not fit in one COLLADA text.
    if (error instanceof RangeError) throw new ModelInputError('model too large for COLLADA output (over ~512 MB of XML)')
    throw error
  }
}

/** The Phong slots our maps go to; a normal map goes in a `<bump>` extra, as FCOLLADA and assimp read it. */
const DAE_MAPS = ['baseColor', 'emissive', 'normal'] as const satisfies readonly MapSlot[]

function effect(material: ExportMaterial, images: ExportImage[]): string {
  const [r, g, b, a] = material.baseColor
  const params: string[] = []
  const texture = (slot: MapSlot): string | undefined => {
    const map = material.maps[slot]
    if (!map) return undefined
    const sid = `${material.index}-${slot}`
    params.push(
      `        <newparam sid="surface-${sid}"><surface type="2D"><init_from>image-${images.indexOf(map.image)}</init_from></surface></newparam>`,
      `        <newparam sid="sampler-${sid}"><sampler2D><source>surface-${sid}</source></sampler2D></newparam>`,
    )
    return `<texture texture="sampler-${sid}" texcoord="UVSET${map.texCoord}"/>`
  }
  // Alpha goes in <transparency> only: readers multiply the two (assimp does).
  const diffuse = texture('baseColor') ?? `<color sid="diffuse">${num(r)} ${num(g)} ${num(b)} 1</color>`
  const emission = texture('emissive') ?? `<color sid="emission">${join(material.emissive)} 1</color>`
  const bump = texture('normal')
  return [
    `    <effect id="effect-${material.index}" name="${attr(material.name)}"><profile_COMMON>`,
    ...params,
    '        <technique sid="common"><phong>',
    `          <emission>${emission}</emission>`,
    `          <diffuse>${diffuse}</diffuse>`,
    '          <specular><color sid="specular">0.2 0.2 0.2 1</color></specular><shininess><float sid="shininess">20</float></shininess>',
    `          <transparency><float sid="transparency">${num(a)}</float></transparency>`,
    '        </phong>',
    bump ? `        <extra><technique profile="FCOLLADA"><bump>${bump}</bump></technique></extra>` : '',
    '        </technique>',
    material.doubleSided ? '        <extra><technique profile="GOOGLEEARTH"><double_sided>1</double_sided></technique></extra>' : '',
    '      </profile_COMMON></effect>',
  ]
    .filter((line) => line !== '')
    .join('\n')
}

/** The UV sets a material's maps read, for `bind_vertex_input`. */
function materialUvSets(material: ExportMaterial): number[] {
  return [...new Set(DAE_MAPS.flatMap((slot) => (material.maps[slot] ? [material.maps[slot].texCoord] : [])))]
}

function geometry(mesh: ExportMesh, id: string): string {
  const { positions, normals } = mesh
  const source = (suffix: string, values: ArrayLike<number>, params: string[]) =>
    `        ${daeSource(
      `${id}-${suffix}`,
      values,
      params.map((p) => [p, 'float']),
    )}`
  const uvSets = mesh.uvSets.map((uvs) => flippedV(uvs, Float32Array))
  const uvId = (set: number) => (set === 0 ? 'uvs' : `uvs-${set}`)
  const inputs = [
    `<input semantic="VERTEX" source="#${id}-vertices" offset="0"/>`,
    normals ? `<input semantic="NORMAL" source="#${id}-normals" offset="0"/>` : '',
    ...uvSets.map((_, set) => `<input semantic="TEXCOORD" source="#${id}-${uvId(set)}" offset="0" set="${set}"/>`),
    mesh.colors ? `<input semantic="COLOR" source="#${id}-colors" offset="0"/>` : '',
  ].join('')
  const primitives = mesh.groups.flatMap((group) => [
    ...(group.triangles.length > 0
      ? [
          `        <triangles material="material-${group.material.index}" count="${group.triangles.length / 3}">${inputs}<p>${join(group.triangles)}</p></triangles>`,
        ]
      : []),
    ...(group.lines.length > 0
      ? [
          `        <lines material="material-${group.material.index}" count="${group.lines.length / 2}">${inputs}<p>${join(group.lines)}</p></lines>`,
        ]
      : []),
  ])
  return [
    `    <geometry id="${id}" name="${attr(mesh.name)}"><mesh>`,
    source('positions', positions, ['X', 'Y', 'Z']),
    normals ? source('normals', normals, ['X', 'Y', 'Z']) : '',
    ...uvSets.map((uvs, set) => source(uvId(set), uvs, ['S', 'T'])),
    mesh.colors ? source('colors', mesh.colors, ['R', 'G', 'B', 'A']) : '',
    `        <vertices id="${id}-vertices"><input semantic="POSITION" source="#${id}-positions"/></vertices>`,
    ...primitives,
    '    </mesh></geometry>',
  ]
    .filter((line) => line !== '')
    .join('\n')
}

interface SceneIds {
  nodeIds: Map<ExportNode, string>
  geometryIds: Map<ExportMesh, string>
  controllers: Map<ExportNode, NodeController>
}

function visualNode(node: ExportNode, indent: string, ids: SceneIds): string {
  const id = ids.nodeIds.get(node)!
  // Joints carry a sid: skin controllers name their joints by sid.
  const lines = [
    `${indent}<node id="${id}"${node.joint ? ` sid="${id}"` : ''} name="${attr(node.name || id)}" type="${node.joint ? 'JOINT' : 'NODE'}">`,
    `${indent}  <matrix sid="transform">${join(trsMatrix(node.translation, node.rotation, node.scale))}</matrix>`,
  ]
  if (node.mesh && node.mesh.groups.length > 0) {
    const materials = [...new Set(node.mesh.groups.map((g) => g.material))]
    const controller = ids.controllers.get(node)
    const [open, close] = controller
      ? [
          `<instance_controller url="${controller.url}">${controller.skeletons.map((root) => `<skeleton>#${root}</skeleton>`).join('')}`,
          '</instance_controller>',
        ]
      : [`<instance_geometry url="#${ids.geometryIds.get(node.mesh)}">`, '</instance_geometry>']
    lines.push(
      `${indent}  ${open}<bind_material><technique_common>`,
      ...materials.map(
        (m) =>
          `${indent}    <instance_material symbol="material-${m.index}" target="#material-${m.index}">${materialUvSets(m)
            .map((set) => `<bind_vertex_input semantic="UVSET${set}" input_semantic="TEXCOORD" input_set="${set}"/>`)
            .join('')}</instance_material>`,
      ),
      `${indent}  </technique_common></bind_material>${close}`,
    )
  }
  for (const child of node.children) lines.push(visualNode(child, `${indent}  `, ids))
  lines.push(`${indent}</node>`)
  return lines.join('\n')
}

type IdMaker = (name: string, fallback: string) => string

/** Ids the writer uses for materials, effects, images and a geometry's sources. */
const RESERVED_ID = /^(material|effect|image|anim)-[\d-]+$|-(positions|normals|uvs|uvs-\d+|colors|vertices|skin)(-.*)?$/

/**
 * Unique XML ids made from names (an xs:ID must start with a letter or "_" and holds no spaces),
 * never one of the writer's own ids.
 */
function createIdMaker(): IdMaker {
  const used = new Set<string>(['scene'])
  return (name, fallback) => {
    let base = name.replace(/[^\w.]/g, '_') || fallback
    if (!/^[A-Za-z_]/.test(base)) base = `_${base}`
    let id = base
    const taken = (candidate: string) => used.has(candidate.toLowerCase()) || RESERVED_ID.test(candidate)
    for (let n = 1; taken(id); n++) id = `${base}-${n}`
    used.add(id.toLowerCase())
    return id
  }
}
