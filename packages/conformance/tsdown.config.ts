import { packageBuild } from '../../scripts/tsdown-package.ts'

export default packageBuild()
