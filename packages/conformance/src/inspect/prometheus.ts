/** One sample of the Prometheus text format. */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

export interface Exposition {
  samples: Sample[]
  /** Declared `# TYPE` per metric family. */
  types: Map<string, string>
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+-?\d+)?$/
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|$)/y

/** Parses the Prometheus text exposition format; throws on a line it cannot read. */
export function parseExposition(text: string): Exposition {
  const samples: Sample[] = []
  const types = new Map<string, string>()
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim()
    if (line === '') return
    if (line.startsWith('#')) {
      const type = /^#\s*TYPE\s+(\S+)\s+(\S+)/.exec(line)
      if (type) types.set(type[1]!, type[2]!)
      return
    }
    const match = SAMPLE.exec(line)
    if (!match) throw new Error(`line ${index + 1} is not a sample: ${line.slice(0, 120)}`)
    const labels: Record<string, string> = {}
    const body = match[3] ?? ''
    LABEL.lastIndex = 0
    while (LABEL.lastIndex < body.length) {
      const start = LABEL.lastIndex
      const label = LABEL.exec(body)
      if (!label) throw new Error(`line ${index + 1} has unreadable labels at "${body.slice(start, start + 40)}"`)
      labels[label[1]!] = label[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\')
    }
    const value = parseValue(match[4]!)
    if (value === undefined) throw new Error(`line ${index + 1} has a value that is not a number: ${match[4]}`)
    samples.push({ name: match[1]!, labels, value })
  })
  return { samples, types }
}

/**
 * A sample value as Prometheus reads it (Go's ParseFloat): decimal or exponent numbers, and NaN,
 * Inf and Infinity in any letter case (prom-client writes "Nan").
 */
function parseValue(text: string): number | undefined {
  if (/^nan$/i.test(text)) return NaN
  const infinity = /^([+-]?)inf(inity)?$/i.exec(text)
  if (infinity) return infinity[1] === '-' ? -Infinity : Infinity
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return undefined
  return Number(text)
}

/** Samples of a family: its own name or, for histograms and summaries, the _bucket/_sum/_count series. */
export function familySamples(exposition: Exposition, family: string): Sample[] {
  const names = new Set([family, `${family}_bucket`, `${family}_sum`, `${family}_count`])
  return exposition.samples.filter((s) => names.has(s.name))
}
