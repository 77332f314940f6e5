import { describe, expect, it } from 'vitest'
import { createLogger } from '../src/logging/create-logger.ts'
import { prettyLine } from '../src/logging/pretty-line.ts'

const collector = () => {
  const lines: string[] = []
  return { lines, destination: { write: (line: string) => lines.push(line) } }
}

describe('createLogger', () => {
  it('writes one JSON object per line with level names, ISO time, pid and the base fields, from the level up', () => {
    const { lines, destination } = collector()
    const logger = createLogger({ level: 'info', format: 'json', destination, base: { role: 'worker' } })
    logger.debug('hidden')
    logger.child({ requestId: 'r-1' }).info({ status: 200 }, 'request')
    expect(lines).toHaveLength(1)
    const entry = JSON.parse(lines[0]!) as Record<string, unknown>
    expect(entry).toMatchObject({ level: 'info', pid: process.pid, role: 'worker', requestId: 'r-1', status: 200, msg: 'request' })
    expect(new Date(entry.time as string).toISOString()).toBe(entry.time)
  })

  it('prints short readable lines in the pretty format, with the fields as key=value', () => {
    const { lines, destination } = collector()
    createLogger({ format: 'pretty', destination }).warn({ taskId: 't-1', error: 'not a GLB file' }, 'task failed')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^\d{2}:\d{2}:\d{2}\.\d{3} WARN {2}task failed {2}taskId=t-1 error="not a GLB file"\n$/)
    expect(lines[0]).not.toContain('pid=')
    // A line that is not JSON passes through as it is.
    expect(prettyLine('plain text\n', false)).toBe('plain text\n')
  })

  it('is JSON with `auto` when writing anywhere but a terminal', () => {
    const { lines, destination } = collector()
    createLogger({ format: 'auto', destination }).info('hello')
    expect(JSON.parse(lines[0]!)).toMatchObject({ msg: 'hello' })
  })
})
