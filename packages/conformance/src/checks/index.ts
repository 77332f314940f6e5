import type { Check } from '../check.ts'
import { authChecks } from './auth.ts'
import { batchChecks } from './batch.ts'
import { capabilitiesChecks } from './capabilities.ts'
import { compressChecks, downloadChecks } from './compress.ts'
import { fieldChecks } from './fields.ts'
import { healthChecks } from './health.ts'
import { licenseChecks } from './license.ts'
import { limitChecks } from './limits.ts'
import { metricsChecks } from './metrics.ts'
import { notFoundChecks } from './not-found.ts'
import { operationChecks } from './operations.ts'
import { reservedChecks } from './reserved.ts'

/** Every check, in report order. */
export const ALL_CHECKS: readonly Check[] = [
  ...healthChecks,
  ...capabilitiesChecks,
  ...authChecks,
  ...notFoundChecks,
  ...reservedChecks,
  ...fieldChecks,
  ...compressChecks,
  ...downloadChecks,
  ...operationChecks,
  ...batchChecks,
  ...licenseChecks,
  ...metricsChecks,
  ...limitChecks,
]
