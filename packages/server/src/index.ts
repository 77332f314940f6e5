// @mos/server: the h3 service.

// Start and stop
export { startServer } from './server.ts'
export type { StartServerOptions, RunningServer } from './server.ts'

// App and context (in-process use, tests)
export { createApp } from './app.ts'
export { createServiceContext } from './context.ts'
export type { ServiceContext, Guard } from './context.ts'

// Configuration
export { loadConfig, listSettings, ConfigError } from './config/load.ts'
export { CONFIG_SCHEMA } from './config/schema.ts'
export type { Config } from './config/schema.ts'

// Licensing (the vendor side: issuing and checking keys; the mos-license CLI)
export { issueLicenseKey, checkLicenseKey, parsePublicKey, LICENSE_KEY_PREFIX } from './licensing/license-key.ts'
export type { LicensePayload, LicenseCheck, LicenseRefusal } from './licensing/license-key.ts'
export { machineId } from './licensing/machine-id.ts'
export { TIER_LIMITS, TRIAL_MAX_FILES } from './licensing/tiers.ts'
export { runLicenseCli, mainLicenseCli } from './cli/license.ts'
