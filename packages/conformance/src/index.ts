// @mos/conformance: plain-HTTP checks of any Mos deployment against variant A or B.

// Running the suite
export { runSuite, selectChecks, HarnessError } from './runner.ts'
export type { SuiteOptions, SuiteReport } from './runner.ts'
export { main as runCli, EXIT } from './cli.ts'

// Checks
export { ALL_CHECKS } from './checks/index.ts'
export { PROFILES, REQUIRED_PROFILE, CheckFailure, CheckSkip } from './check.ts'
export type { Check, CheckResult, Outcome, Profile, Settings } from './check.ts'

// Reports
export { toJunitXml } from './report/junit.ts'
export { toJsonReport } from './report/json.ts'

// Fixtures and output inspection (reusable by other test suites)
export { createFixtures } from './fixtures/index.ts'
export type { Fixture, Fixtures } from './fixtures/index.ts'
export { inspectGlb, inspectGltfZip } from './inspect/model.ts'
export { inspectKtx2, sniffImage } from './inspect/image.ts'
