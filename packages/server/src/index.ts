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
