// Plain Node, no tsx, no vitest: imports the workspace packages by name, as any script inside the
// repository would, and calls each against a running service. Exported conditions give dist/ here.
// Usage: node workspace-imports.mjs BASE_URL API_KEY; prints one JSON line.
import { ALL_CHECKS, runSuite } from '@mos/conformance'
import { detectVariant, NotFoundError } from '@mos/sdk'
import { ERROR_TEXTS, healthSchemaA, healthSchemaB } from '@mos/sdk/contract'
import { createClient, NotFoundError as NodeNotFoundError } from '@mos/sdk/node'

const [baseURL, apiKey] = process.argv.slice(2)
if (!baseURL || !apiKey) {
  console.error('usage: node workspace-imports.mjs BASE_URL API_KEY')
  process.exit(2)
}

const variant = await detectVariant(baseURL)
const client = createClient({ baseURL, apiKey, variant })
const health = (variant === 'A' ? healthSchemaA : healthSchemaB).parse(await client.health())
let missing
try {
  await client.getTask('no-such-task')
} catch (error) {
  missing = { sdkError: error instanceof NotFoundError, sameClass: NotFoundError === NodeNotFoundError, message: error.message }
}
const report = await runSuite({ baseUrl: baseURL, apiKey, variant, include: ['health'] })

console.log(
  JSON.stringify({
    variant,
    health: health.status,
    missing,
    notFoundText: ERROR_TEXTS.taskNotFound('no-such-task'),
    checks: ALL_CHECKS.length,
    conformance: report.summary,
    loader: process.execArgv,
  }),
)
