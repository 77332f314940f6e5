/**
 * Lists the functions of the packages' sources longer than a bound (default 60 lines), longest
 * first, so a long function is found by a command rather than by review.
 *
 *   npx tsx scripts/long-functions.ts [maxLines]
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'

const ROOT = join(import.meta.dirname, '..')
const maxLines = Number(process.argv[2] ?? 60)

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue
    const path = join(dir, name)
    if (statSync(path).isDirectory()) yield* sourceFiles(path)
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts')) yield path
  }
}

/** A readable name for a function node: its own, its variable's, its property's or its class method's. */
function nameOf(node: ts.Node, file: ts.SourceFile): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isFunctionExpression(node)) && node.name)
    return node.name.getText(file)
  const parent = node.parent
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name) return parent.name.getText(file)
  if (ts.isConstructorDeclaration(node)) return 'constructor'
  return '<anonymous>'
}

const found: { lines: number; where: string; name: string }[] = []
for (const pkg of readdirSync(join(ROOT, 'packages'))) {
  const src = join(ROOT, 'packages', pkg, 'src')
  if (!statSync(src, { throwIfNoEntry: false })?.isDirectory()) continue
  for (const path of sourceFiles(src)) {
    const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true)
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const start = file.getLineAndCharacterOfPosition(node.getStart(file)).line
        const end = file.getLineAndCharacterOfPosition(node.getEnd()).line
        const lines = end - start + 1
        if (lines > maxLines) found.push({ lines, where: `${relative(ROOT, path)}:${start + 1}`, name: nameOf(node, file) })
      }
      ts.forEachChild(node, visit)
    }
    visit(file)
  }
}
found.sort((a, b) => b.lines - a.lines)
for (const { lines, where, name } of found) console.log(`${String(lines).padStart(4)}  ${name}  ${where}`)
console.log(`${found.length} functions over ${maxLines} lines`)
