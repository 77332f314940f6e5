import { Mesh, Points, type Material, type Object3D, type Texture } from 'three'

/** What the views show under each model: counted from the scene three loaded. */
export interface ModelStats {
  triangles: number
  vertices: number
  meshes: number
  /** Distinct textures whose image arrived, each `width×height`. */
  textures: { name: string; width: number; height: number }[]
  /**
   * Textures the model declares whose image never arrived (a file it names that was not dropped with it):
   * counted apart, where they were listed as `0×0` beside the real sizes.
   */
  texturesNotLoaded: number
}

function texturesOf(material: Material): Texture[] {
  const found: Texture[] = []
  for (const value of Object.values(material)) {
    if (value && typeof value === 'object' && (value as Texture).isTexture) found.push(value as Texture)
  }
  return found
}

/** Counts triangles, vertices, meshes and textures of a loaded scene. */
export function modelStats(root: Object3D): ModelStats {
  const stats: ModelStats = { triangles: 0, vertices: 0, meshes: 0, textures: [], texturesNotLoaded: 0 }
  const seen = new Set<Texture>()
  root.traverse((node) => {
    if (!(node instanceof Mesh) && !(node instanceof Points)) return
    const geometry = node.geometry
    const positions = geometry.getAttribute('position')
    if (!positions) return
    stats.meshes += 1
    stats.vertices += positions.count
    if (node instanceof Mesh) stats.triangles += Math.floor((geometry.index ? geometry.index.count : positions.count) / 3)
    const materials: Material[] = Array.isArray(node.material) ? node.material : [node.material]
    for (const material of materials) {
      for (const texture of texturesOf(material)) {
        if (seen.has(texture)) continue
        seen.add(texture)
        const image = texture.image as { width?: number; height?: number } | undefined
        if (!image?.width || !image.height) stats.texturesNotLoaded += 1
        else stats.textures.push({ name: texture.name || `texture ${seen.size}`, width: image.width, height: image.height })
      }
    }
  })
  return stats
}
