import {
  AmbientLight,
  Box3,
  DirectionalLight,
  HemisphereLight,
  PerspectiveCamera,
  Scene,
  Vector3,
  type Material,
  type Object3D,
  type Texture,
  type WebGLRenderer,
} from 'three'
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js'
import { drawView, sharedRenderer } from './shared-renderer.ts'

interface Side {
  canvas: HTMLCanvasElement
  scene: Scene
  controls: OrbitControls
  model?: Object3D
}

/**
 * Two 3D views of one camera: the input and the output side by side. Each canvas has its own
 * orbit controls, but both drive the same camera and target, so a drag in either moves both. Both
 * are drawn by the page's one WebGL renderer (shared-renderer.ts) into their 2D canvases.
 */
export class TwinView {
  readonly camera = new PerspectiveCamera(45, 1, 0.01, 1000)
  private readonly sides: Side[]
  private readonly resize: ResizeObserver
  private frame = 0
  private disposed = false

  constructor(canvases: [HTMLCanvasElement, HTMLCanvasElement]) {
    this.camera.position.set(2, 1.5, 3)
    this.sides = canvases.map((canvas) => {
      const scene = new Scene()
      scene.add(new HemisphereLight(0xffffff, 0x444455, 1.2), new AmbientLight(0xffffff, 0.4))
      const sun = new DirectionalLight(0xffffff, 1.5)
      sun.position.set(3, 5, 4)
      scene.add(sun)
      const controls = new OrbitControls(this.camera, canvas)
      // The keyboard moves the views too: arrow keys pan once a view has the focus (the canvas is focusable).
      controls.listenToKeyEvents(canvas)
      controls.addEventListener('change', () => this.sync(controls))
      return { canvas, scene, controls }
    })
    this.resize = new ResizeObserver(() => this.fit())
    for (const canvas of canvases) this.resize.observe(canvas)
    this.fit()
  }

  /** The renderer that draws the views, for loaders that must know the GPU (KTX2). */
  renderer(): WebGLRenderer {
    return sharedRenderer()
  }

  /** Puts a model on one side; the camera frames the larger of the two. */
  show(side: 0 | 1, model: Object3D): void {
    const target = this.sides[side]!
    if (target.model) target.scene.remove(target.model)
    target.model = model
    target.scene.add(model)
    this.frameModels()
  }

  private frameModels(): void {
    const bounds = new Box3()
    for (const side of this.sides) if (side.model) bounds.expandByObject(side.model)
    if (bounds.isEmpty()) return
    const center = bounds.getCenter(new Vector3())
    const radius = Math.max(bounds.getSize(new Vector3()).length() / 2, 1e-3)
    const distance = radius / Math.sin((this.camera.fov * Math.PI) / 360)
    this.camera.near = distance / 100
    this.camera.far = distance * 100
    this.camera.position.copy(center).add(new Vector3(0.6, 0.45, 1).normalize().multiplyScalar(distance))
    this.camera.updateProjectionMatrix()
    for (const side of this.sides) {
      side.controls.target.copy(center)
      side.controls.update()
    }
    this.render()
  }

  /** One control moved the shared camera: the other takes the same target, then both views redraw. */
  private sync(moved: OrbitControls): void {
    for (const side of this.sides) if (side.controls !== moved) side.controls.target.copy(moved.target)
    this.render()
  }

  private fit(): void {
    const ratio = Math.min(window.devicePixelRatio, 2)
    for (const { canvas } of this.sides) {
      const width = canvas.clientWidth || 300
      const height = canvas.clientHeight || 200
      canvas.width = Math.round(width * ratio)
      canvas.height = Math.round(height * ratio)
      this.camera.aspect = width / height
    }
    this.camera.updateProjectionMatrix()
    this.render()
  }

  /** Draws both views on the next frame (once, however many changes came in). */
  render(): void {
    if (this.frame || this.disposed) return
    this.frame = requestAnimationFrame(() => {
      this.frame = 0
      for (const side of this.sides) drawView(side.canvas, side.scene, this.camera)
    })
  }

  dispose(): void {
    this.disposed = true
    cancelAnimationFrame(this.frame)
    this.resize.disconnect()
    for (const side of this.sides) {
      side.controls.dispose()
      if (side.model) releaseGpu(side.model)
    }
  }
}

/**
 * Frees what a model holds on the GPU: in the page's one WebGL context it stays there after the view
 * goes, where the view's own context took it along when it was dropped.
 */
function releaseGpu(model: Object3D): void {
  model.traverse((node) => {
    const { geometry, material } = node as { geometry?: { dispose(): void }; material?: Material | Material[] }
    geometry?.dispose()
    for (const each of Array.isArray(material) ? material : material ? [material] : []) {
      for (const value of Object.values(each)) if ((value as Texture | null)?.isTexture) (value as Texture).dispose()
      each.dispose()
    }
  })
}
