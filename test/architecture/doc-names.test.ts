// The names the user-facing documentation spells in code font (error codes, environment
// variables, exported constants: `UPPER_SNAKE_CASE`) exist in the code, so a user who reads
// "fails with `CODE`" can match on that code. A renamed code leaves its old name in the docs only.
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

const REPO = fileURLToPath(new URL('../..', import.meta.url))

function files(dir: string, ending: RegExp): string[] {
  return readdirSync(join(REPO, dir), { recursive: true, withFileTypes: true })
    .filter(entry => entry.isFile() && ending.test(entry.name))
    .map(entry => join(entry.parentPath, entry.name))
}

it('every UPPER_SNAKE_CASE name in code font in README.md and docs/ occurs in src, playground, bench or test', () => {
  const docs = [join(REPO, 'README.md'), ...files('docs', /\.md$/)]
  const code = ['src', 'playground', 'bench', 'test'].flatMap(dir => files(dir, /\.(ts|mts|mjs|sh)$/)).map(file => readFileSync(file, 'utf8')).join('\n')
  const missing: string[] = []
  for (const doc of docs) {
    for (const [, name] of readFileSync(doc, 'utf8').matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`/g)) {
      if (!new RegExp(`\\b${name}\\b`).test(code)) missing.push(`${relative(REPO, doc)}: ${name}`)
    }
  }
  expect(docs.length).toBeGreaterThan(10)
  expect([...new Set(missing)]).toEqual([])
})
