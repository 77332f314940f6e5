/** The owner the console's own submits record (the server's CONSOLE_OWNER). */
const CONSOLE_OWNER = 'console:admin'

/**
 * Who submitted a task, for the task list: `this console` for the console's own submits, `API key 8254c329…` for a
 * key's, with the whole digest and what it is in `title`. The record holds a digest of the key, never the key, and
 * the list showed it bare (`8254c329a92850f6d539dd376f4816ee` beside `console:admin`), which read as nothing anyone
 * could place; an operator matches it against `sha256(key)`.
 */
export function ownerWords(owner: string | undefined): { text: string; title?: string } {
  if (!owner) return { text: '—' }
  if (owner === CONSOLE_OWNER) return { text: 'this console', title: `${CONSOLE_OWNER}: submitted from the console's Work page` }
  if (/^[0-9a-f]{32}$/.test(owner)) {
    return { text: `API key ${owner.slice(0, 8)}…`, title: `${owner}: the first 128 bits of the SHA-256 of the API key that submitted it` }
  }
  return { text: owner }
}
