import { findOperation, operationFormats } from '@mos/engines'
import type { OperationCatalog } from '../routes/operations.ts'

/**
 * The submit routes' view of the engines' operation registry. Made here, beside the engine pool:
 * `@mos/engines` loads the engines (Node), and the routes only take this interface from the context.
 */
export function engineOperationCatalog(): OperationCatalog {
  return {
    formats: (type) => operationFormats(type),
    acceptsOption(type, key) {
      const schema = findOperation(type)?.options as { shape?: Record<string, unknown> } | undefined
      return schema?.shape !== undefined && key in schema.shape
    },
  }
}
