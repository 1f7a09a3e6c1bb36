// Every function, value and type the README and docs/ import from the package is exported by the
// built entry it names (dist/, as a user's app loads it), and no example imports from ./src.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(import.meta.dirname, '../..')
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; exports: Record<string, Record<string, string | Record<string, string>>> }
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter(name => name.endsWith('.md')).map(name => `docs/${name}`)]

/** Functions the docs describe in prose as callable from code (not only in import lines). */
const DOCUMENTED_FUNCTIONS: Record<string, string[]> = {
  './capabilities': ['compactMemoryScope', 'eraseMemoryScope', 'exportMemoryScope', 'importMemoryScope', 'applyMemoryRetention', 'hybridSearch', 'verifyLog', 'compactLog', 'createSearchIndex', 'openMemoryStore'],
}

interface DocImport { page: string; entry: string; name: string; typeOnly: boolean }

/** The named imports from the package in the code blocks of `page`. */
function docImports(page: string): DocImport[] {
  const text = readFileSync(join(ROOT, page), 'utf8')
  const found: DocImport[] = []
  const pattern = new RegExp(`import\\s+(type\\s+)?\\{([^}]*)\\}\\s+from\\s+'(${PACKAGE.name}(?:/[a-z-]+)?)'`, 'g')
  for (const match of text.matchAll(pattern)) {
    const entry = match[3] === PACKAGE.name ? '.' : `.${match[3]!.slice(PACKAGE.name.length)}`
    for (const part of match[2]!.split(',').map(item => item.trim()).filter(Boolean)) {
      const typeOnly = Boolean(match[1]) || part.startsWith('type ')
      found.push({ page, entry, name: part.replace(/^type\s+/, '').split(/\s+as\s+/)[0]!.trim(), typeOnly })
    }
  }
  return found
}

function distFile(entry: string, condition: 'import' | 'types'): string {
  const target = PACKAGE.exports[entry]
  if (!target) throw new Error(`package.json exports no "${entry}"`)
  const spec = target[condition] ?? target.default
  const path = typeof spec === 'string' ? spec : (spec as Record<string, string> | undefined)?.default
  if (!path) throw new Error(`package.json export "${entry}" has no ${condition} file`)
  const file = join(ROOT, path)
  if (!existsSync(file)) throw new Error(`${path} is missing: run \`npm run build\` before the tests (CI does)`)
  return file
}

const imports = PAGES.flatMap(docImports)

describe('public entries', () => {
  it('the docs import at least one name from each entry they use', () => {
    expect(imports.length).toBeGreaterThan(20)
  })

  it('no README or docs example imports from the repository source', () => {
    const offenders = PAGES.filter(page => /from\s+['"](\.\.?\/)+src\//.test(readFileSync(join(ROOT, page), 'utf8')))
    expect(offenders).toEqual([])
  })

  it('every value the docs import is exported by the built entry they name', async () => {
    const missing: string[] = []
    for (const entry of new Set(imports.filter(item => !item.typeOnly).map(item => item.entry))) {
      const module = await import(pathToFileURL(distFile(entry, 'import')).href) as Record<string, unknown>
      for (const { page, name } of imports.filter(item => item.entry === entry && !item.typeOnly)) {
        if (!(name in module)) missing.push(`${page}: ${name} from ${entry}`)
      }
    }
    expect(missing).toEqual([])
  })

  it('every type the docs import is declared by the built entry they name', () => {
    const missing: string[] = []
    for (const { page, entry, name } of imports.filter(item => item.typeOnly)) {
      const declarations = readFileSync(distFile(entry, 'types'), 'utf8')
      if (!new RegExp(`\\b${name}\\b`).test(declarations)) missing.push(`${page}: type ${name} from ${entry}`)
    }
    expect(missing).toEqual([])
  })

  it('every function the docs describe is exported as a function by its entry', async () => {
    const missing: string[] = []
    for (const [entry, names] of Object.entries(DOCUMENTED_FUNCTIONS)) {
      const module = await import(pathToFileURL(distFile(entry, 'import')).href) as Record<string, unknown>
      for (const name of names) if (typeof module[name] !== 'function') missing.push(`${name} from ${entry}`)
    }
    expect(missing).toEqual([])
  })
})
