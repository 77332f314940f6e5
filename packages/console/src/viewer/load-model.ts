import { FileLoader, type LoadingManager, type Object3D, type WebGLRenderer } from 'three'
import { ColladaLoader } from 'three/examples/jsm/loaders/ColladaLoader.js'
import { FBXLoader } from 'three/examples/jsm/loaders/FBXLoader.js'
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js'
import { MTLLoader } from 'three/examples/jsm/loaders/MTLLoader.js'
import { OBJLoader } from 'three/examples/jsm/loaders/OBJLoader.js'
import { PLYLoader } from 'three/examples/jsm/loaders/PLYLoader.js'
import { STLLoader } from 'three/examples/jsm/loaders/STLLoader.js'
import { MeshoptDecoder } from 'three/examples/jsm/libs/meshopt_decoder.module.js'
import { Mesh, MeshStandardMaterial, Points, PointsMaterial, type BufferGeometry } from 'three'
import { DracoLoaderWithErrors } from './draco-loader.ts'
import { SameOriginKTX2Loader } from './ktx2-loader.ts'
import { readPlyTextures, texturedPlyMesh } from './ply-textures.ts'

/** The model formats the views open, by file extension. */
export const VIEWABLE_EXTENSIONS = ['glb', 'gltf', 'obj', 'stl', 'ply', 'fbx', 'dae'] as const

export function extensionOf(filename: string): string {
  const dot = filename.lastIndexOf('.')
  return dot < 0 ? '' : filename.slice(dot + 1).toLowerCase()
}

let draco: DracoLoaderWithErrors | undefined

/**
 * A glTF with Draco, meshopt and KTX2 (Basis) decoding. Draco comes from the build's own assets (its
 * default path, see vite.config.ts) and its decoder is shared by every view; a buffer it cannot decode,
 * or a worker of its that dies, fails the model in words (draco-loader.ts). The KTX2 loader is one
 * per model, disposed (its workers ended) once the model is loaded: its failures are then this
 * model's, and a KTX2 texture that could not be transcoded fails the model in words instead of
 * leaving it drawn untextured with nothing said (GLTFLoader draws a failed texture as none).
 */
async function loadGltf(url: string, renderer: WebGLRenderer, manager?: LoadingManager): Promise<Object3D> {
  draco ??= new DracoLoaderWithErrors()
  const ktx2 = new SameOriginKTX2Loader(manager).detectSupport(renderer)
  try {
    const loader = new GLTFLoader(manager).setDRACOLoader(draco).setKTX2Loader(ktx2).setMeshoptDecoder(MeshoptDecoder)
    const gltf = await loader.loadAsync(url)
    // The file's KTX2 textures that came out as none (the parser's cache answers the ones loaded).
    const declared = (gltf.parser.json.textures ?? []) as { extensions?: Record<string, unknown> }[]
    const basis = declared.flatMap((texture, index) => (texture.extensions?.KHR_texture_basisu ? [index] : []))
    const loaded = await Promise.all(basis.map((index) => gltf.parser.getDependency('texture', index)))
    const failed = loaded.filter((texture) => !texture).length
    if (failed > 0) {
      const why = ktx2.failures[0] ?? 'the transcoder gave no reason'
      throw new Error(`${failed === 1 ? 'a KTX2 texture' : `${failed} KTX2 textures`} could not be transcoded: ${why}`)
    }
    return gltf.scene
  } finally {
    ktx2.dispose()
  }
}

/**
 * An OBJ with the materials its `mtllib` names, when the package holds that file (OBJLoader alone
 * draws every face grey); without one, the plain geometry. The package's manager answers a name it
 * holds with another URL; a manager without a package (a lone .obj) answers the name as asked, and
 * nothing is fetched for it. The textures the materials name load after this answers (the
 * manager's items: loading-tracker.ts).
 */
async function loadObj(url: string, manager?: LoadingManager): Promise<Object3D> {
  const text = String(await new FileLoader(manager).loadAsync(url))
  const library = /^mtllib[ \t]+(.+?)\s*$/m.exec(text)?.[1]
  const loader = new OBJLoader(manager)
  if (library && manager && manager.resolveURL(library) !== library.normalize('NFC')) {
    const materials = await new MTLLoader(manager).loadAsync(library).catch(() => undefined)
    if (materials) {
      materials.preload()
      loader.setMaterials(materials)
    }
  }
  return loader.parse(text)
}

/**
 * STL and PLY give a geometry: a mesh of it, lit like the rest, or points for a PLY without faces
 * (PLYLoader indexes the faces it reads; STL is always a triangle list).
 */
function fromGeometry(geometry: BufferGeometry, points: boolean): Object3D {
  const colors = geometry.hasAttribute('color')
  if (points) return new Points(geometry, new PointsMaterial({ size: 2, sizeAttenuation: false, vertexColors: colors }))
  if (!geometry.getAttribute('normal')) geometry.computeVertexNormals()
  return new Mesh(geometry, new MeshStandardMaterial({ color: colors ? 0xffffff : 0xb0b8c8, vertexColors: colors }))
}

/**
 * A PLY, with the images its `comment TextureFile` lines name when it has faces (ply-textures.ts:
 * PLYLoader reads neither those nor the faces' texnumber). The images come through `manager`, from
 * the zip convert answers with; a lone .ply naming images is drawn with the ones that load.
 */
async function loadPly(url: string, manager?: LoadingManager): Promise<Object3D> {
  const bytes = (await new FileLoader(manager).setResponseType('arraybuffer').loadAsync(url)) as ArrayBuffer
  const geometry = new PLYLoader(manager).parse(bytes)
  const points = geometry.index === null && !/^element face [1-9]/m.test(new TextDecoder('latin1').decode(bytes.slice(0, 4096)))
  const textures = points ? undefined : readPlyTextures(bytes)
  if (textures && textures.files.length > 0 && geometry.getAttribute('uv')) return texturedPlyMesh(geometry, textures, manager)
  return fromGeometry(geometry, points)
}

/**
 * Loads a model from `url` (an object URL of a dropped file or of a downloaded result, or a path in
 * a package that `manager` resolves, model-package.ts) with the loader of its extension. Without a
 * manager, a .gltf that names external files cannot find them.
 */
export async function loadModel(url: string, extension: string, renderer: WebGLRenderer, manager?: LoadingManager): Promise<Object3D> {
  switch (extension) {
    case 'glb':
    case 'gltf':
      return loadGltf(url, renderer, manager)
    case 'obj':
      return loadObj(url, manager)
    case 'stl':
      return fromGeometry(await new STLLoader(manager).loadAsync(url), false)
    case 'ply':
      return loadPly(url, manager)
    case 'fbx':
      return new FBXLoader(manager).loadAsync(url)
    case 'dae': {
      const collada = await new ColladaLoader(manager).loadAsync(url)
      if (!collada) throw new Error('the COLLADA file holds no scene')
      return collada.scene
    }
    default:
      throw new Error(`no 3D view for .${extension} files`)
  }
}
