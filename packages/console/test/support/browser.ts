import { existsSync } from 'node:fs'
import { randomBytes, scryptSync } from 'node:crypto'
import { chromium, type Browser, type Locator } from 'playwright-core'
import sharp from 'sharp'

/** Debian's chromium (`apt-get install chromium`, in .ci/run). */
export const CHROMIUM = '/usr/bin/chromium'

/**
 * Whether the browser tests can run. Without chromium they skip with a message, except under
 * REQUIRE_CORPUS=1 (CI), where its absence is an error.
 */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true
  const message = `${CHROMIUM} missing: the console's browser tests need Debian's chromium (apt-get install chromium)`
  if (process.env.REQUIRE_CORPUS === '1') throw new Error(message)
  console.warn(`[skip] ${message}`)
  return false
}

/**
 * Headless chromium without a GPU: WebGL then runs on SwiftShader, which chromium only allows when
 * asked (--enable-unsafe-swiftshader). No network of its own, no first-run pages.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--use-angle=swiftshader',
      '--enable-unsafe-swiftshader',
    ],
  })
}

/**
 * A password hash in the form of SERVICE__CONSOLE__ADMIN_PASSWORD_HASH
 * (`scrypt$N$r$p$salt$hash`, base64url), with a cost low enough for a test.
 */
export function consolePasswordHash(password: string): string {
  const [N, r, p] = [2 ** 14, 8, 1]
  const salt = randomBytes(16)
  const hash = scryptSync(password.normalize('NFC'), salt, 32, { N, r, p })
  return ['scrypt', N, r, p, salt.toString('base64url'), hash.toString('base64url')].join('$')
}

/**
 * The share of an element's screenshot (what the browser composited, not the DOM) whose pixels
 * differ clearly from `background` (0xRRGGBB): how much of a 3D view a model covers.
 */
export async function inkShare(element: Locator, background: number): Promise<number> {
  const png = await element.screenshot()
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true })
  const [r, g, b] = [(background >> 16) & 0xff, (background >> 8) & 0xff, background & 0xff]
  let ink = 0
  for (let i = 0; i < data.length; i += 3) {
    if (Math.abs(data[i]! - r) + Math.abs(data[i + 1]! - g) + Math.abs(data[i + 2]! - b) > 40) ink += 1
  }
  return ink / (info.width * info.height)
}

/**
 * The share of an element's screenshot whose pixels are lit: luma (Rec. 601) above `least` of 255.
 * A textured model drawn shows its texture's light pixels; the same model drawn before its texture
 * arrived is black, which `inkShare` counts as ink as well (it differs from the background).
 */
export async function litShare(element: Locator, least = 120): Promise<number> {
  const png = await element.screenshot()
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true })
  let lit = 0
  for (let i = 0; i < data.length; i += 3) {
    if (0.299 * data[i]! + 0.587 * data[i + 1]! + 0.114 * data[i + 2]! > least) lit += 1
  }
  return lit / (info.width * info.height)
}
