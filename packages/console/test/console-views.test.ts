import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { Browser, Locator, Page, Route } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { localServiceEnv, throwAwayLicenceEnv } from '../../../test/support/service-env.ts'
import { startMos, stopMos, type MosProcess } from '../../server/test/support/processes.ts'
import { chromiumAvailable, consolePasswordHash, launchChromium, litShare } from './support/browser.ts'
import { expectDrawn, recordOf, SLOW, start, taskIdOf, trianglesOf, runTask, untilEnded } from './support/console-page.ts'

const corpus = corpusFiles({
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  cow: shared('obj', 'cow.obj'),
  ogre: shared('obj', 'ogre.obj'),
  cubes: shared('gltf', 'many-cubes.gltf'),
  cubesBin: shared('gltf', 'many-cubes.bin'),
  spider: assimp('OBJ', 'spider.obj'),
  spiderMtl: assimp('OBJ', 'spider.mtl'),
  spiderFbx: assimp('FBX', 'spider.fbx'),
})
/** The images spider.mtl names, beside it in the corpus. */
const SPIDER_TEXTURES = ['SpiderTex.jpg', 'drkwood2.jpg', 'engineflare1.jpg', 'wal67ar_small.jpg', 'wal69ar_small.jpg'].map((name) =>
  join(dirname(corpus.paths.spider), name),
)
const runnable = corpus.available && chromiumAvailable()
const PASSWORD = `pw-${randomBytes(12).toString('base64url')}`
const API_KEY = `console-views-${randomBytes(8).toString('hex')}`

/** A GLB with the bytes of its first Draco buffer scrambled after the 12 of its header (version, method, flags). */
function withCorruptDraco(glb: Buffer): Buffer {
  const jsonLength = glb.readUInt32LE(12)
  const json = JSON.parse(glb.subarray(20, 20 + jsonLength).toString('utf8')) as {
    meshes: { primitives: { extensions?: { KHR_draco_mesh_compression?: { bufferView: number } } }[] }[]
    bufferViews: { byteOffset?: number; byteLength: number }[]
  }
  const draco = json.meshes[0]!.primitives[0]!.extensions!.KHR_draco_mesh_compression!
  const view = json.bufferViews[draco.bufferView]!
  const start = 20 + jsonLength + 8 + (view.byteOffset ?? 0)
  const copy = Buffer.from(glb)
  for (let at = start + 12; at < start + view.byteLength; at++) copy[at] = (copy[at]! * 37 + 11) & 0xff
  return copy
}

/**
 * Compresses of ogre.obj through the API, one after the other (the queue takes them in that order): they fill both
 * engine threads for a few seconds, so tasks submitted after them wait in the queue. Answers their ids.
 */
async function submitOgres(url: string, count: number): Promise<string[]> {
  const ids: string[] = []
  for (let index = 0; index < count; index++) {
    const form = new FormData()
    form.append('file', new Blob([await readFile(corpus.paths.ogre)]), 'ogre.obj')
    form.append('engine', 'draco')
    form.append('simplify_ratio', '0.3')
    const answer = await fetch(`${url}/api/v1/compress`, { method: 'POST', headers: { 'X-API-Key': API_KEY }, body: form })
    ids.push(((await answer.json()) as { task_id: string }).task_id)
  }
  return ids
}

/** The lines of a card's "What it did". */
const stepLinesOf = (card: Locator) => card.getByRole('list', { name: 'What it did' }).locator('li').allTextContents()

/**
 * What the work page's cards and views show of a task, in chromium against the real compiled
 * service (set up as console.test.ts does, in a file of its own so it runs alone): how a task that
 * ended badly looks, what the views draw and count, what a card reports.
 */
describe.skipIf(!runnable)('the work page’s cards and views in chromium', () => {
  let mos: MosProcess | undefined
  let dir: string | undefined
  let browser: Browser | undefined
  let page: Page
  const pageProblems: string[] = []
  /** A task cancelled through the API, which the Admin tests open (owned by the API key). */
  let cancelledId = ''

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mos-console-views-'))
    mos = await startMos(
      'console-views',
      localServiceEnv({
        variant: 'A',
        dataDir: dir,
        apiKeys: API_KEY,
        extra: { SERVICE__CONSOLE__ADMIN_PASSWORD_HASH: consolePasswordHash(PASSWORD), ...throwAwayLicenceEnv('lic_views') },
      }),
    )
    browser = await launchChromium()
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage()
    page.on('console', (message) => {
      // The refused upload's 400 is logged by the browser itself; anything else is a problem.
      if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) pageProblems.push(message.text())
    })
    page.on('pageerror', (error) => pageProblems.push(error.message))
    await page.goto(`${mos.url}/`)
    await page.getByLabel('Administrator password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByTestId('who').waitFor()
  }, SLOW)

  afterAll(async () => {
    await browser?.close()
    await stopMos(mos)
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it(
    'shows a failed task, and a refused upload, as ended: no moving bar, no full bar, the reason in words',
    async () => {
      await page.getByLabel('Operation').selectOption('compress')
      await page.getByLabel('engine').selectOption('meshopt')
      // Each checkbox shares its line with its label, the longest name (texture_progressive_jpeg) too, which had a line of its own.
      const apart = await page.locator('form[aria-label="New task"] .field-boolean').evaluateAll((fields) =>
        fields.flatMap((field) => {
          const box = field.querySelector('input')!.getBoundingClientRect()
          const label = field.querySelector('label')!
          const middle = box.top + box.height / 2
          const { top, bottom } = label.getBoundingClientRect()
          return middle >= top && middle <= bottom ? [] : [label.textContent]
        }),
      )
      expect(apart).toEqual([])
      await page
        .locator('#files')
        .setInputFiles({ name: 'broken.glb', mimeType: 'model/gltf-binary', buffer: Buffer.from('not a model at all') })
      const failed = await start(page)
      await untilEnded(failed)
      expect(await failed.getAttribute('data-status')).toBe('failed')
      expect(await failed.getByTestId('task-status').textContent()).toMatch(/^Failed: \S/)
      expect(await failed.getByTestId('task-progress').count()).toBe(0)
      expect(await failed.locator('.spinner').count()).toBe(0)

      // The page says a .txt is no model but lets Start send it: the service refuses the upload (400, unsupported format).
      await page.locator('#files').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') })
      const refused = await start(page)
      await expect.poll(() => refused.getByTestId('task-status').textContent()).toMatch(/^Upload refused: unsupported format/)
      expect(await refused.getByTestId('task-progress').count()).toBe(0)
      expect(await refused.locator('.spinner').count()).toBe(0)

      // An empty file: the service's refusal names the form's field ("missing required field: file"), as if none was
      // chosen; the page says what is wrong with the file itself as soon as it is chosen.
      await page.locator('#files').setInputFiles({ name: 'empty.glb', mimeType: 'model/gltf-binary', buffer: Buffer.alloc(0) })
      await expect
        .poll(() => page.locator('form[aria-label="New task"]').getByRole('alert').textContent())
        .toBe('empty.glb: the file is empty (0 bytes), which the service refuses')
      const empty = await start(page)
      await expect.poll(() => empty.getByTestId('task-status').textContent()).toBe('Upload refused: missing required field: file')

      // A batch holding it is refused whole: the sound model's card says why it was refused with it, not only the other file's fault.
      await page.locator('#files').setInputFiles([
        { name: 'BoxTextured.glb', mimeType: 'model/gltf-binary', buffer: await readFile(corpus.paths.box) },
        { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') },
      ])
      await page.getByLabel(/Send as one batch/).check()
      // The engine chosen above for single files stays chosen in the batch's form, where it came up empty ("Choose…").
      expect(await page.getByLabel('engine').inputValue()).toBe('meshopt')
      await start(page, 2)
      const [txt, box] = [page.getByTestId('task-card').nth(1), page.getByTestId('task-card').first()]
      for (const card of [box, txt])
        await expect
          .poll(() => card.getByTestId('task-status').textContent())
          .toBe('Upload refused: unsupported format: txt (the whole batch of 2 files was refused)')
      expect(await box.locator('h3').textContent()).toBe('BoxTextured.glb')
      // A card with no task on the service is taken off the page by Dismiss, which is all it offers.
      expect(await txt.getByRole('button').allTextContents()).toEqual(['Dismiss'])
      const notes = page.getByTestId('task-card').filter({ hasText: 'notes.txt' })
      const [cards, notesCards] = [await page.getByTestId('task-card').count(), await notes.count()]
      await txt.getByRole('button', { name: 'Dismiss' }).click()
      await expect.poll(() => page.getByTestId('task-card').count()).toBe(cards - 1)
      expect(await notes.count()).toBe(notesCards - 1)
    },
    SLOW,
  )

  it(
    "cancels an upload, and a task from its card (it reads 'Cancelled', not a red failure), says why a cancel came too late, says a result gone on Download (card and Admin), and deletes a card's task",
    async () => {
      // Compresses of ogre.obj through the API fill both engine threads, so the cards' tasks wait in the queue behind them.
      // An upload stopped on its way (a network slowed to 200 KB/s, the real service at the other end): the card says
      // no task was made, and none was.
      await page.getByLabel('Operation').selectOption('compress')
      await page.getByLabel('engine').selectOption('meshopt')
      const network = await page.context().newCDPSession(page)
      await network.send('Network.enable')
      await network.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 0,
        downloadThroughput: -1,
        uploadThroughput: 200_000,
      })
      try {
        await page.locator('#files').setInputFiles(corpus.paths.ogre)
        const stopped = await start(page)
        await expect.poll(() => stopped.getByTestId('task-status').textContent()).toMatch(/^Uploading [1-9]\d?%$/)
        await stopped.getByRole('button', { name: 'Cancel upload' }).click()
        await expect.poll(() => stopped.getByTestId('task-status').textContent()).toBe('Upload cancelled: no task was made')
        expect(await stopped.getAttribute('class')).toContain('task-cancelled')
        expect(await stopped.getByRole('button').allTextContents()).toEqual(['Dismiss'])
      } finally {
        await network.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 })
        await network.detach()
      }
      const consoleOgres = await page.evaluate(async () => {
        const { tasks } = (await (await fetch('/admin/tasks?limit=100')).json()) as { tasks: { owner: string; input_filename: string }[] }
        return tasks.filter((task) => task.owner === 'console:admin' && task.input_filename === 'ogre.obj').length
      })
      expect(consoleOgres).toBe(0)

      // An upload stopped once the whole file had gone (the answer held back by 3 s of latency): the service made the task,
      // and the card says it may have, where it said "no task was made" of a task the service had.
      const consoleBoxes = () =>
        page.evaluate(async () => {
          const { tasks } = (await (await fetch('/admin/tasks?limit=100')).json()) as { tasks: { owner: string; input_filename: string }[] }
          return tasks.filter((task) => task.owner === 'console:admin' && task.input_filename === 'BoxTextured.glb').length
        })
      const boxesBefore = await consoleBoxes()
      const slow = await page.context().newCDPSession(page)
      await slow.send('Network.enable')
      await slow.send('Network.emulateNetworkConditions', { offline: false, latency: 3000, downloadThroughput: -1, uploadThroughput: -1 })
      try {
        await page.locator('#files').setInputFiles(corpus.paths.box)
        const sent = await start(page)
        await expect.poll(() => sent.getByTestId('task-status').textContent()).toBe('Uploading 100%')
        await sent.getByRole('button', { name: 'Cancel upload' }).click()
        await expect
          .poll(() => sent.getByTestId('task-status').textContent())
          .toBe("Upload stopped after the file was sent: the service may have made the task anyway (if so, it is in Admin's task list)")
        expect(await sent.getByRole('button').allTextContents()).toEqual(['Dismiss'])
      } finally {
        await slow.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 })
        await slow.detach()
      }
      await expect.poll(consoleBoxes).toBe(boxesBefore + 1)

      expect(await submitOgres(mos!.url, 8)).toHaveLength(8)
      await page.getByLabel('Operation').selectOption('compress')
      await page.getByLabel('engine').selectOption('meshopt')
      await page.locator('#files').setInputFiles([corpus.paths.box, corpus.paths.cow])
      await page.getByLabel(/Send as one batch/).uncheck()
      await start(page, 2)
      const [late, cancelled] = [page.getByTestId('task-card').nth(0), page.getByTestId('task-card').nth(1)]
      // Cancel is there once the service has answered the upload with the task's id.
      await late.getByRole('button', { name: 'Cancel', exact: true }).waitFor()
      const lateId = await taskIdOf(late)
      // The late card's cancel is held on its way until its task has completed: the service then has nothing to cancel.
      let held: Route | undefined
      await page.route('**/admin/tasks/*/cancel', (route) => {
        if (route.request().url().includes(lateId)) held = route
        else void route.continue()
      })
      try {
        await cancelled.getByRole('button', { name: 'Cancel', exact: true }).click()
        await expect.poll(() => cancelled.getByTestId('task-status').textContent(), { timeout: SLOW }).toBe('Cancelled')
        expect(await cancelled.getAttribute('class')).toContain('task-cancelled')
        expect(await cancelled.getAttribute('class')).not.toContain('task-failed')
        expect(await cancelled.getByTestId('task-status').getAttribute('class')).not.toContain('error')
        expect(await cancelled.getByRole('button').allTextContents()).toEqual(['Delete'])

        await late.getByRole('button', { name: 'Cancel', exact: true }).click()
        await expect.poll(() => held !== undefined).toBe(true)
        expect(await late.getByRole('button', { name: 'Cancelling…' }).isDisabled()).toBe(true)
        await untilEnded(late)
        await held!.continue()
      } finally {
        await page.unroute('**/admin/tasks/*/cancel')
      }
      await expect
        .poll(() => late.getByTestId('control-problem').textContent())
        .toBe(`Could not cancel the task: task ${lateId} is completed: nothing to cancel`)
      expect(await late.getByTestId('task-status').textContent()).toBe('Completed 100%')

      // Its result swept from the store (as the retention sweep or a lost disk would): Download says so on the card,
      // where the link opened the service's 404 JSON.
      const output = join(dir!, 'files', 'tasks', lateId, 'output')
      await rm(output)
      await late.getByTestId('download').click()
      await expect
        .poll(() => late.getByTestId('download-problem').textContent())
        .toBe(`Could not download: result of task ${lateId} is no longer available`)
      // And in Admin's record of it.
      await page.getByRole('link', { name: 'Admin' }).click()
      await page.getByTestId('task-table').getByRole('button', { name: lateId }).click()
      const record = page.getByTestId('task-record')
      await record.getByTestId('record-download').click()
      await expect
        .poll(() => record.getByTestId('download-problem').textContent())
        .toBe(`Could not download: result of task ${lateId} is no longer available`)
      // Cancel in Admin: a task queued behind compresses of ogre.obj, whose record stays open and reads Cancelled.
      const queued = await submitOgres(mos!.url, 6)
      const last = queued.at(-1)!
      await page.getByTestId('task-table').getByRole('button', { name: last }).click()
      await expect.poll(() => record.getByTestId('record-state').textContent()).toMatch(/^(Waiting in the queue|Processing \d+%)$/)
      await record.getByRole('button', { name: 'Cancel', exact: true }).click()
      await expect.poll(() => record.getByTestId('record-state').textContent()).toBe('Cancelled')
      expect(await record.locator('h3').textContent()).toBe(`Task ${last}`)
      expect(await record.getByRole('button', { name: 'Cancel', exact: true }).count()).toBe(0)
      await page.getByRole('link', { name: 'Work' }).click()

      // Delete asks first, in the page, keeping the task by default: the focused answer keeps it (Enter), as Escape does.
      const cards = await page.getByTestId('task-card').count()
      const question = late.getByRole('group', { name: `Delete task ${lateId} for good? Its record and files cannot be brought back.` })
      await late.getByRole('button', { name: 'Delete' }).click()
      await question.waitFor()
      const keepFocused = () => question.getByRole('button', { name: 'Keep it' }).evaluate((button) => button === document.activeElement)
      expect(await keepFocused()).toBe(true)
      await page.keyboard.press('Enter')
      await late.getByRole('button', { name: 'Delete' }).click()
      await question.waitFor()
      // Escape is the question's key: pressed once its effect has focused "Keep it" (a frame after it shows), as a user's is.
      await expect.poll(() => keepFocused()).toBe(true)
      await page.keyboard.press('Escape')
      await late.getByRole('button', { name: 'Delete' }).waitFor()
      expect(await question.count()).toBe(0)
      expect(await page.getByTestId('task-card').count()).toBe(cards)
      expect(await page.evaluate(async (id) => (await fetch(`/admin/tasks/${id}`)).status, lateId)).toBe(200)
      // Confirmed: the task goes from the service, and its card from the page.
      await late.getByRole('button', { name: 'Delete' }).click()
      await question.getByRole('button', { name: 'Delete for good' }).click()
      await expect.poll(() => page.getByTestId('task-card').count()).toBe(cards - 1)
      expect(await page.evaluate(async (id) => (await fetch(`/admin/tasks/${id}`)).status, lateId)).toBe(404)
    },
    SLOW,
  )

  it(
    "shows every report the service gives: repair's counts, a texture kept as it was and why",
    async () => {
      const repaired = await runTask(page, 'repair', corpus.paths.cow)
      expect(await repaired.getByTestId('task-status').textContent()).toBe('Completed 100%')
      const repairs = (await recordOf(page, repaired)).repairs!
      const done = Object.entries(repairs).filter(([, value]) => value > 0)
      expect(done.length).toBeGreaterThan(0)
      const line = (await stepLinesOf(repaired)).find((text) => text.startsWith('Repaired: '))
      expect(line).toBe(
        `Repaired: ${done.map(([kind, value]) => `${value.toLocaleString('en-US')} ${kind.replaceAll('_', ' ')}`).join(', ')}`,
      )

      // BoxTextured's small PNG is no smaller as WebP: the texture is kept, and the card says so, in the service's words.
      const optimized = await runTask(page, 'texture_optimize', corpus.paths.box, { format: 'webp' })
      const textures = (await recordOf(page, optimized)).textures!
      expect(textures[0]!.note).toMatch(/^original kept: /)
      const lines = await stepLinesOf(optimized)
      expect(lines.some((text) => text.includes(`(${textures[0]!.note})`))).toBe(true)
    },
    SLOW * 2,
  )

  it(
    "says why a key is not valid, and a listed task that was cancelled as 'Cancelled'",
    async () => {
      await page.getByRole('link', { name: 'Admin' }).click()
      await page.getByLabel('Licence key to verify').fill('not-a-key')
      await page.getByRole('button', { name: 'Verify' }).click()
      await expect.poll(() => page.getByTestId('license-outcome').textContent()).toBe('The key is not valid: not a Mos licence key.')

      // A task submitted through the API and cancelled at once: its row says why it failed. The cancel
      // races the engine; where the engine wins (409, nothing to cancel), another task is tried.
      const cancelled = async (): Promise<string> => {
        const form = new FormData()
        form.append('file', new Blob([await readFile(corpus.paths.box)]), 'to-cancel.glb')
        form.append('engine', 'draco')
        const submitted = await fetch(`${mos!.url}/api/v1/compress`, { method: 'POST', headers: { 'X-API-Key': API_KEY }, body: form })
        const { task_id: id } = (await submitted.json()) as { task_id: string }
        const cancel = await fetch(`${mos!.url}/api/v1/tasks/${id}/cancel`, { method: 'POST', headers: { 'X-API-Key': API_KEY } })
        return cancel.status === 200 ? id : cancelled()
      }
      const id = await cancelled()
      const row = page
        .getByTestId('task-table')
        .locator('tbody tr')
        .filter({ has: page.getByRole('button', { name: id }) })
      // Said as the Work page's cards say it, not as a failure ("failed: cancelled").
      await expect.poll(() => row.locator('td').nth(1).textContent(), { timeout: SLOW }).toBe('Cancelled')
      // Its owner is the key that submitted it, by the start of the digest the record holds (the whole one in the title).
      const digest = createHash('sha256').update(API_KEY).digest('hex').slice(0, 32)
      expect(await row.locator('td').nth(3).textContent()).toBe(`API key ${digest.slice(0, 8)}…`)
      expect(await row.locator('td').nth(3).getAttribute('title')).toContain(digest)
      const consoleRow = page.getByTestId('task-table').locator('tbody tr').filter({ hasText: 'broken.glb' }).first()
      expect(await consoleRow.locator('td').nth(3).textContent()).toBe('this console')
      cancelledId = id
    },
    SLOW,
  )

  it(
    "shows Admin's documents in words: a limit without one as 'no limit', sizes and times with units, an open record gone when its task is, no match said",
    async () => {
      // What a key says, beside its name (a definition list's dt + dd).
      const valuesOf = (within: Locator, name: string) => within.locator(`dt:text-is("${name}") + dd`)
      const license = page.getByTestId('license')
      const limits = page.getByTestId('limits')
      // The professional tier sets no batch count: the tier table's -1 and the limits in force's null, which read `-1` and `—`.
      await expect.poll(() => valuesOf(license, 'max batch count').textContent()).toBe('no limit')
      expect(await valuesOf(limits, 'max batch count').allTextContents()).toEqual(['no limit', 'no limit'])
      expect(await valuesOf(limits, 'max texture size').allTextContents()).toContain('no limit')
      expect(await valuesOf(license, 'max file size').textContent()).toMatch(/^[\d,]+ MB$/)
      // A setting keeps its name (the key an operator sets), where its underscores read as spaces.
      expect(await page.getByTestId('limits').textContent()).toContain('SERVICE__LIMITS__MAX_FILE_SIZE_MB')
      // The licence's expiry in local time, as the task list's times, its instant kept in `datetime`.
      const expiry = valuesOf(license, 'expires at').locator('time')
      expect(Date.parse((await expiry.getAttribute('datetime')) ?? '')).toBeGreaterThan(Date.now())
      expect(await expiry.textContent()).toBe(
        await page.evaluate((iso) => new Date(iso).toLocaleString(), (await expiry.getAttribute('datetime'))!),
      )
      // No value on the page is a raw sentinel or a missing one's JavaScript word.
      const values = await page.locator('main dd, main td').allTextContents()
      expect(values.filter((text) => /^(-1|undefined|null|NaN)$|\b(undefined|NaN)\b/.test(text.trim()))).toEqual([])

      // A task id wrapped in its column (as on a laptop's width, made here by narrowing the button for the measure) starts
      // each line at the column's edge, where the button centred them.
      const lineStarts = await page
        .getByTestId('task-table')
        .getByRole('button', { name: cancelledId })
        .evaluate((button) => {
          button.style.width = '14ch'
          const range = document.createRange()
          range.selectNodeContents(button)
          const starts = [...range.getClientRects()].map((line) => Math.round(line.left))
          button.style.width = ''
          return starts
        })
      expect(lineStarts.length).toBeGreaterThan(1)
      expect(new Set(lineStarts).size).toBe(1)
      // The cancelled task's record: its upload's size in bytes for people, its times local.
      await page.getByTestId('task-table').getByRole('button', { name: cancelledId }).click()
      const record = page.getByTestId('task-record')
      // Headed by its state in words, above the document's `status: failed` and `error: cancelled`.
      expect(await record.getByTestId('record-state').textContent()).toBe('Cancelled')
      const size = await stat(corpus.paths.box)
      expect(await valuesOf(record, 'input size').textContent()).toBe(`${(size.size / 1024).toFixed(1)} KB`)
      expect(await record.locator('time').count()).toBeGreaterThan(1)
      expect(await record.textContent()).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:/)
      // Deleted elsewhere (through the API) while open: the record says so and offers no download, cancel or delete.
      const gone = await fetch(`${mos!.url}/api/v1/tasks/${cancelledId}`, { method: 'DELETE', headers: { 'X-API-Key': API_KEY } })
      expect(gone.status).toBeLessThan(300)
      await record.getByTestId('record-removed').waitFor()
      expect(await record.getByRole('button', { name: 'Delete' }).count()).toBe(0)

      // Filters no task matches: the list says so, where it showed a table of column headers and no row. A read of the
      // unfiltered list still on its way (held here until the filtered one has landed) does not put its rows back when it
      // answers last, where it replaced the filtered list with every task.
      let hold: (route: Route) => void = () => {}
      const unfiltered = new Promise<Route>((resolve) => {
        hold = resolve
      })
      await page.route((url) => url.pathname === '/admin/tasks' && !url.searchParams.has('status'), hold, { times: 1 })
      await page.getByRole('button', { name: 'Filter' }).click()
      const held = await unfiltered
      await page.getByLabel('Status').selectOption('pending')
      await page.getByLabel('Type').selectOption('texture_ktx2')
      // The task filter's batch field and the Batches section's are told apart by name, where both were "Batch id".
      expect(await page.getByRole('textbox', { name: 'In batch', exact: true }).getAttribute('id')).toBe('filter-batch')
      expect(await page.getByRole('textbox', { name: 'Batch id to show', exact: true }).getAttribute('id')).toBe('batch-id')
      await page.getByRole('button', { name: 'Filter' }).click()
      await expect.poll(() => page.getByTestId('no-tasks').textContent()).toBe('No task matches these filters.')
      const heldAnswered = page.waitForEvent('requestfinished', (finished) => finished === held.request())
      await held.continue()
      await heldAnswered
      // Its body read and any render it caused done (two frames after the request finished).
      await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))))
      expect(await page.getByTestId('task-table').count()).toBe(0)
      expect(await page.getByTestId('no-tasks').textContent()).toBe('No task matches these filters.')
      await page.getByRole('link', { name: 'Work' }).click()
    },
    SLOW,
  )

  it.each(['obj', 'fbx', 'dae', 'ply'])(
    'converts BoxTextured to %s: the output view counts its texture once it has arrived and draws the cube with it, not black',
    async (target) => {
      const card = await runTask(page, 'convert', corpus.paths.box, { target_format: target })
      expect(await card.getByTestId('task-status').textContent()).toBe('Completed 100%')
      expect(await trianglesOf(card)).toEqual(['12', '12'])
      // Counted when the texture had loaded: CesiumLogoFlat.png's size, where 0×0 was counted before.
      expect(await card.locator('.stats').nth(1).textContent()).toContain('Textures211×211')
      await expectDrawn(card, 'output-view')
      // The logo's white drawn with no drag: the view redrew when the texture arrived (a black cube before).
      await expect.poll(() => litShare(card.getByTestId('output-view')), { timeout: 30_000 }).toBeGreaterThan(0.03)
    },
    SLOW,
  )

  it(
    'names the images a lone FBX asks for that were not dropped with it, and counts them apart from the textures drawn',
    async () => {
      const before = pageProblems.length
      const card = await runTask(page, 'convert', corpus.paths.spiderFbx, { target_format: 'glb' })
      expect(await trianglesOf(card)).toEqual(['1,368', '1,368'])
      const input = card.getByTestId('input-view').locator('xpath=..')
      // The FBX names its images beside it; opened from the dropped file alone, three asks for blob:<origin>/SpiderTex.jpg…
      const missing = await input.locator('p.error').textContent()
      expect(missing).toMatch(/^4 files the model names could not be loaded: /)
      for (const name of ['SpiderTex.jpg', 'drkwood2.jpg', 'engineflare1.jpg', 'wal67ar_small.jpg']) expect(missing).toContain(name)
      // …and those four are no textures of 0×0 pixels.
      expect(await input.getByTestId('textures').textContent()).toBe('4 not loaded')
      // The browser logged the four files it could not find; the page said it in words.
      pageProblems.splice(before)
    },
    SLOW,
  )

  it(
    'converts the spider with its five images to PLY: the output view maps each face to the image its texnumber names',
    async () => {
      const card = await runTask(page, 'convert', [corpus.paths.spider, corpus.paths.spiderMtl, ...SPIDER_TEXTURES], {
        target_format: 'ply',
      })
      expect(await card.getByTestId('task-status').textContent()).toBe('Completed 100%')
      expect(await card.getByTestId('download').textContent()).toMatch(/\.zip$/)
      const [input, output] = await trianglesOf(card)
      expect(output).toBe(input)
      // The images the PLY's TextureFile comments name, found in the zip and mapped: the input's textures, each one
      // (the PLY's faces choose among them by texnumber; a mesh of one material would show one, or none before).
      const texturesOf = async (side: number) =>
        (/Textures(.*)$/.exec((await card.locator('.stats').nth(side).textContent()) ?? '')?.[1] ?? '').split(', ').sort()
      const inputTextures = await texturesOf(0)
      expect(inputTextures.length).toBeGreaterThan(1)
      expect(await texturesOf(1)).toEqual(inputTextures)
      await expectDrawn(card, 'output-view', 0.02)
    },
    SLOW,
  )

  it(
    'opens a KTX2 result: the transcoder worker runs under its own policy, the page under its strict one',
    async () => {
      const card = await runTask(page, 'texture_ktx2', corpus.paths.box)
      expect(await card.getByTestId('task-status').textContent()).toBe('Completed 100%')
      expect(await trianglesOf(card)).toEqual(['12', '12'])
      // The texture, transcoded from Basis in the worker, is the logo's 211×211 rounded up to a multiple of 4 (texture_ktx2's blocks).
      expect(await card.locator('.stats').nth(1).textContent()).toContain('Textures212×212')
      await expect.poll(() => litShare(card.getByTestId('output-view')), { timeout: 30_000 }).toBeGreaterThan(0.03)
    },
    SLOW,
  )

  it(
    'says why a KTX2 result cannot be shown when its transcoder fails, never "Loading…" for ever',
    async () => {
      const worker = '**/console/basis-transcoder-worker.js'
      // The worker under the page's own policy (no eval), as three's blob worker ran: the transcoder cannot start.
      await page.route(worker, async (route) => {
        const response = await route.fetch()
        const headers = { ...response.headers(), 'content-security-policy': "script-src 'self' 'wasm-unsafe-eval'" }
        await route.fulfill({ response, headers })
      })
      const before = pageProblems.length
      try {
        const refused = await runTask(page, 'texture_ktx2', corpus.paths.box)
        await expect
          .poll(() => refused.getByTestId('output-view').locator('xpath=..').locator('p.error').textContent(), { timeout: 60_000 })
          .toMatch(/^This model cannot be shown: a KTX2 texture could not be transcoded: the KTX2 transcoder failed to start: \S/)
        await page.unroute(worker)
        // The worker's file missing altogether: the worker never starts, and the view says so too.
        await page.route(worker, (route) => route.fulfill({ status: 404, body: '' }))
        await page.locator('#files').setInputFiles(corpus.paths.box)
        const missing = await start(page)
        await untilEnded(missing)
        await expect
          .poll(() => missing.getByTestId('output-view').locator('xpath=..').locator('p.error').textContent(), { timeout: 60_000 })
          .toMatch(/^This model cannot be shown: a KTX2 texture could not be transcoded: the KTX2 transcoder worker did not start/)
      } finally {
        await page.unroute(worker)
      }
      // What the browser logged of the faults made here (the refused eval, GLTFLoader's "Couldn't load texture") is
      // expected; the page said it in words.
      pageProblems.splice(before)
    },
    SLOW,
  )

  it(
    'says why a Draco result cannot be shown when its buffer is corrupt, never "Loading…" for ever',
    async () => {
      const sound = await runTask(page, 'compress', corpus.paths.box, { engine: 'draco' })
      // The service's own Draco result, its compressed geometry scrambled past the Draco header: the decoder reads a
      // header it knows and then bytes that make no mesh.
      const glb = Buffer.from(
        await page.evaluate(
          async (taskId) => [...new Uint8Array(await (await fetch(`/admin/tasks/${taskId}/download`)).arrayBuffer())],
          await taskIdOf(sound),
        ),
      )
      const corrupt = withCorruptDraco(glb)
      const before = pageProblems.length
      const downloads = '**/admin/tasks/*/download'
      await page.route(downloads, (route) => route.fulfill({ status: 200, contentType: 'model/gltf-binary', body: corrupt }))
      try {
        await page.locator('#files').setInputFiles(corpus.paths.box)
        const card = await start(page)
        await untilEnded(card)
        await expect
          .poll(() => card.getByTestId('output-view').locator('xpath=..').locator('p.error').textContent(), { timeout: 60_000 })
          .toMatch(/^This model cannot be shown: its Draco geometry could not be decoded: \S/)
        // The input, the same box uncompressed, is drawn as ever.
        await expectDrawn(card, 'input-view')
      } finally {
        await page.unroute(downloads)
      }
      // The decoder's worker that met it is still the page's: the next Draco result decodes and draws.
      const next = await runTask(page, 'compress', corpus.paths.box, { engine: 'draco' })
      expect(await trianglesOf(next)).toEqual(['12', '12'])
      await expectDrawn(next, 'output-view')
      // What the decoder's worker logged of the fault made here is expected; the page said it in words.
      pageProblems.splice(before)
    },
    SLOW,
  )

  it(
    'loads the Draco decoder again after it failed: a file of it refused while the service restarted, a wasm cut short that kills its worker',
    async () => {
      const before = pageProblems.length
      // The decoder is loaded once per page (every view shares it): each case starts from a page that has not loaded it.
      const failingOnce = async (asset: string, answer: (route: Route) => Promise<void>, said: RegExp) => {
        await page.reload()
        await page.getByTestId('who').waitFor()
        let failed = false
        await page.route(asset, (route) => {
          if (failed) return route.continue()
          failed = true
          return answer(route)
        })
        try {
          const card = await runTask(page, 'compress', corpus.paths.box, { engine: 'draco' })
          await expect
            .poll(() => card.getByTestId('output-view').locator('xpath=..').locator('p.error').textContent(), { timeout: 60_000 })
            .toMatch(said)
          expect(failed).toBe(true)
          // The next model loads the decoder again, where three kept the failed attempt: it failed, or hung, every Draco view after.
          const next = await runTask(page, 'compress', corpus.paths.box, { engine: 'draco' })
          expect(await trianglesOf(next)).toEqual(['12', '12'])
          await expectDrawn(next, 'output-view')
        } finally {
          await page.unroute(asset)
        }
      }
      await failingOnce(
        '**/console/assets/draco_wasm_wrapper-*.js',
        (route) => route.fulfill({ status: 503, body: 'restarting' }),
        /^This model cannot be shown: the Draco decoder could not be loaded: the service answered 503 Service Unavailable$/,
      )
      // A wasm cut short: the worker's module fails to start, which three's worker leaves unhandled (the view loaded for ever).
      await failingOnce(
        '**/console/assets/draco_decoder-*.wasm',
        async (route) => {
          const response = await route.fetch()
          await route.fulfill({ response, body: (await response.body()).subarray(0, 1000) })
        },
        /^This model cannot be shown: the Draco decoder's worker failed: Aborted\(CompileError: WebAssembly\.instantiate\(\): \S/,
      )
      // What the browser and the worker logged of the faults made here (the 503, emscripten's abort) is expected.
      pageProblems.splice(before)
    },
    SLOW * 2,
  )

  it(
    'names a model dropped with its files after the model, and measures the saving against the files dropped, the record’s beside it',
    async () => {
      const card = await runTask(page, 'compress', [corpus.paths.cubes, corpus.paths.cubesBin], { engine: 'meshopt' })
      expect(await card.getByTestId('task-status').textContent()).toBe('Completed 100%')
      expect(await card.locator('h3').textContent()).toBe('many-cubes.gltf + 1 file')
      const record = await recordOf(page, card)
      const dropped = (await stat(corpus.paths.cubes)).size + (await stat(corpus.paths.cubesBin)).size
      const saving = (1 - record.output.size_bytes / dropped) * 100
      // The files dropped shrank by far more than the zip the page sent for them, which the record measures.
      expect(saving).toBeGreaterThan(record.output.savings_percent! + 50)
      const sizes = await card.getByTestId('sizes').textContent()
      expect(sizes).toContain(
        `(saving ${saving.toFixed(1)}% against the 2 files dropped; the task's record measures the zip sent, many-cubes.zip: `,
      )
      expect(sizes).toContain(`saving ${record.output.savings_percent!.toFixed(1)}%)`)
      expect(await card.getByTestId('saving').textContent()).toBe(`${saving.toFixed(1)}%`)
    },
    SLOW,
  )

  it('met no error or CSP refusal in the page meanwhile', () => {
    expect(pageProblems).toEqual([])
  })
})
