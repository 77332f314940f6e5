import type { Check } from '../check.ts'
import { authChecks } from './auth.ts'
import { batchChecks } from './batch.ts'
import { capabilitiesChecks } from './capabilities.ts'
import { compressChecks } from './compress.ts'
import { convertChecks } from './convert.ts'
import { downloadChecks } from './download.ts'
import { fieldChecks } from './fields.ts'
import { headChecks } from './head.ts'
import { healthChecks } from './health.ts'
import { licenseChecks } from './license.ts'
import { limitChecks } from './limits.ts'
import { metricsChecks } from './metrics.ts'
import { notFoundChecks } from './not-found.ts'
import { diagnoseChecks, repairChecks } from './repair-diagnose.ts'
import { reservedChecks } from './reserved.ts'
import { taskControlChecks } from './task-control.ts'
import { textureChecks } from './textures.ts'

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
  ...headChecks,
  ...convertChecks,
  ...repairChecks,
  ...diagnoseChecks,
  ...textureChecks,
  ...batchChecks,
  ...taskControlChecks,
  ...licenseChecks,
  ...metricsChecks,
  ...limitChecks,
]
