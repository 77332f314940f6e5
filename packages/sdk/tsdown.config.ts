import { defineConfig } from 'tsdown'

// The published package and the monorepo's default resolution (exports → dist/); tests, type checks
// and `npm run dev` read src/ through the `source` export condition.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    node: 'src/node.ts',
    contract: 'src/contract/index.ts',
    cli: 'src/cli/bin.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  // neutral: the main entry must run in browsers and edge runtimes; node: built-ins stay external.
  platform: 'neutral',
  deps: { neverBundle: [/^node:/] },
  target: 'node20',
  clean: true,
  sourcemap: false,
})
