/**
 * `npm run bench:hybrid-stores`: hybrid search (`hybridSearch`, RRF of full text and vectors) over
 * one scope of `--records N` (default 1,000) in the Postgres store, whose vectors live in the
 * `embedding` column (loaded into the in-process exact index by default; scored by Postgres with
 * `scoreInDatabase`), next to the JSONL store (vectors in the log's sidecar, in-process exact
 * index) holding the same lines, same queries, same run.
 * Embeddings: the hashing embedder (`--dims`, default 1,024 dimensions). Also counts what a
 * second Postgres instance (its own pool) embeds on its first search: only the query.
 *
 * `--in-database off` leaves out the scoreInDatabase rows. `--baseline <dir>`: a source tree of another version of this package (for example
 * `git archive <commit> src | tar -x -C <dir>`); its `hybridSearch` is timed too, on the same
 * adapters and records, interleaved with this one (the "before" rows).
 *
 * Search timings in `--rounds` (default 5) interleaved rounds of every query per subject (the
 * order flipped every round); min and median of the round p50s are printed, wall clock and this
 * process's CPU time, with the ratio to the JSONL row. The first search of each subject (which
 * reads the scope and fills the index) is printed apart.
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import pg from 'pg'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { embedMemoryScope } from '../src/memory/embeddings.ts'
import { formatMemoryLine } from '../src/memory/event-log.ts'
import { hybridSearch } from '../src/memory/hybrid-search.ts'
import { currentInstant, newRecordId, type MemoryEventDraft } from '../src/memory/records.ts'
import { EXACT_VECTOR_COLUMN, postgresMemoryStore } from '../src/memory/stores/postgres.ts'
import { workspaceJsonlMemoryStore } from '../src/memory/stores/workspace-jsonl.ts'
import type { MemoryStoreAdapter, MemoryTarget } from '../src/memory/types.ts'
import { sha256HexSync } from '../src/log/digest.ts'
import { createWorkspace } from '../src/workspace/workspace.ts'
import { hashingEmbedder, HASHING_DIMENSIONS } from './hashing-embedder.ts'

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? fallback : process.argv[at + 1]!
}
const RECORDS = Number(arg('records', '1000'))
const ROUNDS = Number(arg('rounds', '5'))
const DIMENSIONS = Number(arg('dims', String(HASHING_DIMENSIONS)))
const BASELINE = arg('baseline', '')
// `--in-database off`: leave out the scoreInDatabase rows (each search scans every row in SQL: seconds at 100,000 records).
const IN_DATABASE = arg('in-database', 'on') !== 'off'
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5433/postgres'
const target: MemoryTarget = { store: 'agent', scope: { agent: 'bench', user: 'u1' } }
const WORDS = 'tea coffee hiking painting pottery camping music guitar family garden travel book movie running cooking sister brother school work city beach mountain river dinner lunch friend dog cat car train plane'.split(' ')
let seed = 11
const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
const pick = () => WORDS[Math.floor(random() * WORDS.length)]!
const QUERIES = ['hiking in the mountain', 'coffee with a friend', 'what music does the user play', 'dog and cat', 'train travel to the city', 'cooking dinner for family']

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

type HybridSearch = typeof hybridSearch
const before: HybridSearch | undefined = BASELINE ? (await import(pathToFileURL(join(BASELINE, 'src/memory/hybrid-search.ts')).href) as { hybridSearch: HybridSearch }).hybridSearch : undefined

/** The records as the lines of one JSONL log, built as the stores build them (imported into both stores). */
async function buildLog(): Promise<string> {
  const hash = (await sha256HexSync())!
  let prev: string | null = null
  const lines: string[] = []
  const at = currentInstant()
  for (let i = 0; i < RECORDS; i++) {
    const draft: MemoryEventDraft = { type: 'remember', recordId: newRecordId(), store: target.store, scope: target.scope, version: 1, at, audit: { via: 'import' }, kind: 'semantic', content: `User enjoys ${pick()} and ${pick()} with a ${pick()} near the ${pick()} on the weekend, note ${i}`, tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, createdAt: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString() }
    const line = formatMemoryLine(draft, i + 1, prev, false, hash)
    prev = line.digest
    lines.push(line.line)
  }
  return `${lines.join('\n')}\n`
}

async function timed(run: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const cpu = process.cpuUsage()
  const start = performance.now()
  await run()
  const wall = performance.now() - start
  const used = process.cpuUsage(cpu)
  return { wall, cpu: (used.user + used.system) / 1000 }
}

const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 })
const schema = `vam_bench_hybrid_${process.pid}`
await admin.query(`CREATE SCHEMA ${schema}`)
try {
  const url = new URL(DATABASE_URL)
  url.searchParams.set('options', `-c search_path=${schema}`)
  const log = await buildLog()
  const factory = postgresMemoryStore({ connectionString: url.toString() })
  await factory.importLog(log)
  const postgres = factory.create()
  const workspace = createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
  await workspace.append('memory:memory.jsonl', log)
  const jsonl = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', writable: true, workspace })
  const inDatabase = postgresMemoryStore({ connectionString: url.toString(), vectors: { ...EXACT_VECTOR_COLUMN, scoreInDatabase: true } })
  const scored = inDatabase.create()
  const model = hashingEmbedder(DIMENSIONS)
  await embedMemoryScope(postgres, target, model)
  await embedMemoryScope(jsonl, target, model)

  // A second app instance on its own pool: its first hybrid search embeds only the query.
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 })
  const second = postgresMemoryStore({ pool }).create()
  const fresh = hashingEmbedder(DIMENSIONS)
  await hybridSearch(second, target, { query: 'tea by the river', limit: 10 }, { model: fresh })
  await pool.end()

  // `lexical` rows: the same stores' full-text search alone (`adapter.search`), the part of a hybrid search that is not vectors.
  interface Subject { name: string; search: (query: string) => Promise<unknown> }
  const hybrid = (name: string, adapter: MemoryStoreAdapter): Subject[] => [
    { name, search: query => hybridSearch(adapter, target, { query, limit: 10 }, { model }) },
    ...(before ? [{ name: `${name}, before (baseline tree)`, search: (query: string) => before(adapter, target, { query, limit: 10 }, { model }) }] : []),
  ]
  const subjects: Subject[] = [
    ...hybrid('JSONL (sidecar, in-process index)', jsonl),
    ...hybrid('Postgres (column, loaded into the in-process index)', postgres),
    ...(IN_DATABASE ? hybrid('Postgres scoreInDatabase (real[] cosine in SQL)', scored) : []),
    { name: 'JSONL lexical only', search: query => jsonl.search(target, { query, limit: 10 }) },
    { name: 'Postgres lexical only', search: query => postgres.search(target, { query, limit: 10 }) },
  ]
  const first = new Map<string, number>()
  for (const subject of subjects) {
    first.set(subject.name, (await timed(() => subject.search(QUERIES[0]!))).wall)
    for (const query of QUERIES) await subject.search(query)
  }
  const rounds = new Map<string, { wall: number[]; cpu: number[] }>(subjects.map(({ name }) => [name, { wall: [], cpu: [] }]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const subject of round % 2 === 0 ? subjects : [...subjects].reverse()) {
      const wall: number[] = []
      const cpu: number[] = []
      for (let repeat = 0; repeat < 5; repeat++) {
        for (const query of QUERIES) {
          const took = await timed(() => subject.search(query))
          wall.push(took.wall)
          cpu.push(took.cpu)
        }
      }
      rounds.get(subject.name)!.wall.push(median(wall))
      rounds.get(subject.name)!.cpu.push(median(cpu))
    }
  }
  console.log(`hybrid and lexical search, one scope of ${RECORDS} records, ${DIMENSIONS} dimensions, ${ROUNDS} interleaved rounds (p50 per round: min / median)`)
  console.log('| subject | first search (ms) | wall p50 min / median (ms) | CPU p50 min / median (ms) | wall ratio to JSONL (median) |')
  console.log('| --- | --- | --- | --- | --- |')
  const base = median(rounds.get(subjects[0]!.name)!.wall)
  for (const { name } of subjects) {
    const { wall, cpu } = rounds.get(name)!
    console.log(`| ${name} | ${first.get(name)!.toFixed(1)} | ${Math.min(...wall).toFixed(2)} / ${median(wall).toFixed(2)} | ${Math.min(...cpu).toFixed(2)} / ${median(cpu).toFixed(2)} | ${(median(wall) / base).toFixed(2)} |`)
  }
  console.log(`second Postgres instance, first hybrid search: embedded ${fresh.embedded} text(s) (the query); the first instance embedded ${RECORDS} records`)
  await factory.close()
  await inDatabase.close()
}
finally {
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  await admin.end()
}
