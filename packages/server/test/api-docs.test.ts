import { readFile } from 'node:fs/promises'
import { ERROR_TEXTS } from '@mos/sdk/contract'
import { describe, expect, it } from 'vitest'

const API_DOC = new URL('../../../docs/api.md', import.meta.url)

/** A placeholder where a builder takes a number, as docs/api.md writes it (`<n>`). */
const placeholder = (text: string) => text as unknown as number

describe('docs/api.md gives the texts the server sends', () => {
  it('for extension fields, the auth throttle, files over the limit and variant B convert targets', async () => {
    const docs = await readFile(API_DOC, 'utf8')
    // The server's wording for every field (SDK and conformance rely on it): the docs said "invalid field <name>".
    expect(docs).not.toMatch(/invalid field </)
    expect(docs).toContain(`\`400 {"error": "${ERROR_TEXTS.invalidField('<name>', 'must be …')}"}\``)
    expect(docs).toContain(`\`${ERROR_TEXTS.authThrottled(placeholder('<n>'))}\``)
    expect(docs).toContain(`\`${ERROR_TEXTS.fileTooLargeOver(placeholder('<n>'), placeholder('<m>'))}\``)
    expect(docs).toContain(`\`${ERROR_TEXTS.invalidField('<field>', 'given more than once')}\``)
    expect(docs).toContain(`\`400 {"error": "${ERROR_TEXTS.unsupportedFormat('fbx')}"}\``)
  })
})
