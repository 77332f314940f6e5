import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { corpusFiles, shared } from '../../../test/support/corpus.ts'
import { localServiceEnv } from '../../../test/support/service-env.ts'
import { startMos, stopMos, type MosProcess } from '../../server/test/support/processes.ts'
import { chromiumAvailable, consolePasswordHash, launchChromium } from './support/browser.ts'
import { start, taskIdOf, untilEnded } from './support/console-page.ts'

/** A model big enough that its compress is still running when the service is killed a moment after the card appears. */
const corpus = corpusFiles({ ogre: shared('obj', 'ogre.obj') })
const runnable = corpus.available && chromiumAvailable()
const PASSWORD = `pw-${randomBytes(12).toString('base64url')}`
const SLOW = 120_000

/**
 * The Work page while the service is away: the real compiled service is killed (SIGKILL, as a crash or an
 * OOM kill would end it) under a running task, then started again on the same port and data folder. Its
 * own file, since no other step could run against a service that is not there.
 */
describe.skipIf(!runnable)('the console while the service cannot be reached', () => {
  let dir: string | undefined
  let mos: MosProcess | undefined
  let browser: Browser | undefined
  let page: Page
  let env: Record<string, string>

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mos-console-down-'))
    env = localServiceEnv({
      variant: 'A',
      dataDir: dir,
      apiKeys: `console-down-${randomBytes(8).toString('hex')}`,
      extra: { SERVICE__CONSOLE__ADMIN_PASSWORD_HASH: consolePasswordHash(PASSWORD) },
    })
    mos = await startMos('console-down', env)
    browser = await launchChromium()
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage()
  }, SLOW)

  afterAll(async () => {
    await browser?.close()
    await stopMos(mos)
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it(
    'says so on the Work page, stops the cards pretending to move, and resumes by itself once the service is back',
    async () => {
      await page.goto(`${mos!.url}/console/`)
      await page.getByLabel('Administrator password').fill(PASSWORD)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByLabel('Operation').selectOption('compress')
      await page.getByLabel('engine').selectOption('meshopt')
      await page.locator('#files').setInputFiles(corpus.paths.ogre)
      const card = await start(page)
      await expect.poll(() => card.getAttribute('data-status'), { timeout: 60_000 }).toMatch(/^(pending|processing)$/)
      const { port } = mos!
      mos!.child.kill('SIGKILL')
      await mos!.exited
      const status = await card.getAttribute('data-status')
      expect(status, 'the task ended before the service was killed: this test needs a slower one').toMatch(/^(pending|processing)$/)

      const banner = page.getByTestId('unreachable')
      await banner.waitFor({ timeout: 30_000 })
      expect(await banner.textContent()).toContain('The service cannot be reached; retrying…')
      expect(await page.getByRole('alert').allTextContents()).toContainEqual(expect.stringContaining('cannot be reached'))
      // The card keeps its last known state, still: no spinner turning for a task nobody can see, and says
      // it is only that (the service may be restarting the task, or have lost it), not "Processing" as if it knew.
      expect(await card.locator('.spinner').isVisible()).toBe(false)
      expect(await card.getAttribute('data-status')).toBe(status)
      expect(await card.getAttribute('data-known')).toBe('last')
      expect(await card.getByTestId('task-status').textContent()).toMatch(
        /^Unknown while the service cannot be reached; last known: (waiting in the queue|processing \d+%)$/,
      )

      // The same service again (its records and sessions are on disk): the banner goes, the task is picked up again and ends.
      mos = await startMos('console-down-again', { ...env, SERVICE__SERVER__PORT: String(port) })
      await banner.waitFor({ state: 'detached', timeout: 30_000 })
      expect(await card.getAttribute('data-known')).toBeNull()
      await untilEnded(card)
      expect(await card.getByTestId('task-status').textContent()).toBe('Completed 100%')
      expect(await page.getByTestId('who').textContent()).toBe('admin')
    },
    SLOW * 2,
  )

  it(
    'catches up with tasks the service no longer has when it returns: the cards say so, not their last state',
    async () => {
      // The first test's task, completed: its card offers the download.
      const completedId = await taskIdOf(page.getByTestId('task-card').first())
      const completed = page.getByTestId('task-card').filter({ hasText: completedId })
      expect(await completed.getAttribute('data-status')).toBe('completed')
      expect(await completed.getByTestId('download').count()).toBe(1)
      await page.locator('#files').setInputFiles(corpus.paths.ogre)
      const card = await start(page)
      await expect.poll(() => card.getAttribute('data-status'), { timeout: 60_000 }).toMatch(/^(pending|processing)$/)
      const id = await taskIdOf(card)
      const { port } = mos!
      mos!.child.kill('SIGKILL')
      await mos!.exited
      await page.getByTestId('unreachable').waitFor({ timeout: 30_000 })
      // The tasks' records gone while the service was away (an operator's clean-up, a data folder restored from before them):
      // no task-removed event will ever tell the page, which was not listening.
      const records = await readdir(join(dir!, 'records'), { recursive: true })
      for (const taskId of [id, completedId]) {
        const record = records.filter((path) => path.split('/').pop()!.startsWith(taskId))
        expect(record).toHaveLength(1)
        await rm(join(dir!, 'records', record[0]!))
      }
      mos = await startMos('console-down-lost', { ...env, SERVICE__SERVER__PORT: String(port) })
      // The page read the task again once the service answered, and its 404 ended the card, where it kept its last state for ever.
      await expect.poll(() => card.getAttribute('data-status'), { timeout: 30_000 }).toBe('removed')
      expect(await card.getByTestId('task-status').textContent()).toMatch(
        /^No longer on the service \(deleted, or lost with its data\); last known: /,
      )
      expect(await card.locator('.spinner').count()).toBe(0)
      expect(await card.getByTestId('task-progress').count()).toBe(0)
      // So did the completed one, read again when the stream opened: its download link, now a 404, is gone.
      await expect.poll(() => completed.getAttribute('data-status'), { timeout: 30_000 }).toBe('removed')
      expect(await completed.getByTestId('task-status').textContent()).toBe(
        'No longer on the service (deleted, or lost with its data); last known: completed 100%',
      )
      expect(await completed.getByTestId('download').count()).toBe(0)
    },
    SLOW,
  )

  it(
    'brings the sign-in page back when the service returns without the session, with no task open to read',
    async () => {
      const { port } = mos!
      mos!.child.kill('SIGKILL')
      await mos!.exited
      await page.getByTestId('unreachable').waitFor({ timeout: 30_000 })
      // The session removed meanwhile (an operator, the maintenance sweep of an expired one): its records' folder.
      const folders = (await readdir(dir!, { recursive: true })).filter((path) => path.endsWith('console-sessions'))
      expect(folders).toHaveLength(1)
      await rm(join(dir!, folders[0]!), { recursive: true })
      mos = await startMos('console-down-third', { ...env, SERVICE__SERVER__PORT: String(port) })
      // The event stream's 401 only closes it (EventSource shows no status): the page learns it from /auth/me.
      await page.getByText('Your session has ended: sign in again.').waitFor({ timeout: 30_000 })
      expect(await page.getByLabel('Administrator password').isVisible()).toBe(true)
    },
    SLOW,
  )
})
