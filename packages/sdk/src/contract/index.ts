// @mos/sdk/contract: the zero-I/O source of truth for both variants of the HTTP interface.

// Vocabulary: variants, task types, engines, formats
export * from './vocabulary.ts'

// Error texts of section 7
export * from './errors.ts'

// Request fields: specs, validation, option types
export * from './fields.ts'
export * from './presets.ts'

// Submit endpoints: the table the server's routes and the SDK's calls are built from
export * from './operations.ts'

// Response documents: schemas and types
export * from './documents.ts'
export * from './task-reports.ts'
export * from './variant-documents.ts'

// Task control (Mos extension): list, cancel, delete
export * from './task-control.ts'

// OpenAPI 3.1 documents of both variants, generated from the declarations above
export * from './openapi.ts'
export * from './openapi-routes.ts'

// Licence vocabulary: tiers, limits, statuses
export * from './licensing.ts'

// Mos extensions beyond the contract: long poll, idempotency keys, webhooks
export * from './extensions.ts'
