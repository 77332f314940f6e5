import type { Document } from '@gltf-transform/core'
import { collectExportScene, flippedV, quaternionToMatrix, type ExportMaterial, type ExportMesh, type ExportNode } from './export-scene.ts'
import { type MapSlot, mapNotes } from './export-maps.ts'
import type { WrittenModel } from './index.ts'
import { encodeFbxBinary, fbx, fbxNode, FBX_VERSION, type FbxNode, type FbxProperty } from './fbx-binary.ts'

/**
 * Writes a Document as binary FBX 7.4: the default scene's node tree (translation, Euler rotation,
 * scale), one Geometry per mesh (triangles, normals, the first UV set, vertex colours, per-polygon
 * materials), Phong materials with base and emissive colour and embedded diffuse, emissive and
 * normal maps. Points, lines, skins, morph targets, animations, cameras, other maps and UV sets
 * are left out (target-holds.ts notes them).
 *
 * Y is up and one unit is one metre (UnitScaleFactor 100: FBX counts in centimetres).
 */
export async function writeFbx(doc: Document): Promise<WrittenModel> {
  const scene = collectExportScene(doc, { lines: false, deform: false })
  const notes = [...scene.notes, ...mapNotes(scene, 'FBX', Object.keys(FBX_MAP_PROPERTIES) as MapSlot[], 1)]
  const graph = createObjectGraph()
  const materialIds = addMaterials(graph, scene.materials)
  const geometryIds = addGeometries(graph, scene.meshes)
  for (const root of scene.roots) addModel(graph, root, 0n, geometryIds, materialIds)
  const bytes = encodeFbxBinary(fbxFile(graph))
  return { bytes, extension: 'fbx', ...(notes.length > 0 ? { notes } : {}) }
}

/** FBX's objects and the connections between them, with ids handed out in order and a count per type. */
interface ObjectGraph {
  id(): bigint
  add(type: FbxObjectType, node: FbxNode): void
  connect(child: bigint, parent: bigint, property?: string): void
  objects: FbxNode[]
  connections: FbxNode[]
  counts: Record<FbxObjectType, number>
}

type FbxObjectType = 'Model' | 'Geometry' | 'Material' | 'Texture' | 'Video'

function createObjectGraph(): ObjectGraph {
  let nextId = 1_000_000n
  const graph: ObjectGraph = {
    id: () => nextId++,
    add(type, node) {
      graph.objects.push(node)
      graph.counts[type]++
    },
    connect(child, parent, property) {
      const kind = property ? 'OP' : 'OO'
      graph.connections.push(
        fbxNode('C', [fbx.string(kind), fbx.long(child), fbx.long(parent), ...(property ? [fbx.string(property)] : [])]),
      )
    },
    objects: [],
    connections: [],
    counts: { Model: 0, Geometry: 0, Material: 0, Texture: 0, Video: 0 },
  }
  return graph
}

/** Phong materials with their maps; each image is one Video, however many textures use it. */
function addMaterials(graph: ObjectGraph, materials: ExportMaterial[]): Map<ExportMaterial, bigint> {
  const materialIds = new Map<ExportMaterial, bigint>()
  const videos = new Map<string, bigint>()
  for (const material of materials) {
    const materialId = graph.id()
    materialIds.set(material, materialId)
    graph.add('Material', materialNode(materialId, material))
    for (const [slot, property] of Object.entries(FBX_MAP_PROPERTIES) as [MapSlot, string][]) {
      const map = material.maps[slot]
      if (map?.texCoord !== 0) continue
      const image = map.image
      const textureId = graph.id()
      graph.add('Texture', textureNode(textureId, image.fileName))
      graph.connect(textureId, materialId, property)
      let videoId = videos.get(image.fileName)
      if (videoId === undefined) {
        videoId = graph.id()
        videos.set(image.fileName, videoId)
        graph.add('Video', videoNode(videoId, image.fileName, image.bytes))
      }
      graph.connect(videoId, textureId)
    }
  }
  return materialIds
}

/** One Geometry per mesh that has triangles (FBX output holds no points or lines). */
function addGeometries(graph: ObjectGraph, meshes: ExportMesh[]): Map<ExportMesh, bigint> {
  const geometryIds = new Map<ExportMesh, bigint>()
  for (const mesh of meshes) {
    if (!mesh.groups.some((g) => g.triangles.length > 0)) continue
    const geometryId = graph.id()
    geometryIds.set(mesh, geometryId)
    graph.add('Geometry', geometryNode(geometryId, mesh))
  }
  return geometryIds
}

/** The node and its subtree as Models under `parentId` (0: the scene's root). */
function addModel(
  graph: ObjectGraph,
  node: ExportNode,
  parentId: bigint,
  geometryIds: Map<ExportMesh, bigint>,
  materialIds: Map<ExportMaterial, bigint>,
): void {
  const modelId = graph.id()
  const geometryId = node.mesh && geometryIds.get(node.mesh)
  graph.add('Model', modelNode(modelId, node, geometryId !== undefined))
  graph.connect(modelId, parentId)
  if (node.mesh && geometryId !== undefined) {
    graph.connect(geometryId, modelId)
    // Materials are connected in the order the geometry's per-polygon material indices use.
    for (const material of uniqueMaterials(node.mesh)) graph.connect(materialIds.get(material)!, modelId)
  }
  for (const child of node.children) addModel(graph, child, modelId, geometryIds, materialIds)
}

/** The file's top-level nodes around the graph: header, settings, document, definitions. */
function fbxFile(graph: ObjectGraph): FbxNode[] {
  const counts: [string, number][] = [
    ['GlobalSettings', 1],
    ['Model', graph.counts.Model],
    ['Geometry', graph.counts.Geometry],
    ['Material', graph.counts.Material],
    ['Texture', graph.counts.Texture],
    ['Video', graph.counts.Video],
  ]
  return [
    headerExtension(),
    fbxNode('FileId', [fbx.raw(FILE_ID)]),
    fbxNode('CreationTime', [fbx.string(CREATION_TIME)]),
    fbxNode('Creator', [fbx.string('Mos')]),
    globalSettings(),
    fbxNode(
      'Documents',
      [],
      [
        fbxNode('Count', [fbx.int(1)]),
        fbxNode(
          'Document',
          [fbx.long(graph.id()), fbx.string('Scene'), fbx.string('Scene')],
          [fbxNode('Properties70'), fbxNode('RootNode', [fbx.long(0)])],
        ),
      ],
    ),
    fbxNode('References'),
    fbxNode(
      'Definitions',
      [],
      [
        fbxNode('Version', [fbx.int(100)]),
        fbxNode('Count', [fbx.int(counts.reduce((n, [, c]) => n + c, 0))]),
        ...counts.filter(([, c]) => c > 0).map(([type, c]) => fbxNode('ObjectType', [fbx.string(type)], [fbxNode('Count', [fbx.int(c)])])),
      ],
    ),
    fbxNode('Objects', [], graph.objects),
    fbxNode('Connections', [], graph.connections),
  ]
}

/** The material properties our texture maps connect to (FBX's Phong has no occlusion or PBR slots). */
const FBX_MAP_PROPERTIES: Partial<Record<MapSlot, string>> = { baseColor: 'DiffuseColor', emissive: 'EmissiveColor', normal: 'NormalMap' }

// The FBX SDK ties FileId, CreationTime and the footer id together; these are the values Blender
// writes, which the SDK accepts.
const FILE_ID = Uint8Array.of(0x28, 0xb3, 0x2a, 0xeb, 0xb6, 0x24, 0xcc, 0xc2, 0xbf, 0xc8, 0xb0, 0x2a, 0xa9, 0x2b, 0xfc, 0xf1)
const CREATION_TIME = '1970-01-01 10:00:00:000'

function headerExtension(): FbxNode {
  const stamp: [string, number][] = [
    ['Version', 1000],
    ['Year', 1970],
    ['Month', 1],
    ['Day', 1],
    ['Hour', 10],
    ['Minute', 0],
    ['Second', 0],
    ['Millisecond', 0],
  ]
  return fbxNode(
    'FBXHeaderExtension',
    [],
    [
      fbxNode('FBXHeaderVersion', [fbx.int(1003)]),
      fbxNode('FBXVersion', [fbx.int(FBX_VERSION)]),
      fbxNode('EncryptionType', [fbx.int(0)]),
      fbxNode(
        'CreationTimeStamp',
        [],
        stamp.map(([name, value]) => fbxNode(name, [fbx.int(value)])),
      ),
      fbxNode('Creator', [fbx.string('Mos')]),
    ],
  )
}

function globalSettings(): FbxNode {
  return fbxNode(
    'GlobalSettings',
    [],
    [
      fbxNode('Version', [fbx.int(1000)]),
      fbxNode(
        'Properties70',
        [],
        [
          p('UpAxis', 'int', 'Integer', '', fbx.int(1)),
          p('UpAxisSign', 'int', 'Integer', '', fbx.int(1)),
          p('FrontAxis', 'int', 'Integer', '', fbx.int(2)),
          p('FrontAxisSign', 'int', 'Integer', '', fbx.int(1)),
          p('CoordAxis', 'int', 'Integer', '', fbx.int(0)),
          p('CoordAxisSign', 'int', 'Integer', '', fbx.int(1)),
          p('OriginalUpAxis', 'int', 'Integer', '', fbx.int(1)),
          p('OriginalUpAxisSign', 'int', 'Integer', '', fbx.int(1)),
          p('UnitScaleFactor', 'double', 'Number', '', fbx.double(100)),
          p('OriginalUnitScaleFactor', 'double', 'Number', '', fbx.double(100)),
        ],
      ),
    ],
  )
}

/** One Properties70 entry: name, type, label, flags, values. */
function p(name: string, type: string, label: string, flags: string, ...values: FbxProperty[]): FbxNode {
  return fbxNode('P', [fbx.string(name), fbx.string(type), fbx.string(label), fbx.string(flags), ...values])
}

/** FBX object names carry their class after a "\x00\x01" separator. */
function objectName(name: string, kind: string): FbxProperty {
  return fbx.string(`${name}\x00\x01${kind}`)
}

function modelNode(modelId: bigint, node: ExportNode, hasMesh: boolean): FbxNode {
  const [rx, ry, rz] = quaternionToEulerXyz(node.rotation)
  return fbxNode(
    'Model',
    [fbx.long(modelId), objectName(node.name, 'Model'), fbx.string(hasMesh ? 'Mesh' : 'Null')],
    [
      fbxNode('Version', [fbx.int(232)]),
      fbxNode(
        'Properties70',
        [],
        [
          p('RotationOrder', 'enum', '', '', fbx.int(0)),
          p('InheritType', 'enum', '', '', fbx.int(1)),
          p('Lcl Translation', 'Lcl Translation', '', 'A', ...node.translation.map(fbx.double)),
          p('Lcl Rotation', 'Lcl Rotation', '', 'A', fbx.double(rx), fbx.double(ry), fbx.double(rz)),
          p('Lcl Scaling', 'Lcl Scaling', '', 'A', ...node.scale.map(fbx.double)),
        ],
      ),
      fbxNode('Shading', [fbx.bool(true)]),
      fbxNode('Culling', [fbx.string('CullingOff')]),
    ],
  )
}

function geometryNode(geometryId: bigint, mesh: ExportMesh): FbxNode {
  const triangleGroups = mesh.groups.filter((g) => g.triangles.length > 0)
  const corners = new Int32Array(triangleGroups.reduce((n, g) => n + g.triangles.length, 0))
  const materials = uniqueMaterials(mesh)
  const polygonMaterials = new Int32Array(corners.length / 3)
  let offset = 0
  for (const group of triangleGroups) {
    corners.set(group.triangles, offset)
    polygonMaterials.fill(materials.indexOf(group.material), offset / 3, (offset + group.triangles.length) / 3)
    offset += group.triangles.length
  }
  // The last corner of each polygon is stored as -(index + 1).
  const polygonVertexIndex = corners.map((v, i) => (i % 3 === 2 ? -v - 1 : v))
  const layers: FbxNode[] = []
  const elements: FbxNode[] = []
  const layerElement = (type: string, children: FbxNode[]) => {
    elements.push(fbxNode(type, [fbx.int(0)], [fbxNode('Version', [fbx.int(101)]), fbxNode('Name', [fbx.string('')]), ...children]))
    layers.push(fbxNode('LayerElement', [], [fbxNode('Type', [fbx.string(type)]), fbxNode('TypedIndex', [fbx.int(0)])]))
  }
  // Vertex data is stored once per vertex and indexed per polygon corner, like the positions.
  const perCorner = (data: string, values: ArrayLike<number>, index: string): FbxNode[] => [
    fbxNode('MappingInformationType', [fbx.string('ByPolygonVertex')]),
    fbxNode('ReferenceInformationType', [fbx.string('IndexToDirect')]),
    fbxNode(data, [fbx.doubles(values)]),
    fbxNode(index, [{ type: 'i', value: corners }]),
  ]
  if (mesh.normals) layerElement('LayerElementNormal', perCorner('Normals', mesh.normals, 'NormalsIndex'))
  if (mesh.colors) layerElement('LayerElementColor', perCorner('Colors', mesh.colors, 'ColorIndex'))
  if (mesh.uvSets[0]) {
    const uvs = flippedV(mesh.uvSets[0], Float64Array)
    layerElement('LayerElementUV', perCorner('UV', uvs, 'UVIndex'))
  }
  layerElement('LayerElementMaterial', [
    fbxNode('MappingInformationType', [fbx.string(materials.length === 1 ? 'AllSame' : 'ByPolygon')]),
    fbxNode('ReferenceInformationType', [fbx.string('IndexToDirect')]),
    fbxNode('Materials', [fbx.ints(materials.length === 1 ? [0] : polygonMaterials)]),
  ])
  return fbxNode(
    'Geometry',
    [fbx.long(geometryId), objectName(mesh.name, 'Geometry'), fbx.string('Mesh')],
    [
      fbxNode('GeometryVersion', [fbx.int(124)]),
      fbxNode('Vertices', [fbx.doubles(mesh.positions)]),
      fbxNode('PolygonVertexIndex', [{ type: 'i', value: polygonVertexIndex }]),
      ...elements,
      fbxNode('Layer', [fbx.int(0)], [fbxNode('Version', [fbx.int(100)]), ...layers]),
    ],
  )
}

function materialNode(materialId: bigint, material: ExportMaterial): FbxNode {
  const [r, g, b, a] = material.baseColor
  const color = (name: string, values: number[]) => p(name, 'Color', '', 'A', ...values.map(fbx.double))
  return fbxNode(
    'Material',
    [fbx.long(materialId), objectName(material.name, 'Material'), fbx.string('')],
    [
      fbxNode('Version', [fbx.int(102)]),
      fbxNode('ShadingModel', [fbx.string('phong')]),
      fbxNode('MultiLayer', [fbx.int(0)]),
      fbxNode(
        'Properties70',
        [],
        [
          color('DiffuseColor', [r, g, b]),
          p('DiffuseFactor', 'Number', '', 'A', fbx.double(1)),
          color('EmissiveColor', material.emissive),
          p('EmissiveFactor', 'Number', '', 'A', fbx.double(1)),
          color('TransparentColor', [1, 1, 1]),
          p('TransparencyFactor', 'Number', '', 'A', fbx.double(1 - a)),
          p('Opacity', 'double', 'Number', '', fbx.double(a)),
          color('SpecularColor', [0.2, 0.2, 0.2]),
          p('Shininess', 'double', 'Number', '', fbx.double(20)),
        ],
      ),
    ],
  )
}

function textureNode(textureId: bigint, fileName: string): FbxNode {
  return fbxNode(
    'Texture',
    [fbx.long(textureId), objectName(fileName, 'Texture'), fbx.string('')],
    [
      fbxNode('Type', [fbx.string('TextureVideoClip')]),
      fbxNode('Version', [fbx.int(202)]),
      fbxNode('TextureName', [objectName(fileName, 'Texture')]),
      fbxNode('Properties70', [], [p('UseMaterial', 'bool', '', '', fbx.int(1))]),
      fbxNode('Media', [objectName(fileName, 'Video')]),
      fbxNode('FileName', [fbx.string(fileName)]),
      fbxNode('RelativeFilename', [fbx.string(fileName)]),
      fbxNode('ModelUVTranslation', [fbx.double(0), fbx.double(0)]),
      fbxNode('ModelUVScaling', [fbx.double(1), fbx.double(1)]),
      fbxNode('Texture_Alpha_Source', [fbx.string('None')]),
      fbxNode('Cropping', [fbx.int(0), fbx.int(0), fbx.int(0), fbx.int(0)]),
    ],
  )
}

function videoNode(videoId: bigint, fileName: string, bytes: Uint8Array): FbxNode {
  return fbxNode(
    'Video',
    [fbx.long(videoId), objectName(fileName, 'Video'), fbx.string('Clip')],
    [
      fbxNode('Type', [fbx.string('Clip')]),
      fbxNode('Properties70', [], [p('Path', 'KString', 'XRefUrl', '', fbx.string(fileName))]),
      fbxNode('UseMipMap', [fbx.int(0)]),
      fbxNode('Filename', [fbx.string(fileName)]),
      fbxNode('RelativeFilename', [fbx.string(fileName)]),
      fbxNode('Content', [fbx.raw(bytes)]),
    ],
  )
}

function uniqueMaterials(mesh: ExportMesh): ExportMaterial[] {
  return [...new Set(mesh.groups.filter((g) => g.triangles.length > 0).map((g) => g.material))]
}

/**
 * Euler angles in degrees for FBX's default rotation order (eEulerXYZ: X first, then Y, then Z,
 * i.e. R = Rz · Ry · Rx for column vectors).
 */
export function quaternionToEulerXyz(q: [number, number, number, number]): [number, number, number] {
  const m = quaternionToMatrix(q)
  const sinY = Math.max(-1, Math.min(1, -m[2]![0]!))
  const y = Math.asin(sinY)
  let x: number
  let z: number
  if (Math.abs(sinY) < 0.9999999) {
    x = Math.atan2(m[2]![1]!, m[2]![2]!)
    z = Math.atan2(m[1]![0]!, m[0]![0]!)
  } else {
    // Gimbal lock: only x − z (or x + z) is defined; put it all in x.
    x = Math.atan2(-m[1]![2]!, m[1]![1]!)
    z = 0
  }
  const degrees = 180 / Math.PI
  return [x * degrees, y * degrees, z * degrees]
}
