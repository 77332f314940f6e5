import { existsSync, readFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { dirname, relative, resolve } from 'node:path'
import ts from 'typescript'

/** What the walk may not meet outside an adapter module. */
export interface ImportRules {
  /** Modules (absolute paths) allowed to touch Node: the walk records them and does not enter them. */
  adapters: ReadonlySet<string>
  /** Packages that need Node (a bare specifier or its subpath), allowed only from adapter modules. */
  nodeOnlyPackages: readonly string[]
  /** Workspace packages walked into through their sources (`@mos/sdk/contract` → its `source` export). */
  workspaceSources?: Readonly<Record<string, string>>
}

export interface ImportViolation {
  /** The importing module, relative to `base`. */
  module: string
  specifier: string
  why: 'node builtin' | 'node-only package'
  /** The chain of modules from an entry to `module`, relative to `base`. */
  via: string[]
}

export interface ImportGraphReport {
  /** Every module reached (adapters included), relative to `base`. */
  reached: string[]
  /** Adapter modules the walk met, relative to `base`. */
  adaptersMet: string[]
  violations: ImportViolation[]
}

const BUILTINS = new Set(builtinModules)
const isBuiltin = (specifier: string) => specifier.startsWith('node:') || BUILTINS.has(specifier.split('/')[0] ?? '')
const packageOf = (specifier: string) =>
  (specifier.startsWith('@') ? specifier.split('/').slice(0, 2) : specifier.split('/').slice(0, 1)).join('/')

/**
 * The specifiers a module imports at run time: static imports and re-exports that are not
 * type-only, and `import('…')` calls. Type-only imports are erased by the compiler and load nothing.
 */
export function runtimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined
      const typeOnly =
        clause !== undefined && (clause.isTypeOnly || (!clause.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly)))
      if (!typeOnly) found.push(node.moduleSpecifier.text)
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier) && !node.isTypeOnly) {
      found.push(node.moduleSpecifier.text)
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments
      if (argument && ts.isStringLiteralLike(argument)) found.push(argument.text)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/**
 * Walks the run-time import graph from `entries` (absolute paths) and reports every Node builtin or
 * Node-only package imported by a module that is not an adapter. Relative imports and the listed
 * workspace sources are followed; other packages are leaves.
 */
export function walkImportGraph(entries: readonly string[], rules: ImportRules, base: string): ImportGraphReport {
  const rel = (file: string) => relative(base, file)
  const parent = new Map<string, string | undefined>(entries.map((entry) => [entry, undefined]))
  const chain = (file: string) => {
    const via: string[] = []
    for (let at: string | undefined = file; at; at = parent.get(at)) via.unshift(rel(at))
    return via
  }
  const queue = [...entries]
  const reached: string[] = []
  const adaptersMet: string[] = []
  const violations: ImportViolation[] = []
  for (let file = queue.shift(); file; file = queue.shift()) {
    reached.push(rel(file))
    if (rules.adapters.has(file)) {
      adaptersMet.push(rel(file))
      continue
    }
    for (const specifier of runtimeImports(file)) {
      const next = specifier.startsWith('.') ? resolve(dirname(file), specifier) : rules.workspaceSources?.[specifier]
      if (next) {
        if (!existsSync(next)) throw new Error(`${rel(file)} imports ${specifier}, which does not resolve to ${rel(next)}`)
        if (!parent.has(next)) {
          parent.set(next, file)
          queue.push(next)
        }
      } else if (isBuiltin(specifier)) {
        violations.push({ module: rel(file), specifier, why: 'node builtin', via: chain(file) })
      } else if (rules.nodeOnlyPackages.includes(packageOf(specifier))) {
        violations.push({ module: rel(file), specifier, why: 'node-only package', via: chain(file) })
      }
    }
  }
  return { reached: reached.sort(), adaptersMet: adaptersMet.sort(), violations }
}
