import { defineConfig } from 'tsdown'

// Publishing build only: inside the monorepo everything runs from source (exports → src/*.ts).
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
