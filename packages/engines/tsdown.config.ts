import { packageBuild } from '../../scripts/tsdown-package.ts'

// The pool's thread entry is CommonJS by design (src/thread-entry.cjs says why): copied, not compiled.
export default packageBuild({ copy: ['src/thread-entry.cjs'] })
