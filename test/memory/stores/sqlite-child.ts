/**
 * Child process of the SQLite two-process test: remembers `count` records into one database file
 * through `sqliteMemoryStore`, then prints `done <count>`. Waits for a `go` file first, so that
 * both children start writing at the same moment.
 *
 * Usage: node --import tsx sqlite-child.ts <database file> <count> <tag> <go file>
 * With tag `erase`, `count` is a record id to hard-delete instead. With tag `unindexed`, the child
 * kills itself with SIGKILL right after its last acknowledged write, before the FTS5 index takes
 * its records (fts-tail.ts). With tag `search`, `count` is a query: prints the ranked hits as JSON
 * lines `[content, score]`.
 */
import { existsSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { sqliteMemoryStore } from '../../../src/capabilities/index.ts'

const [file, count, tag, go] = process.argv.slice(2) as [string, string, string, string]
const factory = sqliteMemoryStore({ file, busyTimeoutMs: 20000 })
const adapter = factory.create()
const target = { store: 'agent', scope: { agent: 'support', user: 'alice' } }
while (!existsSync(go)) await sleep(5)
if (tag === 'erase') {
  await adapter.hardDelete(target, count, { audit: { via: 'api' } })
  await factory.close()
  process.stdout.write('erased\n')
  process.exit(0)
}
if (tag === 'search') {
  for (const hit of await adapter.search(target, { query: count })) process.stdout.write(`${JSON.stringify([hit.record.content, hit.score])}\n`)
  await factory.close()
  process.exit(0)
}
for (let n = 0; n < Number(count); n++) {
  await adapter.append(target, { kind: 'semantic', content: `${tag} fact ${n}` }, { audit: { via: 'api', agent: 'support' } })
}
if (tag === 'unindexed') {
  process.stdout.write(`done ${count}\n`, () => process.kill(process.pid, 'SIGKILL'))
  await sleep(60_000)
}
await factory.close()
process.stdout.write(`done ${count}\n`)
