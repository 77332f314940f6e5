import { defineConfig } from 'vitest/config'
import { SummaryLine } from './test/support/summary-line.ts'

export default defineConfig({
  test: {
    projects: ['packages/*'],
    globalSetup: ['./test/support/build-workspace.ts'],
    reporters: ['default', new SummaryLine()],
  },
})
