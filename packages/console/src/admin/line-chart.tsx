/** One series of a small live chart: its values over the last polls. */
export interface Series {
  label: string
  unit: string
  values: number[]
}

const WIDTH = 320
const HEIGHT = 100
const PAD = 4

/**
 * A hand-drawn SVG line chart (no chart library): the series scaled to its own maximum, the
 * latest value in words beside it for readers who do not see the line.
 */
export function LineChart({ series }: { series: Series }) {
  const { values } = series
  const latest = values.at(-1)
  const max = Math.max(1e-9, ...values)
  const step = values.length > 1 ? (WIDTH - 2 * PAD) / (values.length - 1) : 0
  const points = values
    .map((value, index) => `${(PAD + index * step).toFixed(1)},${(HEIGHT - PAD - (value / max) * (HEIGHT - 2 * PAD)).toFixed(1)}`)
    .join(' ')
  const format = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(1))
  return (
    <figure class="chart" data-testid="chart">
      <figcaption>
        {series.label}: <strong>{latest === undefined ? '—' : `${format(latest)} ${series.unit}`}</strong>
        <span class="muted">
          {' '}
          (max {format(max < 1e-6 ? 0 : max)} {series.unit})
        </span>
      </figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`${series.label} over the last ${values.length} readings`}>
        <rect x="0" y="0" width={WIDTH} height={HEIGHT} class="chart-bg" />
        {values.length > 1 ? <polyline points={points} class="chart-line" /> : null}
      </svg>
    </figure>
  )
}
