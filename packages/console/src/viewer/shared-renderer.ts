import { type Camera, type Scene, WebGLRenderer } from 'three'
import { VIEW_BACKGROUND } from './background.ts'

/**
 * One WebGL context draws every 3D view of the page, each view's frame copied into its own 2D canvas.
 * A browser keeps only so many WebGL contexts at once (chromium 16) and drops the oldest past that: with
 * a renderer for each view, the ninth card's pair of views blacked out the first card's for good ("Too
 * many active WebGL contexts. Oldest context will be lost."). The page's own, so made once, on first use.
 */
let shared: WebGLRenderer | undefined

/** The renderer every view draws with (loaders that must know the GPU, KTX2, ask it too). */
export function sharedRenderer(): WebGLRenderer {
  if (!shared) {
    shared = new WebGLRenderer({ antialias: true })
    shared.setClearColor(VIEW_BACKGROUND)
  }
  return shared
}

/**
 * Draws `scene` as `camera` sees it into `target`, a 2D canvas whose size in device pixels its view
 * sets. The copy is made in the same task as the drawing, while WebGL's buffer still holds it.
 */
export function drawView(target: HTMLCanvasElement, scene: Scene, camera: Camera): void {
  const renderer = sharedRenderer()
  const source = renderer.domElement
  if (source.width !== target.width || source.height !== target.height) renderer.setSize(target.width, target.height, false)
  renderer.render(scene, camera)
  const context = target.getContext('2d')
  if (!context) return
  context.clearRect(0, 0, target.width, target.height)
  context.drawImage(source, 0, 0)
}
