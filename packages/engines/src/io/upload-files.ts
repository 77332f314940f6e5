/**
 * Finds a file referenced by the model (an .mtl, a texture, a .bin) among the files uploaded with it
 * (the other entries of a zip). Every reader that follows file references takes one of these.
 */
export type ResolveFile = (reference: string) => Uint8Array | undefined

/**
 * The resolver of a zip's entries for the model at `modelPath`. Exporters write references in every
 * shape: relative (`./duckCM.tga`, `tex/a.png`, `..\maps\a.png`), absolute paths of the author's disk
 * (`D:\projects\...\SpiderTex.jpg`, `/Users/x/Desktop/uv.png`), `file://` URIs, URL-escaped names
 * (`my%20tex.png`) and names whose case differs from the file's. A relative reference is looked up
 * beside the model first (exactly, then ignoring case); any reference then falls back to its base
 * name anywhere in the upload, ignoring case, since the author's folders are not in the zip.
 *
 * @example
 * const resolve = createUploadResolver(unzipSafely(bytes, limits), 'models/duck.dae')
 * resolve('file:///C:/art/DUCKCM.TGA') // the bytes of models/duckCM.tga
 */
export function createUploadResolver(files: ReadonlyMap<string, Uint8Array>, modelPath: string): ResolveFile {
  const folder = modelPath.includes('/') ? modelPath.slice(0, modelPath.lastIndexOf('/') + 1) : ''
  const byLowerPath = new Map<string, Uint8Array>()
  const byLowerName = new Map<string, Uint8Array>()
  for (const [path, bytes] of files) {
    if (!byLowerPath.has(path.toLowerCase())) byLowerPath.set(path.toLowerCase(), bytes)
    // The first entry of a base name wins: zip order is the author's, and usually the shallowest first.
    if (!byLowerName.has(baseName(path).toLowerCase())) byLowerName.set(baseName(path).toLowerCase(), bytes)
  }
  const lookUp = (reference: string): Uint8Array | undefined => {
    const path = reference.replace(/\\/g, '/')
    if (!isAbsolute(path)) {
      const joined = normalize(folder + path)
      const found = files.get(joined) ?? byLowerPath.get(joined.toLowerCase())
      if (found) return found
    }
    return byLowerName.get(baseName(path).toLowerCase())
  }
  return (reference) => {
    const raw = stripFileScheme(reference.trim())
    if (raw === '' || raw.startsWith('data:')) return undefined
    // A file may be named with a literal "%20": try the reference as written before unescaping it.
    const decoded = decodeUriSafely(raw)
    return lookUp(raw) ?? (decoded !== raw ? lookUp(decoded) : undefined)
  }
}

/** The last segment of a path written with either separator. */
export function baseName(path: string): string {
  return path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1)
}

/** `file:///C:/a.png` → `C:/a.png`, `file://localhost/a.png` → `/a.png`, `file:a.png` → `a.png`. */
function stripFileScheme(reference: string): string {
  const match = /^file:(?:\/\/(?:localhost)?)?/i.exec(reference)
  if (!match) return reference
  const rest = reference.slice(match[0].length)
  return /^\/[a-zA-Z]:/.test(rest) ? rest.slice(1) : rest
}

function isAbsolute(path: string): boolean {
  return path.startsWith('/') || /^[a-zA-Z]:/.test(path)
}

/** A URI reference with its %-escapes decoded, or as written when they are malformed. */
export function decodeUriSafely(uri: string): string {
  try {
    return decodeURIComponent(uri)
  } catch {
    return uri
  }
}

/** Resolves `.` and `..` segments; `..` past the top stays at the top (the zip's root). */
function normalize(path: string): string {
  const out: string[] = []
  for (const part of path.split('/')) {
    if (part === '..') out.pop()
    else if (part !== '.' && part !== '') out.push(part)
  }
  return out.join('/')
}
