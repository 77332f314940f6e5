import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'

const MACHINE_ID_FILES = ['/etc/machine-id', '/var/lib/dbus/machine-id']

/**
 * A stable id of this host for machine-bound licences: SHA-256 of the OS machine id (systemd's
 * /etc/machine-id) and the host name, 32 hex characters. Stable across restarts and upgrades; a
 * container needs /etc/machine-id mounted and a fixed host name to keep it.
 */
export function machineId(): string {
  let osId = ''
  for (const file of MACHINE_ID_FILES) {
    try {
      osId = readFileSync(file, 'utf8').trim()
      if (osId) break
    } catch {
      // next candidate
    }
  }
  return createHash('sha256').update(`mos-machine\n${osId}\n${hostname()}`).digest('hex').slice(0, 32)
}
