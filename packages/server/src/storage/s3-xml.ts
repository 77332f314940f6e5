/**
 * The little XML the S3 client reads and writes: S3's answers are flat enough for a pattern per
 * tag, so no XML library is needed.
 */

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

export const unescapeXml = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, name: string) =>
    name.startsWith('#x') || name.startsWith('#X')
      ? String.fromCodePoint(Number.parseInt(name.slice(2), 16))
      : name.startsWith('#')
        ? String.fromCodePoint(Number(name.slice(1)))
        : (XML_ENTITIES[name] ?? whole),
  )

export const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** An entity tag without its quotes. */
export const unquote = (etag: string) => etag.replace(/^"|"$/g, '')

/** The raw text of each `<tag>` in `xml`, entities still escaped (an element may hold further tags). */
export const tags = (xml: string, tag: string) => [...xml.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => m[1] ?? '')

/** The text of the first `<name>` in `xml`, unescaped, or undefined when there is none. */
export const tag = (xml: string, name: string) => {
  const found = tags(xml, name)[0]
  return found === undefined ? undefined : unescapeXml(found)
}
