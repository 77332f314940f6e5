import type { Reporter, TestModule } from 'vitest/node'

/**
 * Ends the run with one plain line, `N passed, N failed, N skipped`: the closing line CI's log reader
 * counts in any language, which vitest's own summary ("Tests  825 passed | 4 skipped (829)") is not.
 * No word before it: "Tests" followed by a number is how node's test runner opens its closing lines
 * ("ℹ tests N"). An unhandled error counts as a failure, as it fails the run.
 */
export class SummaryLine implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    const counts = { passed: 0, failed: unhandledErrors.length, skipped: 0 }
    for (const module of testModules) {
      // A file that failed to load has no tests to count, and still fails the run.
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) counts.failed++
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === 'passed') counts.passed++
        else if (state === 'failed') counts.failed++
        else counts.skipped++
      }
    }
    const line = `${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`
    // On both streams: a log that keeps them apart ends each with the count (the last landing's log
    // was recorded as running no test although stdout ended with this line).
    process.stdout.write(`\n${line}\n`)
    process.stderr.write(`\n${line}\n`)
  }
}
