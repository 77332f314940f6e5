import {
  ENGINES,
  extensionFieldNames,
  MODEL_FORMATS,
  OUTPUT_FORMATS,
  TIER_NUMBER,
  type CapabilitiesA,
  type CapabilitiesB,
} from '@mos/sdk/contract'
import type { ServiceContext } from '../context.ts'
import { submitRoutes } from './operations.ts'

/**
 * GET /api/v1/capabilities: the variant's capabilities document (2.6). Features list only the
 * operations this deployment really serves; `mos_extensions` (a key of Mos's own) lists the
 * extension fields each operation accepts.
 */
export function capabilitiesDocument(ctx: ServiceContext): CapabilitiesA | CapabilitiesB {
  const mos_extensions = extensionFieldNames(ctx.variant)
  if (ctx.variant === 'A') {
    return {
      engines: [...ENGINES],
      formats: [...MODEL_FORMATS],
      features: submitRoutes('A', ctx.processing.operations).map((route) => route.type),
      mos_extensions,
    }
  }
  return {
    engines: ctx.processing.engines,
    formats: { input: [...MODEL_FORMATS], output: [...OUTPUT_FORMATS.B] },
    license: licenseSummary(ctx),
    mos_extensions,
  }
}

/** The B capabilities' licence summary: the licence in force. */
function licenseSummary(ctx: ServiceContext): CapabilitiesB['license'] {
  const state = ctx.access.licensing.state()
  return { authorized: state.status === 'active', tier: TIER_NUMBER[state.tier], status: state.status }
}
