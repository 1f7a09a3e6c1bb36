/**
 * `npm run bench:recall-stores`: LoCoMo recall of the database stores next to the JSONL store's
 * engine (issue 12, "LoCoMo recall@10 of each database store within 0.02 of the JSONL store's"),
 * with the protocol of bench/recall.ts (one record per observation, one scope per conversation,
 * categories 1 to 4 with evidence, queries passed unchanged, default ranking). Postgres runs when
 * DATABASE_URL (or a server on 127.0.0.1:5433) answers. Writes bench/results/recall-stores.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { inMemoryMemoryStore } from '../src/memory/stores/in-memory.ts'
import { postgresMemoryStore } from '../src/memory/stores/postgres.ts'
import { sqliteMemoryStore } from '../src/memory/stores/sqlite.ts'
import type { MemoryStoreAdapter, MemoryTarget } from '../src/memory/types.ts'
import { loadLocomo } from './locomo.ts'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const FILES = ['conv-26', 'conv-30', 'conv-41']
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5433/postgres'
const conversations = FILES.map(file => loadLocomo(resolve(root, '../shared/data/locomo', `${file}.json`), file))

async function recall(name: string, adapter: MemoryStoreAdapter) {
  let questions = 0, hit5 = 0, hit10 = 0
  for (const conversation of conversations) {
    const target: MemoryTarget = { store: 'locomo', scope: { user: conversation.id } }
    for (const input of conversation.records) await adapter.append(target, input, { audit: { via: 'import' } })
    for (const question of conversation.questions) {
      const hits = await adapter.search(target, { query: question.question, limit: 10 })
      const rank = hits.findIndex(hit => (hit.record.metadata.evidence as string[]).some(id => question.evidence.has(id)))
      questions++
      if (rank !== -1 && rank < 5) hit5++
      if (rank !== -1) hit10++
    }
  }
  return { store: name, questions, recall5: hit5 / questions, recall10: hit10 / questions }
}

const dir = mkdtempSync(join(tmpdir(), 'vam-recall-stores-'))
const context = { store: 'locomo', agent: 'bench', writable: true }
const rows = [
  await recall('inMemoryMemoryStore (the JSONL engine)', await inMemoryMemoryStore().create(context)),
  await recall('sqliteMemoryStore', sqliteMemoryStore({ file: join(dir, 'recall.db') }).create()),
]
const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 })
admin.on('error', () => {})
if (await admin.query('SELECT 1').then(() => true, () => false)) {
  const schema = `vam_recall_${process.pid}`
  await admin.query(`CREATE SCHEMA ${schema}`)
  const url = new URL(DATABASE_URL)
  url.searchParams.set('options', `-c search_path=${schema}`)
  const factory = postgresMemoryStore({ connectionString: url.toString() })
  rows.push(await recall('postgresMemoryStore', factory.create()))
  await factory.close()
  await admin.query(`DROP SCHEMA ${schema} CASCADE`)
}
await admin.end()
const base = rows[0]!
console.log('| store | recall@5 | recall@10 | recall@10 − JSONL engine |')
console.log('| --- | --- | --- | --- |')
for (const row of rows) console.log(`| ${row.store} | ${row.recall5.toFixed(3)} | ${row.recall10.toFixed(3)} | ${(row.recall10 - base.recall10).toFixed(3)} |`)
const out = join(root, 'bench/results/recall-stores.json')
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), rows }, null, 2)}\n`)
rmSync(dir, { recursive: true, force: true })
