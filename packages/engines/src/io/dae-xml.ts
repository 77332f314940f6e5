/** Text helpers shared by the COLLADA writer's modules. */

/** A COLLADA `<source>`: a float (or name) array and the accessor reading it in `params` per element. */
export function daeSource(id: string, values: ArrayLike<number> | string[], params: [name: string, type: string][]): string {
  const stride = params[0]?.[1] === 'float4x4' ? 16 : params.length
  const array = Array.isArray(values) && typeof values[0] === 'string' ? 'Name_array' : 'float_array'
  const body = array === 'Name_array' ? (values as string[]).join(' ') : join(values as ArrayLike<number>)
  return [
    `<source id="${id}"><${array} id="${id}-array" count="${values.length}">${body}</${array}>`,
    `<technique_common><accessor source="#${id}-array" count="${values.length / stride}" stride="${stride}">`,
    params.map(([name, type]) => `<param name="${name}" type="${type}"/>`).join(''),
    '</accessor></technique_common></source>',
  ].join('')
}

export function join(values: ArrayLike<number>): string {
  const parts = new Array<string>(values.length)
  for (let i = 0; i < values.length; i++) parts[i] = num(values[i]!)
  return parts.join(' ')
}

/**
 * Short text that reads back to the same float32 (the values come from float32 arrays): 7 or 8
 * significant digits nearly always do, not the 17 `String()` writes for a float32 held in a double;
 * trailing zeros go, so 0.5 stays "0.5". Keeps files smaller and faster to read back.
 */
export function num(value: number): string {
  if (Number.isInteger(value)) return String(value)
  if (!Number.isFinite(value)) return '0'
  const single = Math.fround(value)
  for (let precision = 7; precision < 9; precision++) {
    const short = Number(value.toPrecision(precision))
    if (Math.fround(short) === single) return String(short)
  }
  return String(Number(value.toPrecision(9)))
}

export function attr(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

export function text(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}
