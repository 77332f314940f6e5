import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CONSOLE_CSP, consoleDistFolder, TRANSCODER_WORKER_CSP, TRANSCODER_WORKER_FILE } from '../src/routes/console-page.ts'
import { useInProcessApp, VARIANTS } from './support/harness.ts'

/** The page's files as the service serves them from the console's compiled build (built by the global setup). */
describe.each(VARIANTS)('the console page, variant %s', (variant) => {
  const mos = useInProcessApp(variant)

  it('redirects / and /console to /console/', async () => {
    for (const path of ['/', '/console']) {
      const response = await mos.call(path, { redirect: 'manual' }, null)
      expect(response.status).toBe(302)
      expect(response.headers.get('location')).toBe('/console/')
    }
  })

  it("serves the build's index.html for the app's own pages, without an API key, under the console's CSP", async () => {
    const index = await readFile(join(consoleDistFolder(), 'index.html'), 'utf8')
    for (const path of ['/console/', '/console/admin', '/console/work/anything']) {
      const response = await mos.call(path, {}, null)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(response.headers.get('content-security-policy')).toBe(CONSOLE_CSP)
      expect(response.headers.get('x-frame-options')).toBe('DENY')
      expect(await response.text()).toBe(index)
    }
    expect(CONSOLE_CSP).toContain("default-src 'self'")
    expect(CONSOLE_CSP).toContain("'wasm-unsafe-eval'")
    expect(CONSOLE_CSP).not.toMatch(/https?:|'unsafe-inline'|'unsafe-eval'/)
  })

  it('serves the KTX2 transcoder worker under its own policy, the only one that allows eval', async () => {
    const response = await mos.call(`/console/${TRANSCODER_WORKER_FILE}`, {}, null)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(response.headers.get('content-security-policy')).toBe(TRANSCODER_WORKER_CSP)
    // Three's worker with the transcoder inside: what the page starts it for.
    const text = await response.text()
    expect(text).toContain('KTX2File')
    expect(text).toBe(await readFile(join(consoleDistFolder(), TRANSCODER_WORKER_FILE), 'utf8'))
    // Eval for the worker alone: it fetches nothing and loads no other script.
    expect(TRANSCODER_WORKER_CSP).toContain("default-src 'none'")
    expect(TRANSCODER_WORKER_CSP).not.toMatch(/'self'|https?:|blob:|data:/)
  })

  it('serves the assets cached for good, the decoders as application/wasm, and no file outside the build', async () => {
    const assets = await readdir(join(consoleDistFolder(), 'assets'))
    const script = assets.find((name) => /^index-.*\.js$/.test(name))!
    const wasm = assets.filter((name) => name.endsWith('.wasm'))
    // three's Draco and Basis decoders, copied into the build (no CDN at run time).
    expect(wasm.some((name) => name.startsWith('draco_decoder'))).toBe(true)
    expect(wasm.some((name) => name.startsWith('basis_transcoder'))).toBe(true)

    const js = await mos.call(`/console/assets/${script}`, {}, null)
    expect(js.status).toBe(200)
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(js.headers.get('cache-control')).toContain('immutable')
    expect(Buffer.from(await js.arrayBuffer()).equals(await readFile(join(consoleDistFolder(), 'assets', script)))).toBe(true)

    const decoder = await mos.call(`/console/assets/${wasm[0]}`, {}, null)
    expect(decoder.headers.get('content-type')).toBe('application/wasm')
    expect(new Uint8Array(await decoder.arrayBuffer()).subarray(0, 4)).toEqual(new Uint8Array([0, 0x61, 0x73, 0x6d]))

    for (const path of ['/console/assets/missing.js', '/console/%2e%2e/package.json', '/console/..%2f..%2fpackage.json']) {
      const response = await mos.call(path, {}, null)
      expect(response.status, path).toBe(404)
      expect(((await response.json()) as { error: string }).error).toMatch(/./)
    }
    // Not even a path: refused before any file is looked for.
    const malformed = await mos.call('/console/%E0%A4%A.js', {}, null)
    expect(malformed.status).toBe(400)
  })
})
