import { sha256Hex } from '../web-crypto.ts'

/**
 * The owner a task or batch records: a digest of the API key that made it, never the key itself,
 * so a leaked record store gives away no key. 128 bits of SHA-256 are ample to tell keys apart.
 */
export async function keyOwner(apiKey: string): Promise<string> {
  return (await sha256Hex(apiKey)).slice(0, 32)
}

/**
 * Whether `owner` may see a record. A record without an owner was made before records carried one
 * (or by a test fixture): it stays visible to every key, as it was.
 */
export function ownedBy(record: { owner?: string }, owner: string): boolean {
  return record.owner === undefined || record.owner === owner
}
