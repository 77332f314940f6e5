import { openApiDocument, VARIANTS } from '@mos/sdk/contract'
import { SERVICE_VERSION } from '../version.ts'

/**
 * The OpenAPI documents kept in the repository (docs/openapi/variant-<a|b>.json): each variant's
 * document for the default settings, as `npm run openapi` writes them and the test compares them.
 */
export function openApiFiles(): { path: string; text: string }[] {
  return VARIANTS.map((variant) => ({
    path: `docs/openapi/variant-${variant.toLowerCase()}.json`,
    text: `${JSON.stringify(openApiDocument(variant, { version: SERVICE_VERSION }), null, 2)}\n`,
  }))
}
