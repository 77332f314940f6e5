import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core'
import type { CompletedTask } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { localServiceEnv, throwAwayLicenceEnv } from '../../../test/support/service-env.ts'
import { startMos, stopMos, type MosProcess } from '../../server/test/support/processes.ts'
import { chromiumAvailable, consolePasswordHash, launchChromium } from './support/browser.ts'
import {
  expectDrawn,
  followEventStreams,
  recordOf,
  SLOW,
  start,
  taskIdOf,
  trianglesOf,
  runTask,
  untilEnded,
} from './support/console-page.ts'

const corpus = corpusFiles({
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  knight: shared('glb', 'chr_knight.glb'),
  shapes: shared('glb', 'ShapeCollection.glb'),
  png: assimp('glTF2', 'BoxTextured-glTF', 'CesiumLogoFlat.png'),
  gltf: assimp('glTF2', 'BoxTextured-glTF', 'BoxTextured.gltf'),
  bin: assimp('glTF2', 'BoxTextured-glTF', 'BoxTextured0.bin'),
  spider: assimp('OBJ', 'spider.obj'),
  spiderMtl: assimp('OBJ', 'spider.mtl'),
  gltf1: assimp('glTF', 'BoxTextured-glTF-Embedded', 'BoxTextured.gltf'),
})
/** The textures spider.mtl names, beside it in the corpus. */
const SPIDER_TEXTURES = ['SpiderTex.jpg', 'drkwood2.jpg', 'engineflare1.jpg', 'wal67ar_small.jpg', 'wal69ar_small.jpg'].map((name) =>
  join(dirname(corpus.paths.spider), name),
)
const runnable = corpus.available && chromiumAvailable()
const API_KEY = `console-ui-${randomBytes(8).toString('hex')}`
const PASSWORD = `pw-${randomBytes(12).toString('base64url')}`
const PASSWORD_HASH = consolePasswordHash(PASSWORD)

/**
 * The console in a real browser against the real compiled service (`packages/server/dist/main.js`,
 * variant A, its own data folder, a free port): sign-in, work, the 3D views, the admin pages. One
 * browser and one page for the whole file; the steps run in order and build on each other.
 */
describe.skipIf(!runnable)('the console in chromium', () => {
  let mos: MosProcess | undefined
  let mosB: MosProcess | undefined
  let dir: string | undefined
  let browser: Browser | undefined
  let context: BrowserContext
  let page: Page
  let streams: ReturnType<typeof followEventStreams>
  const pageProblems: string[] = []
  /** The browser's 404s (the page's own requests, its favicon too, which no request event shows). */
  const notFound: string[] = []
  const taskIds: string[] = []

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mos-console-'))
    mos = await startMos(
      'console',
      localServiceEnv({
        variant: 'A',
        dataDir: dir,
        apiKeys: API_KEY,
        extra: { SERVICE__CONSOLE__ADMIN_PASSWORD_HASH: PASSWORD_HASH, ...throwAwayLicenceEnv('lic_console') },
      }),
    )
    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true })
    page = await context.newPage()
    streams = followEventStreams(page)
    // A CSP refusal or an uncaught error in the page fails the file at the end (CDN use, inline code, a crash).
    page.on('console', (message) => {
      if (message.type() === 'error' && !/401|Unauthorized|status of 4\d\d/.test(message.text())) pageProblems.push(message.text())
      // A WebGL context the browser dropped to make room for another: a view gone black.
      if (message.text().includes('WebGL contexts')) pageProblems.push(message.text())
      if (/status of 404/.test(message.text())) notFound.push(message.text())
    })
    page.on('pageerror', (error) => pageProblems.push(error.message))
    // Everything the page loads comes from the service itself (or is a blob/data URL it made): no CDN.
    page.on('request', (request) => {
      const url = new URL(request.url())
      if (!['blob:', 'data:'].includes(url.protocol) && url.hostname !== '127.0.0.1') pageProblems.push(`request to ${url.href}`)
    })
    const webgl = await page.evaluate(() => Boolean(document.createElement('canvas').getContext('webgl2')))
    if (!webgl) throw new Error('chromium has no WebGL here (SwiftShader missing?): the 3D views cannot be checked')
  }, SLOW)

  afterAll(async () => {
    await browser?.close()
    await stopMos(mos)
    await stopMos(mosB)
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('opens the sign-in page with no error in the browser console: not being signed in yet is no error', async () => {
    const errors: string[] = []
    const collect = (message: ConsoleMessage) => {
      if (message.type() === 'error') errors.push(message.text())
    }
    page.on('console', collect)
    try {
      // Every request the page makes at load answered (the session question among them), then the form it led to.
      const quiet = page.waitForLoadState('networkidle')
      await page.goto(`${mos!.url}/`)
      await quiet
      await page.getByLabel('Administrator password').waitFor()
      await expect.poll(() => page.title()).toBe('Sign in · Mos console')
      // Where /auth/me's 401 was logged: "Failed to load resource: the server responded with a status of 401".
      expect(errors).toEqual([])
    } finally {
      page.off('console', collect)
    }
  })

  it('refuses a wrong password, in words', async () => {
    await page.goto(`${mos!.url}/`)
    await page.getByLabel('Administrator password').fill('not-the-password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('wrong password')
    expect(page.url()).toBe(`${mos!.url}/console/`)
    await expect.poll(() => page.title()).toBe('Sign in · Mos console')
  })

  it('signs in with the password and says who is signed in; the browser holds a session cookie, no key', async () => {
    await page.getByLabel('Administrator password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByTestId('who').waitFor()
    expect(await page.getByTestId('who').textContent()).toBe('admin')
    await expect.poll(() => page.title()).toBe('Work · Mos console')
    const cookies = await context.cookies()
    expect(cookies.map((cookie) => cookie.name)).toEqual(['mos_session'])
    expect(cookies[0]!.httpOnly).toBe(true)
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }))
    expect(stored).not.toContain(API_KEY)
    // Nothing the page loaded was missing: its icon is the build's, where the browser asked for /favicon.ico.
    expect(notFound).toEqual([])
    expect(
      await page.evaluate(async () =>
        (await fetch(document.querySelector<HTMLLinkElement>('link[rel=icon]')!.href)).headers.get('content-type'),
      ),
    ).toBe('image/svg+xml')
    // Only what variant A implements, from /config.
    // The form comes with /config, read once the session is known.
    await expect
      .poll(() => page.getByLabel('Operation').locator('option').allTextContents())
      .toEqual(['compress', 'convert', 'repair', 'diagnose', 'texture optimize', 'texture ktx2'])
  })

  it('keeps a field chosen the moment the operation changes (the fields change with it, not a frame later)', async () => {
    // A user (or a test) can choose a field between the render that shows the new operation's fields and the
    // frame after it: the value chosen there must be the one Start sends.
    const kept = await page.evaluate(async () => {
      const chosen = new Promise<HTMLSelectElement>((resolve) => {
        const observer = new MutationObserver(() => {
          const target = document.querySelector<HTMLSelectElement>('#opt-convert-target_format')
          if (!target) return
          observer.disconnect()
          target.value = 'obj'
          target.dispatchEvent(new Event('change', { bubbles: true }))
          resolve(target)
        })
        observer.observe(document.body, { childList: true, subtree: true })
      })
      const operation = document.querySelector<HTMLSelectElement>('#operation')!
      operation.value = 'convert'
      operation.dispatchEvent(new Event('change', { bubbles: true }))
      const target = await chosen
      // Past the frames in which effects run.
      for (let frame = 0; frame < 3; frame++) await new Promise((resolve) => requestAnimationFrame(resolve))
      await new Promise((resolve) => setTimeout(resolve, 50))
      return document.querySelector<HTMLSelectElement>('#opt-convert-target_format')?.value ?? `gone (${target.isConnected})`
    })
    expect(kept).toBe('obj')
  })

  it(
    'compresses a chosen model: live progress to 100, both 3D views drawn, sizes and triangles, the result downloaded as a GLB',
    async () => {
      await page.getByLabel('Operation').selectOption('compress')
      // Fields that apply under another field's value come and go with it (/config's applies_when).
      await page.getByLabel('engine').selectOption('meshopt')
      await expect.poll(() => page.getByLabel('position_quantization_bits').count()).toBe(0)
      await page.getByLabel('engine').selectOption('draco')
      expect(await page.getByLabel('position_quantization_bits').inputValue()).toBe('14')
      await page.locator('#files').setInputFiles(corpus.paths.box)
      const card = await start(page)
      await untilEnded(card)
      expect(await card.getByTestId('task-status').textContent()).toBe('Completed 100%')
      expect(await card.getByTestId('task-progress').getAttribute('value')).toBe('100')
      expect(await card.getByTestId('task-status').getAttribute('aria-live')).toBe('polite')
      taskIds.push(await taskIdOf(card))

      // Both views loaded their model (the input from the dropped file, the output downloaded) …
      // BoxTextured is a cube: 12 triangles before and after Draco.
      expect(await trianglesOf(card)).toEqual(['12', '12'])
      // Its one texture (CesiumLogoFlat.png) is 211×211, read from the image three decoded.
      expect(await card.locator('.stats').first().textContent()).toContain('211×211')
      // … and drew it: the screenshots of both canvases show the textured box, not only the background.
      for (const view of ['input-view', 'output-view']) {
        await expectDrawn(card, view)
      }
      expect(await card.getByTestId('saving').textContent()).toMatch(/^-?\d+\.\d%$/)

      const [download] = await Promise.all([page.waitForEvent('download'), card.getByTestId('download').click()])
      const bytes = await readFile((await download.path())!)
      expect(bytes.subarray(0, 4).toString('latin1')).toBe('glTF')
      expect(bytes.readUInt32LE(4)).toBe(2)
      expect(bytes.readUInt32LE(8)).toBe(bytes.length)
      expect(download.suggestedFilename()).toMatch(/\.glb$/)
    },
    SLOW * 2,
  )

  it(
    'converts a model to STL: the output view opens it with its own loader and draws it',
    async () => {
      const card = await runTask(page, 'convert', corpus.paths.box, { target_format: 'stl' })
      expect(await trianglesOf(card)).toEqual(['12', '12'])
      await expectDrawn(card, 'output-view')
    },
    SLOW * 2,
  )

  it(
    'converts glTF 1.0 to GLB, and the card says what the reader could not carry, as the task record does',
    async () => {
      const card = await runTask(page, 'convert', corpus.paths.gltf1, { target_format: 'glb' })
      expect(await card.getByTestId('task-status').textContent()).toBe('Completed 100%')
      const id = await taskIdOf(card)
      const record = await page.evaluate(async (taskId) => (await (await fetch(`/admin/tasks/${taskId}`)).json()) as CompletedTask, id)
      expect(record.warnings).toContainEqual(expect.stringContaining('technique (GLSL shaders) not carried'))
      await card.getByText(`Input warnings (${record.warnings!.length})`).click()
      const lines = card.getByRole('list', { name: 'Input warnings' }).locator('li')
      await expect.poll(() => lines.first().isVisible()).toBe(true)
      expect(await lines.allTextContents()).toEqual(record.warnings)
    },
    SLOW * 2,
  )

  it(
    'diagnoses a dropped model and shows the report: meshes, textures, issues, recommendations',
    async () => {
      await page.getByLabel('Operation').selectOption('diagnose')
      const file = await readFile(corpus.paths.knight)
      const transfer = await page.evaluateHandle(
        ({ base64, name }) => {
          const data = new DataTransfer()
          data.items.add(new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], name, { type: 'model/gltf-binary' }))
          return data
        },
        { base64: file.toString('base64'), name: 'chr_knight.glb' },
      )
      await page.getByTestId('drop-zone').dispatchEvent('drop', { dataTransfer: transfer })
      await page.getByText('1 file: chr_knight.glb').waitFor()
      const card = await start(page)
      await untilEnded(card)
      const report = card.getByRole('region', { name: 'Diagnosis report' })
      await report.waitFor()
      expect(await report.locator('p').first().textContent()).toMatch(/^GLB/)
      expect(await report.getByRole('heading', { name: /^Meshes \(\d+\)$/ }).count()).toBe(1)
      expect(await report.locator('tbody tr').count()).toBeGreaterThan(0)
      expect(await report.getByRole('heading', { name: /^Textures \(1\)$/ }).count()).toBe(1)
      // Uncompressed geometry: a low-severity issue and the engines' expected savings (docs/diagnose.md).
      expect(await report.textContent()).toContain('uncompressed geometry')
      const recommendations = await report.locator('.recommendations li').allTextContents()
      expect(recommendations.some((line) => line.startsWith('compress with engine draco'))).toBe(true)
      // The outcome is a report, not a smaller model: its size alone, where "189.9 KB → 1.2 KB" read as a 99% saving.
      const reportBytes = await page.evaluate(
        async (id) => ((await (await fetch(`/admin/tasks/${id}`)).json()) as { output: { size_bytes: number } }).output.size_bytes,
        await taskIdOf(card),
      )
      expect(await card.getByTestId('sizes').textContent()).toBe(
        `Report: ${(reportBytes / 1024).toFixed(1)} KB (a diagnosis reads the model and leaves it as it was)`,
      )
      taskIds.push(await taskIdOf(card))
    },
    SLOW * 2,
  )

  it(
    'sends two models as one batch: a card each, both in one batch of the service',
    async () => {
      await page.getByLabel('Operation').selectOption('compress')
      await page.locator('#files').setInputFiles([corpus.paths.box, corpus.paths.knight])
      // A professional licence sets no batch limit: the box says so by naming none.
      expect(await page.getByText(/^Send as one batch/).textContent()).toBe('Send as one batch')
      await page.getByLabel(/Send as one batch/).check()
      await page.getByLabel('engine').selectOption('meshopt')
      await start(page, 2)
      const cards = page.getByTestId('task-card')
      for (const card of [cards.nth(0), cards.nth(1)]) {
        await untilEnded(card)
        expect(await card.getByTestId('task-status').textContent()).toBe('Completed 100%')
      }
      expect(await cards.nth(0).locator('h3').textContent()).toBe('BoxTextured.glb')
      expect(await cards.nth(1).locator('h3').textContent()).toBe('chr_knight.glb')
      const ids = [await taskIdOf(cards.nth(0)), await taskIdOf(cards.nth(1))]
      const batches = await page.evaluate(
        (taskIds) =>
          Promise.all(
            taskIds.map(async (id) => ((await (await fetch(`/admin/tasks/${id}`)).json()) as { batch_id: string | null }).batch_id),
          ),
        ids,
      )
      expect(batches[0]).toMatch(/\S/)
      expect(batches[1]).toBe(batches[0])
    },
    SLOW * 2,
  )

  it(
    'says what the steps asked for did: merge and simplify on ShapeCollection, with the figures of the task record',
    async () => {
      await page.getByLabel('Operation').selectOption('compress')
      await page.locator('#files').setInputFiles(corpus.paths.shapes)
      await page.getByLabel('engine').selectOption('meshopt')
      await page.getByLabel('merge', { exact: true }).check()
      await page.getByLabel('simplify_ratio').fill('0.5')
      const card = await start(page)
      await untilEnded(card)
      expect(await card.getByTestId('task-status').textContent()).toBe('Completed 100%')
      const id = await taskIdOf(card)
      const record = await page.evaluate(async (taskId) => (await (await fetch(`/admin/tasks/${taskId}`)).json()) as CompletedTask, id)
      const merge = record.merge!
      const simplify = record.simplify!
      expect(merge.draw_calls_after).toBeLessThan(merge.draw_calls_before)
      const lines = await card.getByRole('list', { name: 'What it did' }).locator('li').allTextContents()
      expect(lines).toEqual([
        `Merged: ${merge.draw_calls_before} → ${merge.draw_calls_after} draw calls, ${merge.nodes_before} → ${merge.nodes_after} nodes`,
        expect.stringMatching(
          new RegExp(
            `^Simplified: ${simplify.triangles_before.toLocaleString('en-US')} → ${simplify.triangles_after.toLocaleString('en-US')} triangles \\(`,
          ),
        ),
      ])
      await page.getByLabel('merge', { exact: true }).uncheck()
      await page.getByLabel('simplify_ratio').fill('')
    },
    SLOW * 2,
  )

  it(
    'applies a preset as the API does: mobile merges ShapeCollection and the form shows what it sets; a field the user sets wins',
    async () => {
      await page.getByLabel('Operation').selectOption('compress')
      await page.locator('#files').setInputFiles(corpus.paths.shapes)
      await page.getByLabel('engine').selectOption('meshopt')
      // The step above left merge unchecked by hand: choosing the preset applies it over that.
      await page.getByLabel('preset').selectOption('mobile')
      const merge = page.getByLabel('merge', { exact: true })
      expect(await merge.isChecked()).toBe(true)
      expect(await page.getByLabel('texture_max_size').inputValue()).toBe('1024')
      expect(await page.getByLabel('texture_power_of_two').isChecked()).toBe(true)
      expect(await page.locator('#opt-compress-merge-preset').textContent()).toBe('Set by preset mobile.')
      await page.getByLabel('simplify_ratio').fill('0.75')
      expect(await page.locator('#opt-compress-simplify_ratio-preset').textContent()).toBe(
        "Your value is sent and wins over preset mobile's 0.5.",
      )
      const card = await start(page)
      await untilEnded(card)
      expect(await card.getByTestId('task-status').textContent()).toBe('Completed 100%')
      const record = await recordOf(page, card)
      // What the service ran: the preset's fields, but the ratio the user typed.
      expect(record.options).toMatchObject({
        merge: true,
        texture_max_size: 1024,
        texture_power_of_two: true,
        texture_progressive_jpeg: true,
        simplify_ratio: 0.75,
        simplify_error: 0.01,
      })
      const lines = await card.getByRole('list', { name: 'What it did' }).locator('li').allTextContents()
      expect(lines[0]).toBe(
        `Merged: ${record.merge!.draw_calls_before} → ${record.merge!.draw_calls_after} draw calls, ${record.merge!.nodes_before} → ${record.merge!.nodes_after} nodes`,
      )
      await page.getByLabel('preset').selectOption('')
      await page.getByLabel('simplify_ratio').fill('')
    },
    SLOW * 2,
  )

  it(
    're-encodes the textures in the compress task: texture_format shows the fields that apply to it, and the WebP result draws',
    async () => {
      await page.getByLabel('Operation').selectOption('compress')
      await page.locator('#files').setInputFiles(corpus.paths.box)
      await page.getByLabel('engine').selectOption('meshopt')
      const count = (name: string) => page.getByLabel(name, { exact: true }).count()
      // No texture_format: progressive JPEG applies, the quality does not.
      expect([await count('texture_progressive_jpeg'), await count('texture_quality')]).toEqual([1, 0])
      await page.getByLabel('texture_format').selectOption('ktx2')
      await expect.poll(() => count('texture_progressive_jpeg')).toBe(0)
      expect([await count('texture_quality'), await count('lossy_normal_maps')]).toEqual([0, 1])
      await page.getByLabel('texture_format').selectOption('webp')
      const quality = page.getByLabel('texture_quality', { exact: true })
      expect(await quality.inputValue()).toBe('82')
      await quality.fill('30')
      const card = await start(page)
      await untilEnded(card)
      expect(await card.getByTestId('task-status').textContent()).toBe('Completed 100%')
      const record = await recordOf(page, card)
      expect(record.options).toMatchObject({ texture_format: 'webp', texture_quality: 30 })
      expect(record.textures).toEqual([expect.objectContaining({ from: 'image/png', to: 'image/webp' })])
      // three.js reads EXT_texture_webp: the output view draws the WebP-textured box, 211×211 as before.
      expect(await card.locator('.stats').nth(1).textContent()).toContain('211×211')
      await expectDrawn(card, 'output-view')
      await page.getByLabel('texture_format').selectOption('')
    },
    SLOW * 2,
  )

  it(
    "gives a field whose range changes with the format that range's default, so Start sends the form",
    async () => {
      await page.getByLabel('Operation').selectOption('texture_ktx2')
      const ktx2Quality = page.getByLabel('quality', { exact: true })
      expect(await ktx2Quality.inputValue()).toBe('128')
      await page.getByLabel('uastc').check()
      expect([await ktx2Quality.inputValue(), await ktx2Quality.getAttribute('max')]).toEqual(['2', '4'])

      await page.getByLabel('Operation').selectOption('texture_optimize')
      await page.getByLabel('format').selectOption('webp')
      const quality = page.getByLabel('quality', { exact: true })
      expect(await quality.inputValue()).toBe('82')
      await quality.fill('90')
      // 90 is no png quality (1–9): the field takes png's default instead of blocking Start.
      await page.getByLabel('format').selectOption('png')
      expect([await quality.inputValue(), await quality.getAttribute('max')]).toEqual(['6', '9'])
      await page.locator('#files').setInputFiles(corpus.paths.png)
      // A value the user types out of range is theirs to fix: Start says why it sent nothing, in the page's alert.
      await quality.fill('50')
      await page.getByRole('button', { name: 'Start' }).click()
      await expect.poll(() => page.getByRole('alert').allTextContents()).toEqual([expect.stringMatching(/^Not started: quality: .*9/)])
      await quality.fill('7')
      const card = await start(page)
      await untilEnded(card)
      expect(await card.getByTestId('task-status').textContent()).toBe('Completed 100%')
      expect(await page.getByRole('alert').count()).toBe(0)
    },
    SLOW,
  )

  it(
    'optimizes a texture on its own: the input and output images side by side',
    async () => {
      await page.getByLabel('Operation').selectOption('texture_optimize')
      await page.locator('#files').setInputFiles(corpus.paths.png)
      await page.getByLabel('format').selectOption('webp')
      const card = await start(page)
      await untilEnded(card)
      expect(await card.getByTestId('task-status').textContent()).toBe('Completed 100%')
      const output = card.getByRole('img', { name: /^Output: / })
      await output.waitFor()
      // Both decoded by the browser: the output is the same 211×211 logo, in the format the task chose.
      const sizes = () =>
        card
          .getByRole('img')
          .evaluateAll((images) =>
            (images as HTMLImageElement[]).map((image) => (image.complete ? `${image.naturalWidth}×${image.naturalHeight}` : 'loading')),
          )
      await expect.poll(sizes).toEqual(['211×211', '211×211'])
    },
    SLOW,
  )

  it(
    'takes a .gltf dropped with its .bin and texture as one model: sent as one zip, the input view finds its files',
    async () => {
      await page.getByLabel('Operation').selectOption('compress')
      await page.locator('#files').setInputFiles([corpus.paths.gltf, corpus.paths.bin, corpus.paths.png])
      await page.getByText(/^1 model from 3 files: .* \(sent as BoxTextured\.zip\)$/).waitFor()
      await page.getByLabel('engine').selectOption('meshopt')
      // The Mos extension field that applies under meshopt: the output view's three.js reads KHR_meshopt_compression too.
      await page.getByLabel('meshopt_extension').selectOption('khr')
      const card = await start(page)
      await untilEnded(card)
      expect(await card.getByTestId('task-status').textContent()).toBe('Completed 100%')
      // Named after the model dropped, with its files (the zip sent is named beside them).
      expect(await card.locator('h3').textContent()).toBe('BoxTextured.gltf + 2 files')
      expect(await card.locator('header .muted').textContent()).toContain('(sent as BoxTextured.zip,')
      expect(await trianglesOf(card)).toEqual(['12', '12'])
      // The texture came from the dropped PNG, found by the name the .gltf gives it.
      expect(await card.locator('.stats').first().textContent()).toContain('211×211')
      await expectDrawn(card, 'input-view')
      await expectDrawn(card, 'output-view')
      const [download] = await Promise.all([page.waitForEvent('download'), card.getByTestId('download').click()])
      const glb = await readFile((await download.path())!)
      const json = JSON.parse(glb.subarray(20, 20 + glb.readUInt32LE(12)).toString('utf8')) as { extensionsRequired?: string[] }
      expect(json.extensionsRequired).toContain('KHR_meshopt_compression')
    },
    SLOW * 2,
  )

  it(
    'converts an OBJ dropped with its materials and textures to OBJ: the zip that comes back opens in the output view',
    async () => {
      const card = await runTask(page, 'convert', [corpus.paths.spider, corpus.paths.spiderMtl, ...SPIDER_TEXTURES], {
        target_format: 'obj',
      })
      expect(await card.getByTestId('task-status').textContent()).toBe('Completed 100%')
      expect(await card.getByTestId('download').textContent()).toMatch(/\.zip$/)
      const [input, output] = await trianglesOf(card)
      expect(Number(input!.replace(/,/g, ''))).toBeGreaterThan(0)
      expect(output).toBe(input)
      // Both sides read the textures the .mtl names: the input's through backslashed paths, the output's from the zip.
      // Counted once they had loaded: no 0×0 (an image not yet decoded) among them.
      for (const stats of await card.locator('.stats').all()) {
        expect(await stats.textContent()).toMatch(/Textures\d+×\d+/)
        expect(await stats.textContent()).not.toMatch(/(^|[^\d])0×0/)
      }
      // A spider is mostly thin legs: under 5% of the view, but drawn.
      await expectDrawn(card, 'output-view', 0.02)
    },
    SLOW * 2,
  )

  it(
    "keeps the Work page's cards across a visit to Admin: the finished ones with their 3D views, and one still running",
    async () => {
      const cards = page.getByTestId('task-card')
      const names = await cards.locator('h3').allTextContents()
      expect(names.length).toBeGreaterThan(1)
      await page.getByLabel('Operation').selectOption('compress')
      await page.getByLabel('engine').selectOption('draco')
      await page.locator('#files').setInputFiles(corpus.paths.box)
      const running = await start(page)
      await page.getByRole('link', { name: 'Admin' }).click()
      await page.getByRole('heading', { level: 1, name: 'Admin' }).waitFor()
      await page.getByRole('link', { name: 'Work' }).click()
      await page.getByRole('heading', { level: 1, name: 'Work' }).waitFor()
      expect(await cards.locator('h3').allTextContents()).toEqual(['BoxTextured.glb', ...names])
      // The task started before the visit went on being followed, and its views open (and draw) once shown again.
      await untilEnded(running)
      expect(await running.getByTestId('task-status').textContent()).toBe('Completed 100%')
      expect(await trianglesOf(running)).toEqual(['12', '12'])
      await expectDrawn(running, 'output-view')
      // A card finished before the visit kept its views (the zipped BoxTextured: a spider's legs would cover too little).
      const older = cards.filter({ has: page.getByRole('heading', { name: 'BoxTextured.gltf + 2 files' }) })
      await expectDrawn(older, 'input-view')
      // So did the first card of all, with more cards of two views each on the page than chromium keeps WebGL
      // contexts (16): the page draws every view with one, where the ninth card's views blacked out the first's.
      const first = cards.last()
      expect(await first.locator('h3').textContent()).toBe('BoxTextured.glb')
      await first.scrollIntoViewIfNeeded()
      await expectDrawn(first, 'input-view')
      await expectDrawn(first, 'output-view')
    },
    SLOW * 2,
  )

  it(
    'runs the deployment: tasks with their records, licence, limits, queue, live charts, the configuration masked',
    async () => {
      await page.getByRole('link', { name: 'Admin' }).click()
      expect(page.url()).toBe(`${mos!.url}/console/admin`)
      // The tab names the page shown, so the history and a screen reader tell the two apart; set by an
      // effect after the page renders, so read until it is (once, under CI's load, read before it).
      await expect.poll(() => page.title()).toBe('Admin · Mos console')
      const table = page.getByTestId('task-table')
      for (const id of taskIds) await table.getByRole('button', { name: id }).waitFor()
      // The list follows the event stream: a task submitted through the API meanwhile joins it at the top and
      // moves to its end, with no click on Filter.
      const form = new FormData()
      form.append('file', new Blob([await readFile(corpus.paths.box)]), 'from-the-api.glb')
      const answer = await fetch(`${mos!.url}/api/v1/repair`, { method: 'POST', headers: { 'X-API-Key': API_KEY }, body: form })
      expect(answer.ok).toBe(true)
      const { task_id: fromApi } = (await answer.json()) as { task_id: string }
      const row = table.locator('tbody tr').filter({ has: page.getByRole('button', { name: fromApi }) })
      await expect.poll(() => table.locator('tbody tr').first().textContent(), { timeout: SLOW }).toContain(fromApi)
      await expect.poll(() => row.locator('td').nth(1).textContent(), { timeout: SLOW }).toMatch(/^(Completed 100%|Failed: )/)
      expect(await row.textContent()).toContain('from-the-api.glb')
      await page.getByLabel('Type').selectOption('diagnose')
      await page.getByRole('button', { name: 'Filter' }).click()
      await expect.poll(() => table.locator('tbody tr').count()).toBe(1)
      await table.getByRole('button', { name: taskIds[1]! }).click()
      const record = page.getByTestId('task-record')
      await record.waitFor()
      expect(await record.textContent()).toContain('chr_knight.glb')
      expect(await record.textContent()).toContain('console:admin')

      await expect.poll(() => page.getByTestId('license').textContent()).toContain('professional')
      await expect.poll(() => page.getByTestId('limits').textContent()).toContain('max file size')
      await expect.poll(() => page.getByTestId('queue-pending').textContent()).toMatch(/^\d+$/)
      // Two polls make a line: the charts are drawn from /admin/metrics every few seconds.
      await expect.poll(() => page.getByTestId('chart').locator('polyline').count(), { timeout: 30_000 }).toBe(5)
      const config = page.getByTestId('config')
      await expect.poll(() => config.textContent()).toContain('••••')
      expect(await config.textContent()).not.toContain(API_KEY)
      expect(await config.textContent()).not.toContain(PASSWORD_HASH.split('$').at(-1))
    },
    SLOW,
  )

  it(
    'a completed task deleted in Admin: its Work card says the task is gone and offers neither the download nor the views',
    async () => {
      const cards = page.getByTestId('task-card')
      await page.getByRole('link', { name: 'Work' }).click()
      const stl = cards.filter({ has: page.getByRole('link', { name: 'Download BoxTextured.stl' }) })
      await expect.poll(() => stl.count()).toBe(1)
      const id = await taskIdOf(stl)
      const card = cards.filter({ hasText: id })
      expect(await card.getByTestId('output-view').count()).toBe(1)
      await page.getByRole('link', { name: 'Admin' }).click()
      await page.getByLabel('Type').selectOption('convert')
      await page.getByRole('button', { name: 'Filter' }).click()
      await page.getByTestId('task-table').getByRole('button', { name: id }).click()
      // Delete asks first; the answer focused keeps the task and the record open.
      const record = page.getByTestId('task-record')
      await record.getByRole('button', { name: 'Delete' }).click()
      const question = record.getByRole('group', { name: `Delete task ${id} for good? Its record and files cannot be brought back.` })
      await question.getByRole('button', { name: 'Keep it' }).click()
      expect(await question.count()).toBe(0)
      expect(await page.evaluate(async (taskId) => (await fetch(`/admin/tasks/${taskId}`)).status, id)).toBe(200)
      await record.getByRole('button', { name: 'Delete' }).click()
      await question.getByRole('button', { name: 'Delete for good' }).click()
      await page.getByText(`Task ${id}: deleted.`).waitFor()
      await page.getByRole('link', { name: 'Work' }).click()
      // The stream's task-removed reached the hidden Work page: where its link answered 404, the card says why there is none.
      await expect.poll(() => card.getAttribute('data-status')).toBe('removed')
      expect(await card.getByTestId('task-status').textContent()).toBe(
        'No longer on the service (deleted, or lost with its data); last known: completed 100%',
      )
      expect(await card.getByTestId('download').count()).toBe(0)
      expect(await card.getByTestId('output-view').count()).toBe(0)
      expect(await card.getByTestId('task-progress').count()).toBe(0)
      // What the record said stays: the sizes the task came to.
      expect(await card.getByTestId('sizes').textContent()).toMatch(/→/)
    },
    SLOW,
  )

  it('fits a phone-sized screen (375×667): no sideways scrolling, the controls reachable', async () => {
    await page.setViewportSize({ width: 375, height: 667 })
    for (const name of ['Admin', 'Work']) {
      await page.getByRole('link', { name }).click()
      await page.getByRole('heading', { level: 1, name }).waitFor()
      // Whatever sticks out past the right edge, named (tag.class), so a failure says what to fix.
      const sticking = await page.evaluate(() =>
        [...document.querySelectorAll('body *')]
          .filter((element) => element.getBoundingClientRect().right > 376 && !element.closest('.table-scroll'))
          .map((element) => `${element.tagName.toLowerCase()}.${element.className}`),
      )
      expect(sticking, name).toEqual([])
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
    }
    await page.getByLabel('Drop models or images here, or choose files').focus()
    await page.keyboard.press('Shift+Tab')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('operation')
    expect(await page.getByRole('button', { name: 'Start' }).isVisible()).toBe(true)
  })

  it('signs out: the session ends and the sign-in page returns; so it does when the session ends on its own', async () => {
    await expect.poll(() => streams.open()).toBe(1)
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByLabel('Administrator password').waitFor()
    // The page signed out holds no event stream open with the session it had.
    await expect.poll(() => streams.open()).toBe(0)
    await page.reload()
    await page.getByLabel('Administrator password').waitFor()

    // A session that ends under the page (expired, removed): the next request brings the sign-in page back, saying why.
    await page.getByLabel('Administrator password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByTestId('who').waitFor()
    await context.clearCookies()
    await page.getByRole('link', { name: 'Admin' }).click()
    await page.getByText('Your session has ended: sign in again.').waitFor()
    expect(await page.getByLabel('Administrator password').isVisible()).toBe(true)
    expect(pageProblems).toEqual([])
  })

  it('returns to the sign-in page by itself when the session was ended in another tab: the service ends its event stream', async () => {
    await page.getByLabel('Administrator password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('link', { name: 'Work' }).click()
    await expect.poll(() => streams.open()).toBe(1)
    const other = await context.newPage()
    try {
      await other.goto(`${mos!.url}/console/`)
      await other.getByTestId('who').waitFor()
      await other.getByRole('button', { name: 'Sign out' }).click()
      await other.getByLabel('Administrator password').waitFor()
    } finally {
      await other.close()
    }
    // No click here: the stream opened with the ended session is ended by the service (it went on carrying every
    // owner's tasks to a page signed out, and the page, with nothing else to read, never learnt it had been).
    await page.getByText('Your session has ended: sign in again.').waitFor({ timeout: 30_000 })
    expect(await page.getByLabel('Administrator password').isVisible()).toBe(true)
    await expect.poll(() => streams.open()).toBe(0)
    expect(pageProblems).toEqual([])
  })

  it('returns to the sign-in page at the next Start when the session cookie is gone (the upload’s 401)', async () => {
    await page.getByLabel('Administrator password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByTestId('who').waitFor()
    await page.getByRole('link', { name: 'Work' }).click()
    await context.clearCookies()
    await page.getByLabel('Operation').selectOption('repair')
    await page.locator('#files').setInputFiles(corpus.paths.box)
    await page.getByText('1 file: BoxTextured.glb').waitFor()
    await page.getByRole('button', { name: 'Start' }).click()
    await page.getByText('Your session has ended: sign in again.').waitFor()
    expect(await page.getByLabel('Administrator password').isVisible()).toBe(true)
    expect(pageProblems).toEqual([])
  })

  it(
    "in variant B, is served the same way and offers only B's operations",
    async () => {
      mosB = await startMos(
        'console-b',
        localServiceEnv({
          variant: 'B',
          dataDir: join(dir!, 'b'),
          apiKeys: API_KEY,
          extra: { SERVICE__CONSOLE__ADMIN_PASSWORD_HASH: PASSWORD_HASH },
        }),
      )
      await page.goto(`${mosB.url}/`)
      await page.getByLabel('Administrator password').fill(PASSWORD)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByTestId('who').waitFor()
      // The header names the variant once /config is read, after the session is known.
      await page.getByText('variant B').waitFor()
      expect(await page.getByText('variant B').count()).toBe(1)
      await expect
        .poll(() => page.getByLabel('Operation').locator('option').allTextContents())
        .toEqual(['compress', 'convert', 'repair', 'texture optimize'])
      expect(pageProblems).toEqual([])
    },
    SLOW,
  )
})
