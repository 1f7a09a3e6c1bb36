/**
 * `npm run bench:retention-stores`: what retention costs on each store, same data, same run.
 *
 * - `eraseMemoryScope` of one scope of 100 records in a store of `--records N` (default 5,000)
 *   records: the JSONL store (fs workspace; one compaction rewrites the log), SQLite (one
 *   transaction, then the FTS5 rewrite and a WAL checkpoint), Postgres (one transaction, then
 *   VACUUM and the GIN index rebuild). The same lines are loaded into each (`importLog`). One
 *   scope per round, `--rounds` (default 3) rounds, the stores interleaved: min and median.
 * - append p50 through a Postgres store with `retention.maxItems` (one more transaction per
 *   write) against the same store without, 100 appends per round, interleaved.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { resolveMemoryStore } from '../src/memory/capability.ts'
import { eraseMemoryScope } from '../src/memory/retention.ts'
import { parseMemoryOptions } from '../src/memory/schemas.ts'
import { postgresMemoryStore } from '../src/memory/stores/postgres.ts'
import { sqliteMemoryStore } from '../src/memory/stores/sqlite.ts'
import { workspaceJsonlMemoryStore } from '../src/memory/stores/workspace-jsonl.ts'
import type { MemoryStoreAdapter, MemoryStoreFactory, MemoryTarget } from '../src/memory/types.ts'
import { createWorkspace } from '../src/workspace/workspace.ts'

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? fallback : process.argv[at + 1]!
}
const RECORDS = Number(arg('records', '5000'))
const ROUNDS = Number(arg('rounds', '3'))
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5433/postgres'
const scope = (i: number): MemoryTarget => ({ store: 'agent', scope: { agent: 'bench', user: `u${i}` } })
const audit = { via: 'api' }
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const WORDS = 'tea coffee hiking painting pottery camping music guitar family garden travel book movie running cooking sister brother school work city beach mountain river dinner lunch friend dog cat car train plane'.split(' ')
let seed = 7
const pick = () => WORDS[(seed = (seed * 1103515245 + 12345) & 0x7fffffff) % WORDS.length]!

const dir = mkdtempSync(join(tmpdir(), 'vam-bench-retention-'))
const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 })
const schema = `vam_bench_retention_${process.pid}`
await admin.query(`CREATE SCHEMA ${schema}`)
const url = new URL(DATABASE_URL)
url.searchParams.set('options', `-c search_path=${schema}`)
try {
  const workspace = createWorkspace({ dir: join(dir, 'jsonl') })
  const jsonl = await workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', writable: true, workspace })
  for (let i = 0; i < RECORDS; i++) await jsonl.append(scope(i % (RECORDS / 100)), { kind: 'semantic', content: `User enjoys ${pick()} and ${pick()} near the ${pick()}, note ${i}` }, { audit })
  const text = readFileSync(join(dir, 'jsonl', 'memory', 'memory.jsonl'), 'utf8')
  const sqlite = sqliteMemoryStore({ file: join(dir, 'memory.db') })
  await sqlite.importLog(text)
  const postgres = postgresMemoryStore({ connectionString: url.toString() })
  await postgres.importLog(text)

  const stores: Array<[string, MemoryStoreAdapter]> = [['JSONL (fs)', jsonl], ['SQLite', sqlite.create()], ['Postgres', postgres.create()]]
  const erase = new Map<string, number[]>(stores.map(([name]) => [name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, adapter] of round % 2 === 0 ? stores : [...stores].reverse()) {
      const start = performance.now()
      const report = await eraseMemoryScope(adapter, scope(round), { audit: { via: 'cli' }, workspace: createWorkspace({ storage: createStorage({ driver: memoryDriver() }) }) })
      erase.get(name)!.push(performance.now() - start)
      if (report.erased !== 100) throw new Error(`${name} erased ${report.erased}`)
    }
  }
  console.log(`eraseMemoryScope of 100 records in a store of ${RECORDS} (${ROUNDS} rounds, interleaved)`)
  console.log('| store | min (ms) | median (ms) | ratio to JSONL (median) |')
  console.log('| --- | --- | --- | --- |')
  const base = median(erase.get('JSONL (fs)')!)
  for (const [name] of stores) console.log(`| ${name} | ${Math.min(...erase.get(name)!).toFixed(1)} | ${median(erase.get(name)!).toFixed(1)} | ${(median(erase.get(name)!) / base).toFixed(2)} |`)

  const [config] = parseMemoryOptions({ stores: { agent: { scope: { agent: 'bench', user: 'ret' }, adapter: postgres as MemoryStoreFactory, retention: { maxItems: 50 } } } })
  const resolved = await resolveMemoryStore(config!, { agent: 'bench', run: { runId: 'r', threadId: 't' }, user: { id: 'ret' }, metadata: {}, workspace: createWorkspace({ storage: createStorage({ driver: memoryDriver() }) }), writable: true })
  const appenders: Array<[string, MemoryStoreAdapter]> = [['Postgres append', postgres.create()], ['Postgres append, retention.maxItems 50', resolved!.adapter]]
  const appends = new Map<string, number[]>(appenders.map(([name]) => [name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, adapter] of round % 2 === 0 ? appenders : [...appenders].reverse()) {
      const times: number[] = []
      for (let i = 0; i < 100; i++) {
        const start = performance.now()
        await adapter.append({ store: 'agent', scope: { agent: 'bench', user: 'ret' } }, { kind: 'semantic', content: `retained note ${round} ${i} ${pick()}` }, { audit })
        times.push(performance.now() - start)
      }
      appends.get(name)!.push(median(times))
    }
  }
  console.log(`append p50 (100 appends per round, ${ROUNDS} rounds, interleaved; min / median of the round p50s)`)
  console.log('| subject | min (ms) | median (ms) | ratio |')
  console.log('| --- | --- | --- | --- |')
  const plain = median(appends.get('Postgres append')!)
  for (const [name] of appenders) console.log(`| ${name} | ${Math.min(...appends.get(name)!).toFixed(2)} | ${median(appends.get(name)!).toFixed(2)} | ${(median(appends.get(name)!) / plain).toFixed(2)} |`)
  await sqlite.close()
  await postgres.close()
}
finally {
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  await admin.end()
  rmSync(dir, { recursive: true, force: true })
}
