import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { issueLicenseKey, type LicensePayload } from '../../src/licensing/license-key.ts'
import { machineId } from '../../src/licensing/machine-id.ts'

/** A vendor key pair made for the test run: tests never see Mos's real private key. */
export interface TestVendor {
  privateKey: KeyObject
  /** base64 SPKI DER, the form SERVICE__LICENSE__PUBLIC_KEY takes. */
  publicKeyBase64: string
  /** Writes the private key as PEM (for the CLI) and returns its path. */
  writePrivateKey(dir: string): Promise<string>
  issue(payload?: Partial<LicensePayload>): string
}

export function testVendor(): TestVendor {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  const now = Math.floor(Date.now() / 1000)
  return {
    privateKey,
    publicKeyBase64: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
    async writePrivateKey(dir) {
      const path = join(dir, 'vendor-private-key.pem')
      await writeFile(path, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 })
      return path
    },
    issue: (payload = {}) =>
      issueLicenseKey(privateKey, { id: 'lic_test', tier: 'standard', issued_at: now, expires_at: now + 30 * 86_400, ...payload }),
  }
}

export const DAY = 86_400
export const thisMachine = machineId
