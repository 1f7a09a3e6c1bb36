// The docs ship in the package (package.json "files"): a path they name must exist for a user of
// the package, so none names the folder beside the repository (`../shared/...`), which does not.
// Transcripts (captured output) keep the commands as typed and say where their files come from.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

const DOCS = fileURLToPath(new URL('../../docs', import.meta.url))

it('no docs page but a captured transcript names a path under ../shared, outside the package', () => {
  const pages = readdirSync(DOCS).filter(name => name.endsWith('.md') && !name.startsWith('transcript-'))
  const outside = pages.flatMap(name => readFileSync(join(DOCS, name), 'utf8').split('\n').flatMap((line, index) => (/(^|[`(\s])(\.\.\/)*shared\/(data|seeds)\//.test(line) ? [`${name}:${index + 1}: ${line.trim()}`] : [])))
  expect(pages).toContain('cli.md')
  expect(outside).toEqual([])
})
