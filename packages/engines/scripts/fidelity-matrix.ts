// Writes the fidelity matrix of docs/formats.md from a fidelity run (the run the fidelity test checks):
//
//   npm run fidelity-matrix -w @mos/engines            (writes docs/formats.md)
//   npm run fidelity-matrix -w @mos/engines -- --print (prints every case's outcomes, writes nothing)
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadPlatform } from '../src/index.ts'
import { EXPECTED, type Kind, MATRIX_END, MATRIX_START, matrixSection, renderMatrix, runFidelity } from '../test/support/fidelity.ts'

const page = join(fileURLToPath(new URL('../../../docs/formats.md', import.meta.url)))
const platform = await loadPlatform()
const started = Date.now()
const cases = await runFidelity(platform)
if (process.argv.includes('--print')) {
  for (const c of cases) {
    const outcomes = Object.entries(c.outcomes).map(([kind, outcome]) => `${kind}=${outcome}`)
    console.log(
      `${c.input} → ${c.target}: ${c.refused ? `refused: ${c.refused}` : outcomes.join(' ')}${c.validatorErrors.length ? ` VALIDATOR ${c.validatorErrors.slice(0, 3).join('; ')}` : ''}`,
    )
    const unexpected = Object.entries(c.outcomes).filter(([kind, outcome]) => outcome !== EXPECTED[c.target][kind as Kind])
    if (unexpected.length > 0) console.log(`   UNEXPECTED ${unexpected.map(([kind, outcome]) => `${kind}=${outcome}`).join(' ')}`)
    if (unexpected.length > 0)
      console.log(`   has ${JSON.stringify(c.has)}\n   read back ${JSON.stringify(c.readBack)}\n   notes ${JSON.stringify(c.notes)}`)
  }
} else {
  const text = readFileSync(page, 'utf8')
  const matrix = renderMatrix(cases)
  const next =
    matrixSection(text) === undefined
      ? `${text.trimEnd()}\n\n${MATRIX_START}\n${matrix}\n${MATRIX_END}\n`
      : text.replace(/<!-- fidelity-matrix:start -->[\s\S]*<!-- fidelity-matrix:end -->/, `${MATRIX_START}\n${matrix}\n${MATRIX_END}`)
  writeFileSync(page, next)
}
console.error(`${cases.length} conversions in ${((Date.now() - started) / 1000).toFixed(1)} s`)
