/** One sample of a Prometheus text exposition. */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** Parses Prometheus text format: the families (`# TYPE`) and every sample line. */
export function parsePrometheus(text: string): { families: Map<string, string>; samples: Sample[] } {
  const families = new Map<string, string>()
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line)
    if (type) families.set(type[1]!, type[2]!)
    if (line === '' || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!
    samples.push({ name: match[1]!, labels, value: Number(match[3]) })
  }
  return { families, samples }
}

/** The value of the one sample with this name and (at least) these labels; undefined when absent. */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
  if (found.length > 1) throw new Error(`${found.length} samples match ${name} ${JSON.stringify(labels)}`)
  return found[0]?.value
}

/** Sum of every sample with this name (across label values). */
export function sampleSum(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0)
}
