// Prints, as JSON, every event a document's graph and one of its nodes deliver to listeners while a
// node is created, changed and disposed; with `--skip-unheard`, after installing skipUnheardGraphEvents.
import { Document } from '@gltf-transform/core'
import { skipUnheardGraphEvents } from '../../src/graph-events.ts'

type Listening = { addEventListener(type: string, listener: (event: Record<string, unknown>) => void): void }
const name = (target: unknown) => (target as { getName?: () => string }).getName?.() ?? '?'

if (process.argv.includes('--skip-unheard') && !skipUnheardGraphEvents()) throw new Error('not installed')
const doc = new Document()
const seen: string[] = []
const graph = doc.getGraph() as unknown as Listening
for (const type of ['node:create', 'node:change', 'node:dispose'])
  graph.addEventListener(type, (e) => seen.push(`graph ${e.type} ${name(e.target)} ${e.attribute ?? ''}`))
const node = doc.createNode('a')
;(node as unknown as Listening).addEventListener('change', (e) => seen.push(`node ${e.type} ${e.target === node} ${e.attribute ?? ''}`))
node.setTranslation([1, 2, 3])
doc.createMesh('m')
node.setMesh(doc.getRoot().listMeshes()[0]!)
node.dispose()
process.stdout.write(JSON.stringify(seen))
