import {
  IMPLEMENTED_TASK_TYPES,
  OPERATION_ENDPOINTS,
  implementedEndpoints,
  type ParseResult,
  type TaskType,
  type Variant,
} from '@mos/sdk/contract'
import type { ServiceContext } from '../context.ts'
import type { SubmitRoute } from './submit.ts'

/**
 * What the submit routes need of the engines' operation registry. The context hands it in
 * (`context/operation-catalog.ts`): the engines stay on Node, the routes on web standards.
 */
export interface OperationCatalog {
  /** Input formats (lower-case extensions) an operation reads. */
  formats(type: TaskType): readonly string[]
  /** Whether the operation's option schema has `key`. */
  acceptsOption(type: TaskType, key: string): boolean
}

/**
 * Texture jobs carry the tier's per-image limit (bytes; negative = unlimited): added to the jobs of
 * every operation whose engine options take it, so a new texture operation gets it by declaring it.
 */
export function withTextureLimit(
  type: TaskType,
  parsed: ParseResult<object>,
  ctx: ServiceContext,
  catalog: OperationCatalog,
): ParseResult<object> {
  return parsed.ok && catalog.acceptsOption(type, 'maxTextureBytes')
    ? { ok: true, value: { ...parsed.value, maxTextureBytes: ctx.limits().maxTextureBytes } }
    : parsed
}

/**
 * The submit endpoints this deployment serves, per variant: the contract's table
 * (`OPERATION_ENDPOINTS`: path, field rules) with the engines' registry for the input formats.
 * The validated fields go to the engine as they are, in the contract's names.
 */
export function submitRoutes(variant: Variant, catalog: OperationCatalog): SubmitRoute[] {
  return implementedEndpoints(variant).map((endpoint) => ({
    type: endpoint.type,
    path: endpoint.path,
    formats: () => catalog.formats(endpoint.type),
    parseFields: (raw, ctx) => withTextureLimit(endpoint.type, endpoint.parseFields(variant, raw), ctx, catalog),
  }))
}

/** Operations a variant reserves: their endpoints answer 501 (section 4.6, 4.8). */
export const RESERVED_ROUTES: Record<Variant, { path: string; what: TaskType }[]> = {
  A: reservedRoutes('A'),
  B: reservedRoutes('B'),
}

function reservedRoutes(variant: Variant): { path: string; what: TaskType }[] {
  return OPERATION_ENDPOINTS.filter((endpoint) => !IMPLEMENTED_TASK_TYPES[variant].includes(endpoint.type)).map((endpoint) => ({
    path: endpoint.path,
    what: endpoint.type,
  }))
}
