import { LoadingManager } from 'three'
import { unzipSync, zipSync } from 'three/examples/jsm/libs/fflate.module.js'
import { extensionOf, VIEWABLE_EXTENSIONS } from './load-model.ts'

/**
 * A model that comes as several files: a .gltf with its .bin and images, an .obj with its .mtl and
 * textures. Dropped together, or as the zip the service answers with (convert to gltf, OBJ with
 * materials), it is one model: the views open its main file and find the others by their names.
 */
export interface ModelPackage {
  /** The path of the model file inside the package. */
  main: string
  files: Map<string, Blob>
}

/** The files a .gltf or .obj names: buffers, material libraries, textures. */
export const COMPANION_EXTENSIONS = ['bin', 'mtl', 'png', 'jpg', 'jpeg', 'webp', 'ktx2', 'tga', 'bmp']

/** Formats whose files name other files; one of these with companions dropped beside it is one model. */
const REFERRING = ['gltf', 'obj']
/** Which file of a package is the model, when it holds several model files. */
const MAIN_ORDER = ['gltf', 'glb', 'obj', 'fbx', 'dae', 'stl', 'ply']

function mainOf(paths: string[]): string | undefined {
  for (const extension of MAIN_ORDER) {
    const found = paths.filter((path) => extensionOf(path) === extension).sort((a, b) => a.split('/').length - b.split('/').length)
    if (found[0]) return found[0]
  }
  return undefined
}

/** The files of a zip the service wrote (folders and macOS resource forks left out). */
export async function packageFromZip(zip: Blob): Promise<ModelPackage> {
  const entries = unzipSync(new Uint8Array(await zip.arrayBuffer()))
  const files = new Map<string, Blob>()
  for (const [path, bytes] of Object.entries(entries)) {
    if (!path.endsWith('/') && !path.startsWith('__MACOSX/')) files.set(path, new Blob([bytes]))
  }
  const main = mainOf([...files.keys()])
  if (!main) throw new Error('the zip holds no model file')
  return { main, files }
}

/** Dropped files as one package, when one of them is a .gltf or .obj and the others are not models. */
export function packageFromFiles(dropped: File[]): ModelPackage | undefined {
  const models = dropped.filter((file) => (VIEWABLE_EXTENSIONS as readonly string[]).includes(extensionOf(file.name)))
  const main = models[0]
  if (models.length !== 1 || dropped.length < 2 || !main || !REFERRING.includes(extensionOf(main.name))) return undefined
  return { main: main.name, files: new Map(dropped.map((file) => [file.name, file])) }
}

/** The package as one zip to upload (the service reads a model and its companions from a zip), named after its model. */
export async function zipOf(pack: ModelPackage): Promise<File> {
  const entries: Record<string, Uint8Array> = {}
  for (const [path, blob] of pack.files) entries[path] = new Uint8Array(await blob.arrayBuffer())
  const base = pack.main.replace(/^.*\//, '').replace(/\.[^.]+$/, '')
  return new File([zipSync(entries, { level: 6 })], `${base}.zip`, { type: 'application/zip' })
}

/**
 * A loading manager that answers every file the model names from the package. The main file is
 * loaded by its path in the package (not its object URL, which has no folder to resolve names
 * against), so the loaders ask for paths relative to it (`./textures/a.png`, `Box0.bin`,
 * URL-encoded or not, with backslashes or not); a name the package lacks under its path is looked up by its last part, as a
 * folder-less drop holds it. Answers the object URLs it made, for the caller to revoke.
 */
export function packageLoading(pack: ModelPackage): { manager: LoadingManager; urls: string[] } {
  const folder = pack.main.includes('/') ? pack.main.slice(0, pack.main.lastIndexOf('/') + 1) : ''
  const byPath = new Map<string, string>()
  const byName = new Map<string, string>()
  const urls: string[] = []
  for (const [path, blob] of pack.files) {
    const url = URL.createObjectURL(blob)
    urls.push(url)
    byPath.set(path, url)
    byName.set(path.replace(/^.*\//, '').toLowerCase(), url)
  }
  const manager = new LoadingManager()
  manager.setURLModifier((asked) => {
    if (asked.startsWith('blob:') || asked.startsWith('data:')) return asked
    // Windows exporters write `.\\tex.jpg` (spider.mtl): a backslash is a folder separator here.
    let path = asked.replace(/\\/g, '/').replace(/^(\.\/)+/, '')
    try {
      path = decodeURIComponent(path)
    } catch {
      // Not URL-encoded: as it is.
    }
    return byPath.get(path) ?? byPath.get(folder + path) ?? byName.get(path.replace(/^.*\//, '').toLowerCase()) ?? asked
  })
  return { manager, urls }
}
