/**
 * `npm run bench:recall`: the LoCoMo retrieval benchmark of issue 7, following the protocol of
 * `../shared/data/locomo/README.md` through the public store API (`inMemoryMemoryStore()`
 * adapters): each observation is one record (`kind: "semantic"`, content = the fact, tags =
 * [speaker], metadata.evidence = its dia_ids, createdAt = the session date), one scope per
 * conversation; each question of categories 1 to 4 with evidence is one query, passed unchanged.
 * A query is a hit at k when one of the first k results cites one of its evidence dia_ids.
 *
 * Prints recall@5, recall@10, MRR@10 and search latency p50/p95 for the default ranking, the
 * documented substring rule and hybrid (RRF) with a local hashing embedder, then the index's
 * latency at 100,000 synthetic records. Writes the numbers as JSON (default
 * `bench/results/recall.json`, or the path after `--json`). The data is read in place, never copied.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { inMemoryMemoryStore } from '../src/memory/stores/in-memory.ts'
import { createSearchIndex } from '../src/memory/search-index.ts'
import { hybridSearch } from '../src/memory/hybrid-search.ts'
import type { MemoryRecord, MemorySearchHit, MemorySearchQuery, MemoryStoreAdapter, MemoryTarget } from '../src/memory/types.ts'
import { hashingEmbedder } from './hashing-embedder.ts'
import { loadLocomo, type LocomoConversation } from './locomo.ts'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const dataDir = resolve(root, '../shared/data/locomo')
const FILES = ['conv-26', 'conv-30', 'conv-41']
const FLOOR = { recall5: 0.62, recall10: 0.68 }
const GOAL = { recall5: 0.68, recall10: 0.75 }

type Search = (adapter: MemoryStoreAdapter, target: MemoryTarget, query: MemorySearchQuery) => Promise<MemorySearchHit[]>

interface Row { ranking: string; questions: number; recall5: number; recall10: number; mrr10: number; p50Ms: number; p95Ms: number; perConversation: Record<string, { recall5: number; recall10: number }> }

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0
}

async function loadStore(conversation: LocomoConversation): Promise<{ adapter: MemoryStoreAdapter; target: MemoryTarget }> {
  const adapter = await inMemoryMemoryStore().create({ store: 'locomo', agent: 'bench', writable: true })
  const target: MemoryTarget = { store: 'locomo', scope: { user: conversation.id } }
  for (const input of conversation.records) await adapter.append(target, input, { audit: { via: 'import' } })
  return { adapter, target }
}

async function evaluate(ranking: string, conversations: Array<LocomoConversation & { adapter: MemoryStoreAdapter; target: MemoryTarget }>, search: Search): Promise<Row> {
  let questions = 0, hit5 = 0, hit10 = 0, reciprocal = 0
  const latencies: number[] = []
  const perConversation: Row['perConversation'] = {}
  for (const conversation of conversations) {
    let local5 = 0, local10 = 0
    for (const question of conversation.questions) {
      const started = performance.now()
      const hits = await search(conversation.adapter, conversation.target, { query: question.question, limit: 10 })
      latencies.push(performance.now() - started)
      const rank = hits.findIndex(hit => (hit.record.metadata.evidence as string[]).some(id => question.evidence.has(id)))
      questions++
      if (rank !== -1 && rank < 5) { hit5++; local5++ }
      if (rank !== -1 && rank < 10) { hit10++; local10++; reciprocal += 1 / (rank + 1) }
    }
    perConversation[conversation.id] = { recall5: local5 / conversation.questions.length, recall10: local10 / conversation.questions.length }
  }
  return { ranking, questions, recall5: hit5 / questions, recall10: hit10 / questions, mrr10: reciprocal / questions, p50Ms: percentile(latencies, 0.5), p95Ms: percentile(latencies, 0.95), perConversation }
}

function scale(count: number): Array<{ query: string; matches: number; p50Ms: number; p95Ms: number }> {
  const words = ['tea', 'coffee', 'hiking', 'painting', 'pottery', 'camping', 'music', 'guitar', 'family', 'garden', 'travel', 'book', 'movie', 'running', 'cooking']
  let seed = 7
  const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
  const index = createSearchIndex()
  for (let i = 0; i < count; i++) {
    const content = `User ${i % 97} likes ${words[Math.floor(random() * words.length)]} and ${words[Math.floor(random() * words.length)]}; note ${i} about the weekend plan ${i % 13 === 0 ? 'zebra' : ''}`
    index.update({ id: `r${i}`, store: 's', scope: { user: 'u' }, kind: 'semantic', content, tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, audit: { via: 'import' }, createdAt: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(), updatedAt: '2024-01-01T00:00:00Z', version: 1, status: 'active' } as MemoryRecord)
  }
  return [['the weekend plan', 'common terms (every record)'], ['zebra', 'rare term (1 in 13)'], ['tea hiking', 'two mid terms']].map(([query, label]) => {
    const times: number[] = []
    for (let run = 0; run < 30; run++) {
      const started = performance.now()
      index.search({ query: query!, limit: 10 })
      times.push(performance.now() - started)
    }
    return { query: `${query} (${label})`, matches: count, p50Ms: percentile(times, 0.5), p95Ms: percentile(times, 0.95) }
  })
}

const fixed = (value: number, digits = 3) => value.toFixed(digits)

async function main(): Promise<void> {
  const jsonAt = process.argv.indexOf('--json')
  const jsonPath = jsonAt !== -1 && process.argv[jsonAt + 1] ? resolve(process.argv[jsonAt + 1]!) : join(root, 'bench/results/recall.json')
  const conversations = await Promise.all(FILES.map(async (file) => {
    const conversation = loadLocomo(join(dataDir, `${file}.json`), file)
    return { ...conversation, ...(await loadStore(conversation)) }
  }))
  const embedder = hashingEmbedder()
  const rows = [
    await evaluate('default (ranked BM25F)', conversations, (adapter, target, query) => adapter.search(target, query)),
    await evaluate('substring rule (search.mode "substring")', conversations, (adapter, target, query) => adapter.search(target, { ...query, mode: 'substring' })),
    await evaluate('hybrid RRF, local hashing embedder', conversations, (adapter, target, query) => hybridSearch(adapter, target, query, { model: embedder })),
  ]
  console.log(`LoCoMo retrieval, ${rows[0]!.questions} questions (categories 1-4 with evidence) over ${conversations.reduce((sum, c) => sum + c.records.length, 0)} observation records in ${conversations.length} scopes`)
  console.log('| ranking | recall@5 | recall@10 | MRR@10 | p50 ms | p95 ms |')
  console.log('| --- | --- | --- | --- | --- | --- |')
  for (const row of rows) console.log(`| ${row.ranking} | ${fixed(row.recall5)} | ${fixed(row.recall10)} | ${fixed(row.mrr10)} | ${fixed(row.p50Ms, 2)} | ${fixed(row.p95Ms, 2)} |`)
  const ranked = rows[0]!
  console.log(`default vs floor (${FLOOR.recall5}/${FLOOR.recall10}): recall@5 ×${fixed(ranked.recall5 / FLOOR.recall5, 2)}, recall@10 ×${fixed(ranked.recall10 / FLOOR.recall10, 2)}; vs goal (${GOAL.recall5}/${GOAL.recall10}): ×${fixed(ranked.recall5 / GOAL.recall5, 2)}, ×${fixed(ranked.recall10 / GOAL.recall10, 2)}`)
  for (const row of rows) console.log(`  ${row.ranking}: ${Object.entries(row.perConversation).map(([id, r]) => `${id} ${fixed(r.recall5)}/${fixed(r.recall10)}`).join(', ')}`)
  const scaleRows = scale(100_000)
  console.log('Index at 100,000 records (createSearchIndex, limit 10):')
  console.log('| query | p50 ms | p95 ms |')
  console.log('| --- | --- | --- |')
  for (const row of scaleRows) console.log(`| ${row.query} | ${fixed(row.p50Ms, 2)} | ${fixed(row.p95Ms, 2)} |`)
  mkdirSync(dirname(jsonPath), { recursive: true })
  writeFileSync(jsonPath, `${JSON.stringify({ date: new Date().toISOString(), floor: FLOOR, goal: GOAL, rows, scale: scaleRows }, null, 2)}\n`)
  console.log(`JSON: ${jsonPath}`)
}

await main()
