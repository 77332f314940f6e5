import type {
  CapabilitiesA,
  CapabilitiesB,
  HealthA,
  HealthB,
  LicenseInfoA,
  LicenseInfoB,
  LicenseVerifyA,
  LicenseVerifyB,
} from './documents.ts'
import {
  capabilitiesSchemaA,
  capabilitiesSchemaB,
  healthSchemaA,
  healthSchemaB,
  licenseInfoSchemaA,
  licenseInfoSchemaB,
  licenseVerifySchemaA,
  licenseVerifySchemaB,
} from './documents.ts'
import type { Variant } from './vocabulary.ts'

/** The documents whose shape depends on the variant, keyed by variant for typed clients. */
export interface VariantDocuments {
  A: { health: HealthA; capabilities: CapabilitiesA; licenseInfo: LicenseInfoA; licenseVerify: LicenseVerifyA }
  B: { health: HealthB; capabilities: CapabilitiesB; licenseInfo: LicenseInfoB; licenseVerify: LicenseVerifyB }
}

/** Runtime schemas of the variant-dependent documents. */
export const VARIANT_SCHEMAS = {
  A: { health: healthSchemaA, capabilities: capabilitiesSchemaA, licenseInfo: licenseInfoSchemaA, licenseVerify: licenseVerifySchemaA },
  B: { health: healthSchemaB, capabilities: capabilitiesSchemaB, licenseInfo: licenseInfoSchemaB, licenseVerify: licenseVerifySchemaB },
} as const satisfies Record<Variant, Record<keyof VariantDocuments['A'], unknown>>
