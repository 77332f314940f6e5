import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { localServiceEnv, throwAwayLicenceEnv } from '../../../test/support/service-env.ts'
import { startMos, stopMos, type MosProcess } from '../../server/test/support/processes.ts'
import { chromiumAvailable, consolePasswordHash, launchChromium } from './support/browser.ts'
import { SLOW, start, untilEnded } from './support/console-page.ts'

const corpus = corpusFiles({
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
})
const runnable = corpus.available && chromiumAvailable()
const PASSWORD = `pw-${randomBytes(12).toString('base64url')}`

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

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mos-console-views-'))
    mos = await startMos(
      'console-views',
      localServiceEnv({
        variant: 'A',
        dataDir: dir,
        apiKeys: `console-views-${randomBytes(8).toString('hex')}`,
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
    },
    SLOW,
  )

  it('met no error or CSP refusal in the page meanwhile', () => {
    expect(pageProblems).toEqual([])
  })
})
