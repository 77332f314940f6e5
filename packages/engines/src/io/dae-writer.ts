import type { Document } from '@gltf-transform/core'
import { ModelInputError } from '../errors.ts'
import type { Platform } from '../platform.ts'
import { collectExportScene, flippedV, quaternionToMatrix, type ExportMaterial, type ExportMesh, type ExportNode } from './export-scene.ts'
import type { WrittenModel } from './index.ts'
import { zipFiles } from './zip.ts'

/**
 * Writes a Document as COLLADA 1.4.1: the default scene's node tree (one matrix per node), one
 * geometry per mesh with triangles and lines, normals, UVs and vertex colours, Phong effects with
 * base colour or a base colour texture. COLLADA only references images, so a model with textures
 * becomes a zip holding `model.dae` and the image files; without textures it is the .dae alone.
 * Points, skins, morph targets, animations and cameras are dropped (target-holds.ts notes them).
 */
export async function writeDae(platform: Platform, doc: Document): Promise<WrittenModel> {
  const scene = collectExportScene(doc, { lines: true })
  // assimp (and other readers) name nodes and meshes after their COLLADA ids, so ids carry the names;
  // nodes choose first, so a mesh named like its node is the one that gets a suffix.
  const ids = createIdMaker()
  const nodeIds = new Map<ExportNode, string>()
  const nameNodes = (node: ExportNode) => {
    nodeIds.set(node, ids(node.name, 'node'))
    node.children.forEach(nameNodes)
  }
  scene.roots.forEach(nameNodes)
  const geometryIds = new Map(scene.meshes.map((mesh) => [mesh, ids(mesh.name, 'mesh')]))
  const images = [
    ...new Map(
      scene.materials.flatMap((m) => (m.baseColorTexture ? [[m.baseColorTexture.fileName, m.baseColorTexture] as const] : [])),
    ).values(),
  ]
  let xml: string
  try {
    xml = [
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
      ...scene.materials.map((material) =>
        effect(
          material,
          images.findIndex((image) => image === material.baseColorTexture),
        ),
      ),
      '  </library_effects>',
      '  <library_materials>',
      ...scene.materials.map(
        (m) => `    <material id="material-${m.index}" name="${attr(m.name)}"><instance_effect url="#effect-${m.index}"/></material>`,
      ),
      '  </library_materials>',
      '  <library_geometries>',
      ...scene.meshes.map((mesh) => geometry(mesh, geometryIds.get(mesh)!)),
      '  </library_geometries>',
      '  <library_visual_scenes>',
      '    <visual_scene id="scene" name="scene">',
      ...scene.roots.map((root) => visualNode(root, '      ', nodeIds, geometryIds)),
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
  const dae = new TextEncoder().encode(xml)
  if (images.length === 0) return { bytes: dae, extension: 'dae' }
  // The XML deflates well; images are already compressed, so they are stored.
  const entries = Object.fromEntries([
    ['model.dae', { bytes: dae, level: 6 as const }],
    ...images.map((image) => [image.fileName, { bytes: image.bytes, level: 0 as const }] as const),
  ])
  return { bytes: zipFiles(entries), extension: 'zip' }
}

function effect(material: ExportMaterial, imageIndex: number): string {
  const [r, g, b, a] = material.baseColor
  const diffuse =
    imageIndex >= 0
      ? `<texture texture="sampler-${material.index}" texcoord="UVSET0"/>`
      : // Alpha goes in <transparency> only: readers multiply the two (assimp does).
        `<color sid="diffuse">${num(r)} ${num(g)} ${num(b)} 1</color>`
  const params =
    imageIndex >= 0
      ? [
          `        <newparam sid="surface-${material.index}"><surface type="2D"><init_from>image-${imageIndex}</init_from></surface></newparam>`,
          `        <newparam sid="sampler-${material.index}"><sampler2D><source>surface-${material.index}</source></sampler2D></newparam>`,
        ]
      : []
  return [
    `    <effect id="effect-${material.index}" name="${attr(material.name)}"><profile_COMMON>`,
    ...params,
    '        <technique sid="common"><phong>',
    `          <diffuse>${diffuse}</diffuse>`,
    '          <specular><color sid="specular">0.2 0.2 0.2 1</color></specular><shininess><float sid="shininess">20</float></shininess>',
    `          <transparency><float sid="transparency">${num(a)}</float></transparency>`,
    '        </phong></technique>',
    material.doubleSided ? '        <extra><technique profile="GOOGLEEARTH"><double_sided>1</double_sided></technique></extra>' : '',
    '      </profile_COMMON></effect>',
  ].join('\n')
}

function geometry(mesh: ExportMesh, id: string): string {
  const vertexCount = mesh.positions.length / 3
  const source = (name: string, values: ArrayLike<number>, params: string[]) =>
    [
      `        <source id="${id}-${name}"><float_array id="${id}-${name}-array" count="${values.length}">${join(values)}</float_array>`,
      `          <technique_common><accessor source="#${id}-${name}-array" count="${vertexCount}" stride="${params.length}">`,
      params.map((p) => `<param name="${p}" type="float"/>`).join(''),
      '</accessor></technique_common></source>',
    ].join('')
  const uvs = mesh.uvs && flippedV(mesh.uvs, Float32Array)
  const inputs = [
    '<input semantic="VERTEX" source="#' + id + '-vertices" offset="0"/>',
    mesh.normals ? `<input semantic="NORMAL" source="#${id}-normals" offset="0"/>` : '',
    uvs ? `<input semantic="TEXCOORD" source="#${id}-uvs" offset="0" set="0"/>` : '',
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
    source('positions', mesh.positions, ['X', 'Y', 'Z']),
    mesh.normals ? source('normals', mesh.normals, ['X', 'Y', 'Z']) : '',
    uvs ? source('uvs', uvs, ['S', 'T']) : '',
    mesh.colors ? source('colors', mesh.colors, ['R', 'G', 'B', 'A']) : '',
    `        <vertices id="${id}-vertices"><input semantic="POSITION" source="#${id}-positions"/></vertices>`,
    ...primitives,
    '    </mesh></geometry>',
  ]
    .filter((line) => line !== '')
    .join('\n')
}

function visualNode(node: ExportNode, indent: string, nodeIds: Map<ExportNode, string>, geometryIds: Map<ExportMesh, string>): string {
  const id = nodeIds.get(node)!
  const lines = [
    `${indent}<node id="${id}" name="${attr(node.name || id)}" type="NODE">`,
    `${indent}  <matrix sid="transform">${join(localMatrix(node))}</matrix>`,
  ]
  if (node.mesh && node.mesh.groups.length > 0) {
    const materials = [...new Set(node.mesh.groups.map((g) => g.material))]
    lines.push(
      `${indent}  <instance_geometry url="#${geometryIds.get(node.mesh)}"><bind_material><technique_common>`,
      ...materials.map(
        (m) =>
          `${indent}    <instance_material symbol="material-${m.index}" target="#material-${m.index}"><bind_vertex_input semantic="UVSET0" input_semantic="TEXCOORD" input_set="0"/></instance_material>`,
      ),
      `${indent}  </technique_common></bind_material></instance_geometry>`,
    )
  }
  for (const child of node.children) lines.push(visualNode(child, indent + '  ', nodeIds, geometryIds))
  lines.push(`${indent}</node>`)
  return lines.join('\n')
}

type IdMaker = (name: string, fallback: string) => string

/** Ids the writer uses for materials, effects, images and a geometry's sources. */
const RESERVED_ID = /^(material|effect|image)-\d+$|-(positions|normals|uvs|colors|vertices)(-array)?$/

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

/** The node's local transform as COLLADA writes a matrix: row-major, translation in the last column. */
function localMatrix(node: ExportNode): number[] {
  const r = quaternionToMatrix(node.rotation)
  const [sx, sy, sz] = node.scale
  const [tx, ty, tz] = node.translation
  return [
    r[0]![0]! * sx,
    r[0]![1]! * sy,
    r[0]![2]! * sz,
    tx,
    r[1]![0]! * sx,
    r[1]![1]! * sy,
    r[1]![2]! * sz,
    ty,
    r[2]![0]! * sx,
    r[2]![1]! * sy,
    r[2]![2]! * sz,
    tz,
    0,
    0,
    0,
    1,
  ]
}

function join(values: ArrayLike<number>): string {
  const parts = new Array<string>(values.length)
  for (let i = 0; i < values.length; i++) parts[i] = num(values[i]!)
  return parts.join(' ')
}

/**
 * Short text that reads back to the same float32 (the values come from float32 arrays): 7 or 8
 * significant digits nearly always do, not the 17 `String()` writes for a float32 held in a double;
 * trailing zeros go, so 0.5 stays "0.5". Keeps files smaller and faster to read back.
 */
function num(value: number): string {
  if (Number.isInteger(value)) return String(value)
  if (!Number.isFinite(value)) return '0'
  const single = Math.fround(value)
  for (let precision = 7; precision < 9; precision++) {
    const short = Number(value.toPrecision(precision))
    if (Math.fround(short) === single) return String(short)
  }
  return String(Number(value.toPrecision(9)))
}

function attr(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

function text(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}
