import { describe, expect, it } from 'vitest'
import { createFormParser, formBoundary } from '../src/uploads/form-parser.ts'

const BOUNDARY = '----mos-form-parser'
const CONTENT_TYPE = `multipart/form-data; boundary=${BOUNDARY}`

/** What the parser handed over: fields with their values, files with their names and bytes, and its verdict. */
function parse(body: Uint8Array, chunkSize: number): { refused: string | undefined; parts: string[] } {
  const parts: string[] = []
  const parser = createFormParser(CONTENT_TYPE, {
    field: (name, value) => void parts.push(`field ${name}=${value}`),
    file(name, filename) {
      const bytes: number[] = []
      return { push: (chunk) => void bytes.push(...chunk), end: () => void parts.push(`file ${name} ${filename} [${bytes.join(',')}]`) }
    },
  })
  let refused: string | undefined
  for (let offset = 0; offset < body.length && refused === undefined; offset += chunkSize) {
    refused = parser.write(body.subarray(offset, offset + chunkSize))
  }
  return { refused: refused ?? parser.end(), parts }
}

/** A file body that holds the boundary's first bytes and line breaks, so a search that loses its place shows. */
const fileBytes = Uint8Array.from([13, 10, 45, 45, 45, 0, 255, 13, 10, 45, 45, ...new TextEncoder().encode('----mos-form'), 13, 10])

function form(epilogue: string): Uint8Array {
  const head = (disposition: string) => `--${BOUNDARY}\r\nContent-Disposition: form-data; ${disposition}\r\n\r\n`
  const text = new TextEncoder()
  const chunks = [
    text.encode(`preamble to ignore\r\n${head('name="engine"')}draco\r\n`),
    text.encode(`${head(`name="file"; filename*=ISO-8859-1''k%FChe.obj`)}`),
    fileBytes,
    text.encode(`\r\n${head('name="level"')}7\r\n--${BOUNDARY}--${epilogue}`),
  ]
  return new Uint8Array(Buffer.concat(chunks))
}

describe('createFormParser', () => {
  const expected = ['field engine=draco', `file file kühe.obj [${[...fileBytes].join(',')}]`, 'field level=7']

  it('reads the same parts whatever sizes the body arrives in (the closing "--" split across chunks included)', () => {
    for (const epilogue of ['', '\r\n', '\r\nan epilogue, ignored\r\n']) {
      const body = form(epilogue)
      for (let chunkSize = 1; chunkSize <= body.length; chunkSize++) {
        expect(parse(body, chunkSize), `chunks of ${chunkSize}, epilogue ${JSON.stringify(epilogue)}`).toEqual({
          refused: undefined,
          parts: expected,
        })
      }
    }
  })

  it('refuses a body cut before its closing boundary, however it is cut', () => {
    const body = form('')
    for (const cut of [body.length - 1, body.length - 2, body.length - 3, body.length - 20]) {
      expect(parse(body.subarray(0, cut), 7).refused, `cut at ${cut}`).toBe('the form ended before its closing boundary')
    }
  })

  it('takes transport padding before the line break after a boundary, and refuses anything else there, whatever sizes the body arrives in', () => {
    const text = new TextEncoder()
    const body = (line: string) =>
      text.encode(`--${BOUNDARY}${line}Content-Disposition: form-data; name="engine"\r\n\r\ndraco\r\n--${BOUNDARY}--`)
    for (const padding of [' \t \r\n', '\t\r\n']) {
      for (let chunkSize = 1; chunkSize <= body(padding).length; chunkSize++) {
        expect(parse(body(padding), chunkSize), `${JSON.stringify(padding)} in chunks of ${chunkSize}`).toEqual({
          refused: undefined,
          parts: ['field engine=draco'],
        })
      }
    }
    // Bytes after the boundary, a lone LF, a CR without its LF, one dash, padding before text, a
    // boundary line right after another (the next one's CRLF is not this line's).
    for (const line of ['XY', '\nX', '\r\r\n', '-\r\n', ' X\r\n', `\r\n--${BOUNDARY}\r\n`]) {
      for (const chunkSize of [1, 2, 3, 1000]) {
        expect(parse(body(line), chunkSize).refused, `${JSON.stringify(line)} in chunks of ${chunkSize}`).toBe(
          'a form boundary is followed by neither "--" nor a line break',
        )
      }
    }
  })

  it("refuses control characters in a part's header values, which multipasta lets through after a bare CR", () => {
    const text = new TextEncoder()
    for (const value of ['a\r\u0000b.obj', 'a\rb.obj', 'a\r\u001bb.obj']) {
      const body = text.encode(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${value}"\r\n\r\nx\r\n--${BOUNDARY}--`,
      )
      expect(parse(body, 1000), JSON.stringify(value)).toEqual({ refused: 'a form part has malformed headers', parts: [] })
    }
  })

  it('ignores a part with no form-data disposition or an empty name, however many there are', () => {
    const text = new TextEncoder()
    const part = (headers: string, value: string) => `--${BOUNDARY}\r\n${headers}\r\n\r\n${value}\r\n`
    const body = text.encode(
      part('X-Note: 1', 'a') +
        part('X-Note: 2', 'b') +
        part('Content-Disposition: attachment; name="engine"', 'c') +
        part('Content-Disposition: form-data; name=""', 'd') +
        part('Content-Disposition: form-data; name=""; filename="e.obj"', 'e') +
        part('Content-Disposition: form-data; name="engine"', 'draco') +
        `--${BOUNDARY}--`,
    )
    expect(parse(body, 7)).toEqual({ refused: undefined, parts: ['field engine=draco'] })
  })

  it('refuses a boundary that is not printable ASCII (RFC 2046), by what is wrong with it', () => {
    const refusal = 'the multipart/form-data boundary may hold only printable ASCII characters (RFC 2046)'
    // Node hands header bytes over as Latin-1: UTF-8's ü arrives as 'Ã¼'.
    for (const boundary of ['Grenze-ü', 'GrenzeÃ¼', '"a\tb"', '"境界"']) {
      expect(formBoundary(`multipart/form-data; boundary=${boundary}`), boundary).toEqual({ refused: refusal })
      const parser = createFormParser(`multipart/form-data; boundary=${boundary}`, { field: () => undefined, file: () => undefined })
      expect(parser.write(form('')), boundary).toBe(refusal)
    }
    // RFC 2046's own characters (space inside quotes among them) are taken.
    expect(formBoundary(`multipart/form-data; boundary="a'()+_,-./:=? b"`)).toEqual({ boundary: "a'()+_,-./:=? b" })
  })

  it('refuses a Content-Type without a boundary', () => {
    const parser = createFormParser('multipart/form-data', { field: () => undefined, file: () => undefined })
    expect(parser.write(form(''))).toBe('multipart/form-data without a boundary')
  })
})
