const PREFIX = 'SERVICE__'

/** A name with its separators and case ignored: `SERVICE_SERVER_PORT` and `SERVICE__SERVER__PORT` read alike. */
const lettersOf = (name: string) => name.toUpperCase().replace(/[^A-Z0-9]/g, '')

/** Edits (insert, delete, replace one character) between two names. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    previous = current
  }
  return previous[b.length]!
}

/**
 * Two slips in the letters (a swap `PROT` for `PORT` is two) still name the setting meant; more, and
 * the suggestion would be a guess.
 */
const MAX_SLIPS = 2

/** The setting `name` most likely meant: the same letters with other separators, else one a slip or two away. */
function meant(name: string, known: readonly string[]): string | undefined {
  const letters = lettersOf(name)
  let best: { name: string; distance: number } | undefined
  for (const candidate of known) {
    const distance = editDistance(letters, lettersOf(candidate))
    if (distance <= MAX_SLIPS && (!best || distance < best.distance)) best = { name: candidate, distance }
  }
  return best?.name
}

/**
 * The variables that are not settings but were meant as one, each with the setting it names when
 * one is close: every unknown `SERVICE__*` name, and a name spelling a setting with other separators
 * or case (`SERVICE_SERVER_PORT`, `service__server__port`), which was silently ignored. Other
 * variables are left alone, Kubernetes' service links among them (`MOS_SERVICE_HOST`,
 * `KUBERNETES_SERVICE_PORT`): their letters are no setting's.
 */
export function mistakenSettings(names: readonly string[], known: readonly string[]): { name: string; meant?: string }[] {
  const knownNames = new Set(known)
  const knownLetters = new Map(known.map((name) => [lettersOf(name), name]))
  return names
    .filter((name) => !knownNames.has(name) && (name.startsWith(PREFIX) || knownLetters.has(lettersOf(name))))
    .map((name) => {
      const guess = knownLetters.get(lettersOf(name)) ?? meant(name, known)
      return guess ? { name, meant: guess } : { name }
    })
}
