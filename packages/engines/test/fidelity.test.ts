import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import { hasAssimpCli } from '../../../test/support/assimp-info.ts'
import { loadPlatform } from '../src/index.ts'
import {
  EXPECTED,
  expectedOutcome,
  FIDELITY_INPUTS,
  type FidelityCase,
  KINDS,
  matrixSection,
  missingInputs,
  renderMatrix,
  runFidelity,
  TARGETS,
} from './support/fidelity.ts'

const missing = missingInputs()
const cli = hasAssimpCli()
const available = missing.length === 0 && cli
if (!available) {
  const why = cli
    ? `corpus files missing: ${missing.join(', ')} (install assimp-testmodels)`
    : 'the assimp command is missing (assimp-utils)'
  if (process.env.REQUIRE_CORPUS === '1') throw new Error(why)
  console.warn(`[skip] fidelity: ${why}`)
}

const GEOMETRY = ['triangles', 'lines', 'points', 'point clouds'] as const

// Issue #20's fidelity check: every input of the corpus subset to every target, read back by assimp and glTF-Validator.
describe.skipIf(!available)(`fidelity: ${FIDELITY_INPUTS.length} assimp corpus files × ${TARGETS.length} targets`, () => {
  let cases: FidelityCase[] = []
  beforeAll(async () => {
    cases = await runFidelity(await loadPlatform())
  }, 600_000)

  for (const input of FIDELITY_INPUTS) {
    for (const target of TARGETS) {
      it(`${input.name} → ${target}: each kind kept or named in the notes; valid glTF`, () => {
        const c = cases.find((one) => one.input === input.name && one.target === target)!
        if (c.refused) {
          // Refused only when the target holds none of the model's geometry, saying what it holds.
          expect(c.refused).toMatch(/ holds only .*; this model has only /)
          for (const kind of GEOMETRY) if (c.has[kind] > 0) expect(EXPECTED[target][kind], kind).not.toBe('kept')
          return
        }
        const expected = Object.fromEntries(
          KINDS.filter((kind) => c.has[kind] > 0).map((kind) => [kind, expectedOutcome(input.name, target, kind)]),
        )
        expect({ outcomes: c.outcomes, notes: c.notes }).toEqual({ outcomes: expected, notes: c.notes })
        expect(c.validatorErrors).toEqual([])
      })
    }
  }

  it('docs/formats.md holds the matrix this run gives (npm run fidelity-matrix -w @mos/engines rewrites it)', () => {
    const page = readFileSync(fileURLToPath(new URL('../../../docs/formats.md', import.meta.url)), 'utf8')
    expect(matrixSection(page)).toBe(renderMatrix(cases).trim())
  })
})
