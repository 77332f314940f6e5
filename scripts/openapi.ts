// Writes docs/openapi/variant-a.json and variant-b.json, the OpenAPI 3.1 documents generated from
// @mos/sdk/contract (the same ones the service serves at /api/v1/openapi.json, for its default
// settings). packages/server/test/openapi.test.ts fails while they are not current.
// Run: npm run openapi
import { mkdir, writeFile } from 'node:fs/promises'
import { openApiFiles } from '../packages/server/src/routes/openapi-files.ts'

const root = new URL('../', import.meta.url)
for (const file of openApiFiles()) {
  const target = new URL(file.path, root)
  await mkdir(new URL('./', target), { recursive: true })
  await writeFile(target, file.text)
  console.log(`wrote ${file.path}`)
}
