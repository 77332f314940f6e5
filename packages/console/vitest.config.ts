import { workspaceProject } from '../../vitest.source.ts'

export default workspaceProject('console')
