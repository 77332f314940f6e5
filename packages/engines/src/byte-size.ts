/**
 * A size in a task's notes, for people and exact: `367.2 KB (376,020 bytes)`, where a bare `376020 bytes` made the
 * reader count digits, beside a console that shows the same sizes in KB and MB. The units are the console's
 * (`formatBytes` in packages/console/src/api.ts: 1 KB = 1024 bytes, KB with one decimal, MB with two), so a note
 * and the size shown beside it agree; the exact count stays for whoever compares with a file's size on disk.
 * @example byteSize(376020) // '367.2 KB (376,020 bytes)'
 * @example byteSize(588) // '588 bytes'
 */
export function byteSize(bytes: number): string {
  const exact = `${bytes.toLocaleString('en-US')} bytes`
  if (bytes < 1024) return exact
  const rounded = bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / (1024 * 1024)).toFixed(2)} MB`
  return `${rounded} (${exact})`
}
