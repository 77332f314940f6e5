import type { CompletedTask } from '@mos/sdk/contract'
import type { Locator, Page, Request } from 'playwright-core'
import { expect } from 'vitest'
import { VIEW_BACKGROUND } from '../../src/viewer/background.ts'
import { inkShare } from './browser.ts'

/** Long enough for an engine task on a loaded two-core machine; nothing here is timed. */
export const SLOW = 120_000

/**
 * Presses Start once the page shows the files chosen (its submit handler then has them), and answers
 * the new task's card (the page puts new cards first), once it is there. Where no card comes, the
 * failure says what the form said instead: its alert, or the field the browser refused (how the
 * intermittent "no card" of earlier runs was found: the page reset the fields a frame after the
 * operation changed, emptying a target_format the test had just chosen).
 */
export async function start(page: Page, files = 1): Promise<Locator> {
  const cards = page.getByTestId('task-card')
  const before = await cards.count()
  await expect.poll(() => page.getByTestId('drop-zone').locator('p[aria-live]').textContent()).not.toBe('No file chosen.')
  await page.getByRole('button', { name: 'Start' }).click()
  // What stopped the form: its alert, or a field the browser's own validation refused (no alert then).
  const alerts = async () => {
    const refused = await page
      .locator('form[aria-label="New task"]')
      .locator('input:invalid, select:invalid, textarea:invalid')
      .evaluateAll((fields) => fields.map((field) => `${field.id}: ${(field as HTMLInputElement).validationMessage}`))
    return [...(await page.getByRole('alert').allTextContents()), ...refused].join('; ') || 'no alert, no field refused'
  }
  await expect
    .poll(async () => ((await cards.count()) === before + files ? 'there' : `${await cards.count()} cards, ${await alerts()}`), {
      timeout: 30_000,
    })
    .toBe('there')
  return cards.first()
}

/**
 * One task from the Work page as a user starts it: the operation, its choice fields (label → option),
 * the files, Start; answers the card once its task has ended, either way (the test checks how).
 */
export async function runTask(
  page: Page,
  operation: string,
  files: Parameters<Locator['setInputFiles']>[0],
  choices: Record<string, string> = {},
): Promise<Locator> {
  await page.getByLabel('Operation').selectOption(operation)
  for (const [label, option] of Object.entries(choices)) await page.getByLabel(label).selectOption(option)
  await page.locator('#files').setInputFiles(files)
  const card = await start(page)
  await untilEnded(card)
  return card
}

/** The triangle counts under a card's two views, once both models are loaded. */
export async function trianglesOf(card: Locator): Promise<string[]> {
  await expect.poll(() => card.getByTestId('triangles').count(), { timeout: 60_000 }).toBe(2)
  return card.getByTestId('triangles').allTextContents()
}

/**
 * A view's screenshot shows a model on the view's background: more than `least` of its pixels differ
 * from the background, and not all of them (a view whose WebGL context the browser dropped is one
 * colour all over, which differs from the background everywhere).
 */
export async function expectDrawn(card: Locator, view: string, least = 0.05): Promise<void> {
  await expect
    .poll(
      async () => {
        const share = await inkShare(card.getByTestId(view), VIEW_BACKGROUND)
        return share > least && share < 0.95 ? 'drawn' : `${(share * 100).toFixed(1)}% of its pixels away from the background`
      },
      { timeout: 30_000 },
    )
    .toBe('drawn')
}

/** The record of a card's task, as the service gives it (`GET /admin/tasks/{id}`, the page's own session), with the options it ran. */
export async function recordOf(
  page: Page,
  card: Locator,
): Promise<CompletedTask & Record<string, unknown> & { options: Record<string, unknown> }> {
  const id = await taskIdOf(card)
  return page.evaluate(
    async (taskId) =>
      (await (await fetch(`/admin/tasks/${taskId}`)).json()) as CompletedTask &
        Record<string, unknown> & { options: Record<string, unknown> },
    id,
  )
}

/** The task id a card's header shows. */
export async function taskIdOf(card: Locator): Promise<string> {
  return / · (\S+) · /.exec((await card.locator('header .muted').textContent()) ?? '')![1]!
}

/**
 * Waits until the card's task ended, either way (a failure's words are in the status line, which
 * the test's next check prints). Fails before the test's own time-out, saying where the card stopped.
 */
export async function untilEnded(card: Locator, timeoutMs = SLOW): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (/^(completed|failed)$/.test((await card.getAttribute('data-status')) ?? '')) return
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`the task did not end within ${timeoutMs} ms; its card says "${await card.getByTestId('task-status').textContent()}"`)
}

/**
 * Follows a page's event streams (`/events`): `open()` is how many it has sent that have not ended,
 * whichever side ended them (the page closing its EventSource, or the service ending the response).
 */
export function followEventStreams(page: Page): { open: () => number } {
  const open = new Set<Request>()
  page.on('request', (request) => {
    if (new URL(request.url()).pathname === '/events') open.add(request)
  })
  const ended = (request: Request) => open.delete(request)
  page.on('requestfinished', ended)
  page.on('requestfailed', ended)
  return { open: () => open.size }
}
