/**
 * Child process of the store fault tests: one app instance writing into a SQLite file, a Postgres
 * database or the JSONL log of a workspace folder through the public store API.
 *
 * Usage: node --import tsx db-child.ts <sqlite|postgres|jsonl> <file, connection string or folder> <count> <tag>
 * Writes `count` records (`<tag> fact <n>`) and prints `done <count>`; with count `forever`, writes
 * until killed and prints `ack <n>` after each acknowledged write.
 */
import { postgresMemoryStore, sqliteMemoryStore, workspaceJsonlMemoryStore } from '../../../src/capabilities/index.ts'
import { createWorkspace } from '../../../src/index.ts'

const [kind, where, count, tag] = process.argv.slice(2) as [string, string, string, string]
const factory = kind === 'jsonl'
  ? { create: () => workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace: createWorkspace({ dir: where }), writable: true }), close: async () => {} }
  : kind === 'sqlite' ? sqliteMemoryStore({ file: where, busyTimeoutMs: 20000 }) : postgresMemoryStore({ connectionString: where })
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
