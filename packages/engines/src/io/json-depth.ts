import { ModelInputError } from '../errors.ts'

/**
 * Deepest nesting of arrays and objects a glTF's JSON may have. Real files stay under about 10
 * (extras included); V8's JSON.parse copes with far more, but what walks the parsed value
 * afterwards recursively (glTF-Validator, structured clones, extras copies) overflows the thread's
 * stack at a few thousand, and that surfaced as "engine thread failed: Stack Overflow".
 */
const MAX_JSON_DEPTH = 256

/**
 * Throws a ModelInputError when the JSON text nests arrays and objects deeper than `maxDepth`.
 * A linear scan that skips strings, run before JSON.parse: it costs about 1 ms per MB.
 *
 * ```ts
 * assertJsonDepth('{"a":[[1]]}', 'glTF JSON') // passes: depth 3
 * ```
 */
export function assertJsonDepth(text: string, what: string, maxDepth = MAX_JSON_DEPTH): void {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // backslash: the next character is escaped, whatever it is
      else if (c === 0x22) inString = false
    } else if (c === 0x22) {
      inString = true
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) throw new ModelInputError(`${what} is nested too deeply (more than ${maxDepth} levels of arrays and objects)`)
    } else if (c === 0x7d || c === 0x5d) {
      depth--
    }
  }
}
