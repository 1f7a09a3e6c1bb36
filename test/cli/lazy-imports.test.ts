/**
 * `agent --help` loads the command tree only: the modules a command needs (the log engine, search,
 * the MCP bridge, the server routes, the agent host) are imported when that command runs. Checked
 * on the static import graph of src/cli/main.ts (`import type` and `import()` are not edges).
 */
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO_ROOT } from './locomo.ts'

const STATIC_IMPORT = /^import\s+(?!type\s)(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]/gm

/** Every source file of the repository reached from `entry` through static value imports. */
function staticGraph(entry: string): Set<string> {
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
      if (specifier!.startsWith('.')) visit(resolve(dirname(file), specifier!))
    }
  }
  visit(entry)
  return new Set([...seen].map(file => relative(REPO_ROOT, file)))
}

describe('lazy command imports', () => {
  it('the agent command statically imports none of the engine, the MCP bridge, the server or the agent host', () => {
    const reached = [...staticGraph(join(REPO_ROOT, 'src/cli/main.ts'))]
    expect(reached).toContain('src/cli/commands/log.ts')
    const heavy = reached.filter(file => /^src\/(log|search|mcp|server|vite|agent|history)\//.test(file) || (file.startsWith('src/memory/') && file !== 'src/memory/types.ts'))
    expect(heavy).toEqual([])
  })
})
