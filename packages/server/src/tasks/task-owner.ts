import { createHash } from 'node:crypto'

/**
 * The owner a task or batch records: a digest of the API key that made it, never the key itself,
 * so a leaked record store gives away no key. 128 bits of SHA-256 are ample to tell keys apart.
 */
export function keyOwner(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex').slice(0, 32)
}

/** The owner of what the web console submits: never a key digest (hex has no colon). */
export const CONSOLE_OWNER = 'console:admin'

/**
 * The console administrator's view: every owner's tasks and batches. Passed where routes take the
 * caller's owner, it is never recorded as one (submits record CONSOLE_OWNER).
 */
export const ALL_OWNERS = '*'

/**
 * Whether `owner` may see a record (ALL_OWNERS sees every one). A record without an owner was made before records carried one
 * (or by a test fixture): it stays visible to every key, as it was.
 */
export function ownedBy(record: { owner?: string }, owner: string): boolean {
  return owner === ALL_OWNERS || record.owner === undefined || record.owner === owner
}
