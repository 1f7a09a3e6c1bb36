/**
 * `npm run bench:hybrid-stores`: hybrid search (`hybridSearch`, RRF of full text and vectors) over
 * one scope of `--records N` (default 1,000) in the Postgres store, whose vectors live in the
 * `embedding` column (loaded into the in-process exact index by default; scored by Postgres with
 * `scoreInDatabase`), next to the JSONL store (vectors in the log's sidecar, in-process exact
 * index) holding the same lines, same queries, same run.
 * Embeddings: the hashing embedder (1,024 dimensions). Also counts what a second Postgres
 * instance (its own pool) embeds on its first search: only the query.
 *
 * Search timings in `--rounds` (default 5) interleaved rounds of every query per store; min and
 * median of the round p50s are printed, with the Postgres / JSONL ratio.
 */
import pg from 'pg'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { embedMemoryScope } from '../src/memory/embeddings.ts'
import { hybridSearch } from '../src/memory/hybrid-search.ts'
import { EXACT_VECTOR_COLUMN, postgresMemoryStore } from '../src/memory/stores/postgres.ts'
import { workspaceJsonlMemoryStore } from '../src/memory/stores/workspace-jsonl.ts'
import type { MemoryStoreAdapter, MemoryTarget } from '../src/memory/types.ts'
import { createWorkspace } from '../src/workspace/workspace.ts'
import { hashingEmbedder } from './hashing-embedder.ts'

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? fallback : process.argv[at + 1]!
}
const RECORDS = Number(arg('records', '1000'))
const ROUNDS = Number(arg('rounds', '5'))
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5433/postgres'
const target: MemoryTarget = { store: 'agent', scope: { agent: 'bench', user: 'u1' } }
const WORDS = 'tea coffee hiking painting pottery camping music guitar family garden travel book movie running cooking sister brother school work city beach mountain river dinner lunch friend dog cat car train plane'.split(' ')
let seed = 11
const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
const pick = () => WORDS[Math.floor(random() * WORDS.length)]!
const QUERIES = ['hiking in the mountain', 'coffee with a friend', 'what music does the user play', 'dog and cat', 'train travel to the city', 'cooking dinner for family']

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const p50 = (values: number[]) => median(values)

const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 })
const schema = `vam_bench_hybrid_${process.pid}`
await admin.query(`CREATE SCHEMA ${schema}`)
try {
  const url = new URL(DATABASE_URL)
  url.searchParams.set('options', `-c search_path=${schema}`)
  const factory = postgresMemoryStore({ connectionString: url.toString() })
  const postgres = factory.create()
  for (let i = 0; i < RECORDS; i++) await postgres.append(target, { kind: 'semantic', content: `User enjoys ${pick()} and ${pick()} with a ${pick()} near the ${pick()} on the weekend, note ${i}` }, { audit: { via: 'api' } })
  const workspace = createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
  await workspace.append('memory:memory.jsonl', await factory.exportLog())
  const jsonl = await workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', writable: true, workspace })
  const inDatabase = postgresMemoryStore({ connectionString: url.toString(), vectors: { ...EXACT_VECTOR_COLUMN, scoreInDatabase: true } })
  const scored = inDatabase.create()
  const model = hashingEmbedder()
  await embedMemoryScope(postgres, target, model)
  await embedMemoryScope(jsonl, target, model)

  // A second app instance on its own pool: its first hybrid search embeds only the query.
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 })
  const second = postgresMemoryStore({ pool }).create()
  const fresh = hashingEmbedder()
  await hybridSearch(second, target, { query: 'tea by the river', limit: 10 }, { model: fresh })
  await pool.end()

  // `lexical` rows: the same stores' full-text search alone (`adapter.search`), the part of a hybrid search that is not vectors.
  type Subject = [string, MemoryStoreAdapter, 'hybrid' | 'lexical']
  const subjects: Subject[] = [
    ['JSONL (sidecar, in-process index)', jsonl, 'hybrid'], ['Postgres (column, loaded into the in-process index)', postgres, 'hybrid'], ['Postgres scoreInDatabase (real[] cosine in SQL)', scored, 'hybrid'],
    ['JSONL lexical only', jsonl, 'lexical'], ['Postgres lexical only', postgres, 'lexical'],
  ]
  const searchOnce = (adapter: MemoryStoreAdapter, mode: Subject[2], query: string) => (mode === 'hybrid' ? hybridSearch(adapter, target, { query, limit: 10 }, { model }) : adapter.search(target, { query, limit: 10 }))
  const rounds = new Map<string, number[]>(subjects.map(([name]) => [name, []]))
  for (const [, adapter, mode] of subjects) for (const query of QUERIES) await searchOnce(adapter, mode, query)
  for (let round = 0; round < ROUNDS; round++) {
    // Interleaved, the order flipped every round.
    for (const [name, adapter, mode] of round % 2 === 0 ? subjects : [...subjects].reverse()) {
      const times: number[] = []
      for (let repeat = 0; repeat < 5; repeat++) {
        for (const query of QUERIES) {
          const start = performance.now()
          await searchOnce(adapter, mode, query)
          times.push(performance.now() - start)
        }
      }
      rounds.get(name)!.push(p50(times))
    }
  }
  console.log(`hybrid and lexical search, one scope of ${RECORDS} records, 1,024 dimensions, ${ROUNDS} interleaved rounds (p50 per round: min / median)`)
  console.log('| store | p50 min (ms) | p50 median (ms) | ratio to JSONL (median) |')
  console.log('| --- | --- | --- | --- |')
  const base = median(rounds.get(subjects[0]![0])!)
  for (const [name] of subjects) {
    const values = rounds.get(name)!
    console.log(`| ${name} | ${Math.min(...values).toFixed(2)} | ${median(values).toFixed(2)} | ${(median(values) / base).toFixed(2)} |`)
  }
  console.log(`second Postgres instance, first hybrid search: embedded ${fresh.embedded} text(s) (the query); the first instance embedded ${RECORDS} records`)
  await factory.close()
  await inDatabase.close()
}
finally {
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  await admin.end()
}
