import { defineConfig } from 'vite'
import { transcoderWorkerPlugin } from './build/transcoder-worker.ts'

/**
 * The console's build. three's Draco and KTX2 loaders name their decoders with
 * `new URL('../libs/…', import.meta.url)` (three r170+), so Vite copies the decoders' .js and .wasm
 * into dist/assets/ and the loaders fetch them from this origin; the meshopt decoder is an ES
 * module with its wasm inlined, bundled like any import. Nothing is loaded from a CDN. The Basis
 * transcoder's worker is written as a file of its own (build/transcoder-worker.ts: why).
 */
export default defineConfig({
  // Served by the service under /console/ (packages/server/src/routes/console-page.ts).
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  plugins: [transcoderWorkerPlugin()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // three.js alone is ~700 KB minified; the page is loaded once per session from the service itself.
    chunkSizeWarningLimit: 1500,
  },
})
