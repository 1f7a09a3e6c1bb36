/**
 * Child process of the database store fault tests: one app instance writing into a SQLite file or
 * a Postgres database through the public store API.
 *
 * Usage: node --import tsx db-child.ts <sqlite|postgres> <file or connection string> <count> <tag>
 * Writes `count` records (`<tag> fact <n>`) and prints `done <count>`; with count `forever`, writes
 * until killed and prints `ack <n>` after each acknowledged write.
 */
import { postgresMemoryStore, sqliteMemoryStore } from '../../../src/capabilities/index.ts'

const [kind, where, count, tag] = process.argv.slice(2) as [string, string, string, string]
const factory = kind === 'sqlite' ? sqliteMemoryStore({ file: where, busyTimeoutMs: 20000 }) : postgresMemoryStore({ connectionString: where })
const adapter = factory.create()
const target = { store: 'agent', scope: { agent: 'support', user: 'alice' } }
const audit = { via: 'api', agent: 'support' }
if (count === 'forever') {
  for (let n = 0; ; n++) {
    await adapter.append(target, { kind: 'semantic', content: `${tag} fact ${n}` }, { audit })
    process.stdout.write(`ack ${n}\n`)
  }
}
for (let n = 0; n < Number(count); n++) await adapter.append(target, { kind: 'semantic', content: `${tag} fact ${n}` }, { audit })
await factory.close()
process.stdout.write(`done ${count}\n`)
