import { defineProject } from 'vitest/config'
import { SOURCE_RESOLVE } from '../../vitest.source.ts'

export default defineProject({
  resolve: SOURCE_RESOLVE,
  ssr: { resolve: SOURCE_RESOLVE },
  test: {
    name: 'engines',
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
