import { promisify } from 'node:util'
import { deflate } from 'node:zlib'
import { pngFile } from './png-encode.ts'
import type { RgbaImage } from './tga.ts'

const deflateAsync = promisify(deflate)

/** PNG colour types (IHDR byte 9). */
const GREY = 0
const TRUECOLOUR = 2
const INDEXED = 3
const GREY_ALPHA = 4
const TRUECOLOUR_ALPHA = 6

/**
 * Above this many pixels an image gets one filtering strategy, not two: each is a full deflate,
 * half a second for a 4-megapixel photo here, and the second rarely wins by much there.
 */
const BOTH_FILTERINGS_MAX_PIXELS = 1 << 20

/**
 * The zlib level candidates are compared at; only the winner is deflated in full, at level 9. Level
 * 9's long match chains cost up to ten times more on repetitive rows, and on the corpus's 14 PNGs
 * comparing at 5 picked what comparing at 9 picked but once (59 317 B against 59 314 in all).
 */
const TRIAL_LEVEL = 5

/** Rows per sampled band, and one band in how many (see sampledRows). */
const SAMPLE_BAND = 16
const SAMPLE_EVERY = 3

/** One way of laying an image's pixels out as PNG scanlines, before filtering. */
interface Layout {
  colourType: number
  bitDepth: number
  /** Bytes per complete pixel (at least 1): the distance the Sub, Average and Paeth filters look back. */
  pixelBytes: number
  /** Bytes per scanline, without its filter byte. */
  stride: number
  /** height × stride bytes, top row first. */
  rows: Uint8Array
  /** PLTE and tRNS bodies, for the indexed layout. */
  palette?: Uint8Array
  transparency?: Uint8Array
}

/**
 * The smallest PNG this encoder finds for RGBA pixels, decoding to exactly those pixels. Candidates:
 * - indexed, where at most 256 colours occur: the fewest bits per index, the colours with alpha
 *   first so tRNS stays short;
 * - direct samples: grey where red, green and blue agree, no alpha channel where all is opaque;
 * - each scanline unfiltered, or by the filter whose output has the least absolute sum (libpng's
 *   heuristic). Both are tried up to a megapixel; above it, indexed rows go unfiltered (as libpng
 *   advises) and direct samples by the heuristic.
 * The candidates are compared on a sample of the rows (sampledRows) deflated at TRIAL_LEVEL, their
 * whole files estimated from it; the winner alone is filtered and deflated in full, at level 9.
 *
 * Lossless for every glTF loader: a PNG's colour type and bit depth are how it is stored, not what
 * it decodes to (PNG spec 11.2). Colour-space chunks are not written, as glTF says to ignore them.
 */
export async function encodeSmallestPng(image: RgbaImage): Promise<Uint8Array<ArrayBuffer>> {
  const { opaque, grey, palette } = survey(toWords(image.data))
  const candidates: { layout: Layout; filtering: Filtering }[] = []
  const both = image.width * image.height <= BOTH_FILTERINGS_MAX_PIXELS
  if (palette) {
    const indexed = indexedLayout(image, palette)
    candidates.push({ layout: indexed, filtering: 'none' })
    if (both) candidates.push({ layout: indexed, filtering: 'adaptive' })
  }
  // Direct samples too: a smooth ramp of many colours filters to almost nothing, its palette does not.
  const direct = grey ? greyLayout(image, opaque) : truecolourLayout(image, opaque)
  candidates.push({ layout: direct, filtering: 'adaptive' })
  if (both) candidates.push({ layout: direct, filtering: 'none' })
  // The candidates are compared on a sample of the rows, whole files estimated: an indexed image's
  // palette can outweigh what its indices save (a 255-colour ramp).
  const sample = sampledRows(image.height)
  const trials = await Promise.all(
    candidates.map(async ({ layout, filtering }) => {
      const filtered = filterRows(layout, sample, filtering)
      const data = await deflateAsync(filtered, { level: TRIAL_LEVEL, memLevel: 9 })
      // The chunks besides IDAT (header, palette, transparency) are the same whatever IDAT holds.
      const overhead = pngOf(image, layout, data).byteLength - data.byteLength
      return { layout, filtering, filtered, estimate: overhead + (data.byteLength * image.height) / sample.length }
    }),
  )
  const winner = trials.reduce((smallest, next) => (next.estimate < smallest.estimate ? next : smallest))
  // A sample of every row (a small image) is the winner's scanlines already.
  const filtered = sample.length === image.height ? winner.filtered : filterRows(winner.layout, allRows(image.height), winner.filtering)
  return pngOf(image, winner.layout, await deflateAsync(filtered, { level: 9, memLevel: 9 }))
}

/**
 * The rows candidates are compared on: every row of a small image; of a taller one, bands of
 * SAMPLE_BAND rows, one band in SAMPLE_EVERY, so each band keeps the runs a deflate finds along and
 * across rows. A third of the filtering and deflating, where comparing on every row was most of the
 * re-pack's time; on the corpus's 14 PNGs bands of 16, one in 3, pick what every row picks (bands
 * of 8, one in 4, did not: 2.6% more in all).
 */
function sampledRows(height: number): number[] {
  if (height < SAMPLE_BAND * SAMPLE_EVERY * 2) return allRows(height)
  return allRows(height).filter((y) => Math.floor(y / SAMPLE_BAND) % SAMPLE_EVERY === 0)
}

function allRows(height: number): number[] {
  return Array.from({ length: height }, (_, y) => y)
}

/** The pixels as 32-bit words (little-endian, as every platform Node runs on: red is the low byte), copied only when not 4-aligned. */
function toWords(data: Uint8Array): Uint32Array {
  const aligned = data.byteOffset % 4 === 0 ? data : data.slice()
  return new Uint32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength >> 2)
}

/** Slots of ColourTable: twice the colours it holds, so a probe ends soon. */
const COLOUR_SLOTS = 512

/**
 * An image's distinct colours while there are at most 256, each numbered in order of first use: an
 * open-addressing table on 32-bit words. V8's Map boxes the word of every opaque pixel (above 2^31)
 * as a heap number; looking one up at each change of colour, in the survey and again to lay the
 * indices out, was a third of ClearCoatTest's re-pack (five PNGs of 34–177 colours, profiled).
 */
class ColourTable {
  readonly colours: number[] = []
  private readonly words = new Uint32Array(COLOUR_SLOTS)
  private readonly numbers = new Int16Array(COLOUR_SLOTS).fill(-1)

  /** The colour's number, the colour added if new; -1 where it would be the 257th. */
  numberOf(word: number): number {
    let slot = Math.imul(word, 0x9e3779b1) >>> 23
    for (let number = this.numbers[slot]!; number !== -1; number = this.numbers[slot]!) {
      if (this.words[slot] === word) return number
      slot = (slot + 1) & (COLOUR_SLOTS - 1)
    }
    if (this.colours.length === 256) return -1
    this.words[slot] = word
    this.numbers[slot] = this.colours.length
    return this.colours.push(word) - 1
  }
}

/** An image of at most 256 colours: the colours in order of first use, and each pixel's colour number. */
interface Palette {
  colours: number[]
  numbers: Uint8Array
}

/** Whether all pixels are opaque and grey, and the image's palette while it has at most 256 colours. */
function survey(pixels: Uint32Array): { opaque: boolean; grey: boolean; palette: Palette | undefined } {
  let opaque = true
  let grey = true
  let table: ColourTable | undefined = new ColourTable()
  const numbers = new Uint8Array(pixels.length)
  let previous: number | undefined
  let number = 0
  for (let i = 0; i < pixels.length; i++) {
    const word = pixels[i]!
    // Runs of one colour are most of a texture: one look each.
    if (word !== previous) {
      previous = word
      if (opaque && word >>> 24 !== 255) opaque = false
      if (grey && ((word & 0xff) !== ((word >>> 8) & 0xff) || (word & 0xff) !== ((word >>> 16) & 0xff))) grey = false
      if (table) {
        number = table.numberOf(word)
        if (number === -1) table = undefined
      }
      if (!opaque && !grey && !table) break
    }
    numbers[i] = number
  }
  return { opaque, grey, palette: table ? { colours: table.colours, numbers } : undefined }
}

function indexedLayout(image: RgbaImage, { colours, numbers }: Palette): Layout {
  // Translucent entries first: tRNS then lists only them (the rest default to opaque).
  const alphaOf = (word: number) => word >>> 24
  const ordered = [...colours.filter((word) => alphaOf(word) !== 255), ...colours.filter((word) => alphaOf(word) === 255)]
  const position = new Map(ordered.map((word, i) => [word, i]))
  const indexOf = Uint8Array.from(colours, (word) => position.get(word)!)
  const palette = new Uint8Array(ordered.length * 3)
  const translucent = ordered.findIndex((word) => alphaOf(word) === 255)
  const transparency = new Uint8Array(translucent === -1 ? ordered.length : translucent)
  for (const [i, word] of ordered.entries()) {
    palette.set([word & 0xff, (word >>> 8) & 0xff, (word >>> 16) & 0xff], i * 3)
    if (i < transparency.length) transparency[i] = alphaOf(word)
  }
  const bitDepth = ordered.length <= 2 ? 1 : ordered.length <= 4 ? 2 : ordered.length <= 16 ? 4 : 8
  const stride = Math.ceil((image.width * bitDepth) / 8)
  const rows = new Uint8Array(stride * image.height)
  const { width, height } = image
  const shiftOfFirst = 8 - bitDepth
  for (let y = 0, i = 0; y < height; y++) {
    let at = y * stride
    let shift = shiftOfFirst
    for (let x = 0; x < width; x++, i++) {
      // Indices fill each byte from its high bits (PNG spec 7.2).
      rows[at]! |= indexOf[numbers[i]!]! << shift
      shift -= bitDepth
      if (shift < 0) {
        shift = shiftOfFirst
        at++
      }
    }
  }
  return { colourType: INDEXED, bitDepth, pixelBytes: 1, stride, rows, palette, ...(transparency.length > 0 ? { transparency } : {}) }
}

function greyLayout(image: RgbaImage, opaque: boolean): Layout {
  return opaque ? channelLayout(image, 1, GREY) : channelLayout(image, 2, GREY_ALPHA)
}

function truecolourLayout(image: RgbaImage, opaque: boolean): Layout {
  return opaque ? channelLayout(image, 3, TRUECOLOUR) : channelLayout(image, 4, TRUECOLOUR_ALPHA)
}

/**
 * 8-bit samples of each pixel's first `samples` channels of grey (red), grey and alpha, RGB or
 * RGBA: one loop per case, as a loop over a list of channels took most of the time.
 */
function channelLayout(image: RgbaImage, samples: 1 | 2 | 3 | 4, colourType: number): Layout {
  const count = image.width * image.height
  const rows = new Uint8Array(count * samples)
  const data = image.data
  if (samples === 4) rows.set(data.subarray(0, count * 4))
  else if (samples === 3)
    for (let i = 0, o = 0; i < count * 4; i += 4, o += 3) {
      rows[o] = data[i]!
      rows[o + 1] = data[i + 1]!
      rows[o + 2] = data[i + 2]!
    }
  else if (samples === 2)
    for (let i = 0, o = 0; i < count * 4; i += 4, o += 2) {
      rows[o] = data[i]!
      rows[o + 1] = data[i + 3]!
    }
  else for (let i = 0; i < count; i++) rows[i] = data[i * 4]!
  return { colourType, bitDepth: 8, pixelBytes: samples, stride: image.width * samples, rows }
}

type Filtering = 'none' | 'adaptive'

function pngOf(image: RgbaImage, layout: Layout, data: Uint8Array): Uint8Array<ArrayBuffer> {
  const { bitDepth, colourType, palette, transparency } = layout
  return pngFile({ width: image.width, height: image.height, bitDepth, colourType, palette, transparency, data })
}

/** The scanlines `ys` with their filter bytes: each row unfiltered, or by the filter whose output has the least absolute sum. */
function filterRows(layout: Layout, ys: number[], filtering: Filtering): Uint8Array {
  const { stride, rows, pixelBytes } = layout
  const out = new Uint8Array((stride + 1) * ys.length)
  const zero = new Uint8Array(stride)
  const scratch = new Uint8Array(stride)
  for (const [k, y] of ys.entries()) {
    const row = rows.subarray(y * stride, (y + 1) * stride)
    const above = y > 0 ? rows.subarray((y - 1) * stride, y * stride) : zero
    const into = out.subarray(k * (stride + 1) + 1, (k + 1) * (stride + 1))
    let best = 0
    if (filtering === 'adaptive') {
      // Each filter is tried in the scratch row; the best so far is copied out.
      let bestSum = filterRow(0, row, above, pixelBytes, into)
      for (let type = 1; type < 5 && bestSum > 0; type++) {
        const sum = filterRow(type, row, above, pixelBytes, scratch)
        if (sum < bestSum) {
          bestSum = sum
          best = type
          into.set(scratch)
        }
      }
    } else into.set(row)
    out[k * (stride + 1)] = best
  }
  return out
}

/** |byte| read as a signed number: the cost libpng's heuristic sums over a filtered row. */
const SIGNED_MAGNITUDE = Uint8Array.from({ length: 256 }, (_, byte) => (byte < 128 ? byte : 256 - byte))

/** Writes one row filtered by `type` (PNG spec 9.2) into `into`; answers the sum of its bytes read as signed. */
function filterRow(type: number, row: Uint8Array, above: Uint8Array, bpp: number, into: Uint8Array): number {
  const n = row.length
  const cost = SIGNED_MAGNITUDE
  let sum = 0
  // One loop per filter, the first pixel's bytes (nothing to their left) apart, each summing as it
  // writes: this runs five times a row.
  switch (type) {
    case 0:
      into.set(row)
      for (let x = 0; x < n; x++) sum += cost[row[x]!]!
      break
    case 1:
      for (let x = 0; x < bpp; x++) sum += cost[(into[x] = row[x]!)]!
      for (let x = bpp; x < n; x++) sum += cost[(into[x] = (row[x]! - row[x - bpp]!) & 0xff)]!
      break
    case 2:
      for (let x = 0; x < n; x++) sum += cost[(into[x] = (row[x]! - above[x]!) & 0xff)]!
      break
    case 3:
      for (let x = 0; x < bpp; x++) sum += cost[(into[x] = (row[x]! - (above[x]! >> 1)) & 0xff)]!
      for (let x = bpp; x < n; x++) sum += cost[(into[x] = (row[x]! - ((row[x - bpp]! + above[x]!) >> 1)) & 0xff)]!
      break
    default:
      for (let x = 0; x < bpp; x++) sum += cost[(into[x] = (row[x]! - above[x]!) & 0xff)]!
      for (let x = bpp; x < n; x++) sum += cost[(into[x] = (row[x]! - paeth(row[x - bpp]!, above[x]!, above[x - bpp]!)) & 0xff)]!
  }
  return sum
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c
  const pa = Math.abs(p - a)
  const pb = Math.abs(p - b)
  const pc = Math.abs(p - c)
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c
}
