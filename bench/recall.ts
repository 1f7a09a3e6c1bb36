/**
 * `npm run bench:recall`: the LoCoMo retrieval benchmark of issue 7, following the protocol of
 * `../shared/data/locomo/README.md` through the public store API (`inMemoryMemoryStore()`
 * adapters): each observation is one record (`kind: "semantic"`, content = the fact, tags =
 * [speaker], metadata.evidence = its dia_ids, createdAt = the session date), one scope per
 * conversation; each question of categories 1 to 4 with evidence is one query, passed unchanged.
 * A query is a hit at k when one of the first k results cites one of its evidence dia_ids.
 *
 * Prints recall@5, recall@10, MRR@10 and search latency p50/p95 for the default lexical ranking
 * (the protocol's records: `createdAt` = the session date), the same records as an import
 * writes them (`createdAt` = the import time, {@link IMPORTED_AT}) without and with event dates
 * (`occurredAt` = the session date), the documented substring rule, hybrid (RRF) with the local
 * sentence embedder (`localEmbedder()`, when its optional packages are installed; else the
 * hashing stand-in) on the same three kinds of records, hybrid without the neighbour share, and the hashing stand-in;
 * then a sweep of the fusion settings (RRF k, candidate depths, vector weight), exact vector
 * search at 1,000 to 100,000 vectors of 512 dimensions (the JavaScript scan against the usearch
 * kernel, interleaved), and the full-text index's latency at
 * 100,000 synthetic records. Every vector (records and questions) comes through
 * `cachedEmbedder` (bench/cached-embedder.ts: `bench/.cache/embeddings/`, git-ignored), so reruns
 * embed nothing and rank with the same vectors: the recall rows are deterministic. Hybrid latency
 * is therefore the search alone; the model's cost of one query embedding is measured apart (20
 * questions embedded one at a time, uncached). Writes the numbers as JSON (default
 * `bench/results/recall.json`, or the path after `--json`). The data is read in place, never copied.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { inMemoryMemoryStore } from '../src/memory/stores/in-memory.ts'
import { createSearchIndex } from '../src/memory/search-index.ts'
import { DEFAULT_FUSION, hybridSearch, type HybridSearchOptions } from '../src/memory/hybrid-search.ts'
import { createVectorIndex, type ExactVectorKernel } from '../src/search/vectors.ts'
import { loadVectorKernel } from '../src/memory/vector-kernel.ts'
import { localEmbedder } from '../src/memory/embeddings.ts'
import { embedMemoryScope } from '../src/memory/embeddings.ts'
import { isAgentError } from '../src/errors.ts'
import { embed, type EmbeddingModel } from 'ai'
import type { MemoryRecord, MemorySearchHit, MemorySearchQuery, MemoryStoreAdapter, MemoryTarget } from '../src/memory/types.ts'
import { cachedEmbedder, type CachedEmbedderStats } from './cached-embedder.ts'
import { hashingEmbedder } from './hashing-embedder.ts'
import { loadLocomo, type LocomoConversation } from './locomo.ts'
import { xorshift32 } from './random.ts'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const dataDir = resolve(root, '../shared/data/locomo')
const FILES = ['conv-26', 'conv-30', 'conv-41']
const FLOOR = { recall5: 0.62, recall10: 0.68 }
/** The import time of the imported rows' records (`createdAt`, one millisecond apart in file order): years after every LoCoMo session. */
const IMPORTED_AT = '2026-01-15T09:00:00.000Z'
const GOAL = { recall5: 0.68, recall10: 0.75 }

type Search = (adapter: MemoryStoreAdapter, target: MemoryTarget, query: MemorySearchQuery) => Promise<MemorySearchHit[]>

interface Row { ranking: string; questions: number; recall5: number; recall10: number; mrr10: number; p50Ms: number; p95Ms: number; perConversation: Record<string, { recall5: number; recall10: number }>; ranks: number[] }

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0
}

async function loadStore(conversation: LocomoConversation, model?: EmbeddingModel): Promise<{ adapter: MemoryStoreAdapter; target: MemoryTarget }> {
  const adapter = await inMemoryMemoryStore().create({ store: 'locomo', agent: 'bench', writable: true })
  const target: MemoryTarget = { store: 'locomo', scope: { user: conversation.id } }
  for (const input of conversation.records) await adapter.append(target, input, { audit: { via: 'import' } })
  // Vectors at import, in batches (what `embedMemoryScope` does for an import): searches then only embed queries.
  if (model) await embedMemoryScope(adapter, target, model)
  return { adapter, target }
}

async function evaluate(ranking: string, conversations: Array<LocomoConversation & { adapter: MemoryStoreAdapter; target: MemoryTarget }>, search: Search): Promise<Row> {
  let questions = 0, hit5 = 0, hit10 = 0, reciprocal = 0
  const latencies: number[] = []
  const perConversation: Row['perConversation'] = {}
  // Per question, in order: the rank (from 1) of the first result citing its evidence, 0 for none in the top 10.
  const ranks: number[] = []
  for (const conversation of conversations) {
    let local5 = 0, local10 = 0
    for (const question of conversation.questions) {
      const started = performance.now()
      const hits = await search(conversation.adapter, conversation.target, { query: question.question, limit: 10 })
      latencies.push(performance.now() - started)
      const rank = hits.findIndex(hit => (hit.record.metadata.evidence as string[]).some(id => question.evidence.has(id)))
      questions++
      ranks.push(rank + 1)
      if (rank !== -1 && rank < 5) { hit5++; local5++ }
      if (rank !== -1 && rank < 10) { hit10++; local10++; reciprocal += 1 / (rank + 1) }
    }
    perConversation[conversation.id] = { recall5: local5 / conversation.questions.length, recall10: local10 / conversation.questions.length }
  }
  return { ranking, questions, recall5: hit5 / questions, recall10: hit10 / questions, mrr10: reciprocal / questions, p50Ms: percentile(latencies, 0.5), p95Ms: percentile(latencies, 0.95), perConversation, ranks }
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

/** The local sentence embedder (cached on disk) when its optional packages load, else the hashing stand-in. */
async function chooseEmbedder(): Promise<{ model: EmbeddingModel; label: string; raw?: EmbeddingModel; cache?: CachedEmbedderStats }> {
  const raw = localEmbedder()
  try {
    await raw.doEmbed({ values: ['probe'] })
    const model = cachedEmbedder(raw)
    return { model, label: 'local embedder (USE lite, 512 dims)', raw, cache: model.stats }
  }
  catch (error) {
    if (!isAgentError(error)) throw error
    console.log(`localEmbedder() unavailable (${error.code}): hybrid rows use the hashing stand-in`)
    return { model: hashingEmbedder(), label: 'hashing stand-in (local embedder not installed)' }
  }
}

/** The model's own cost of one query embedding: `questions` embedded one at a time, not cached. */
async function queryEmbedCost(model: EmbeddingModel, questions: string[]): Promise<{ texts: number; p50Ms: number; p95Ms: number }> {
  const times: number[] = []
  for (const question of questions) {
    const started = performance.now()
    await embed({ model, value: question, maxRetries: 0 })
    times.push(performance.now() - started)
  }
  return { texts: questions.length, p50Ms: percentile(times, 0.5), p95Ms: percentile(times, 0.95) }
}

interface VectorScaleRow { vectors: number; dimensions: number; buildMs: number; js: { minMs: number; p50Ms: number; p95Ms: number }; kernel?: { minMs: number; p50Ms: number; p95Ms: number; sameTop100: number } }

/**
 * Exact vector search (vectors.ts) over `count` random unit vectors of `dimensions`, top 100: the
 * JavaScript scan and, when usearch loads, the same vectors scanned by its kernel, the two
 * interleaved query by query (which goes first alternates). `sameTop100`: share of the JavaScript
 * top 100 the kernel returned (ties at the cut may differ).
 */
function vectorScale(count: number, dimensions: number, kernel: ExactVectorKernel | undefined): VectorScaleRow {
  let random = xorshift32(11)
  const js = createVectorIndex(dimensions)
  const native = kernel ? createVectorIndex(dimensions, { kernel }) : undefined
  const vector = new Float32Array(dimensions)
  const started = performance.now()
  for (let i = 0; i < count; i++) {
    for (let d = 0; d < dimensions; d++) vector[d] = random()
    js.set(`r${i}`, vector)
  }
  const buildMs = performance.now() - started
  if (native) {
    random = xorshift32(11)
    for (let i = 0; i < count; i++) {
      for (let d = 0; d < dimensions; d++) vector[d] = random()
      native.set(`r${i}`, vector)
    }
  }
  const jsTimes: number[] = []
  const kernelTimes: number[] = []
  let same = 0
  for (let run = 0; run < 30; run++) {
    for (let d = 0; d < dimensions; d++) vector[d] = random()
    const timed = (index: typeof js, times: number[]) => {
      const begun = performance.now()
      const found = index.search(vector, 100)
      times.push(performance.now() - begun)
      return found
    }
    if (native && run % 2 === 1) {
      const fromKernel = new Set(timed(native, kernelTimes).map(match => match.id))
      same += timed(js, jsTimes).filter(match => fromKernel.has(match.id)).length
    }
    else {
      const fromJs = timed(js, jsTimes)
      if (native) {
        const fromKernel = new Set(timed(native, kernelTimes).map(match => match.id))
        same += fromJs.filter(match => fromKernel.has(match.id)).length
      }
    }
  }
  const summary = (times: number[]) => ({ minMs: Math.min(...times), p50Ms: percentile(times, 0.5), p95Ms: percentile(times, 0.95) })
  return { vectors: count, dimensions, buildMs, js: summary(jsTimes), ...(native ? { kernel: { ...summary(kernelTimes), sameTop100: same / (30 * 100) } } : {}) }
}

async function main(): Promise<void> {
  const jsonAt = process.argv.indexOf('--json')
  const jsonPath = jsonAt !== -1 && process.argv[jsonAt + 1] ? resolve(process.argv[jsonAt + 1]!) : join(root, 'bench/results/recall.json')
  const { model, label, raw, cache } = await chooseEmbedder()
  const load = (records: { eventTime: boolean; importedAt?: string }, embedder?: EmbeddingModel) => Promise.all(FILES.map(async (file) => {
    const conversation = loadLocomo(join(dataDir, `${file}.json`), file, records)
    return { ...conversation, ...(await loadStore(conversation, embedder)) }
  }))
  const protocol = { eventTime: false }
  const imported = { eventTime: false, importedAt: IMPORTED_AT }
  const importedDated = { eventTime: true, importedAt: IMPORTED_AT }
  const conversations = await load(protocol)
  const undated = await load(imported)
  const dated = await load(importedDated)
  const embedStarted = performance.now()
  const withVectors = await load(protocol, model)
  const undatedWithVectors = await load(imported, model)
  const datedWithVectors = await load(importedDated, model)
  const embedMs = performance.now() - embedStarted
  const hashing = hashingEmbedder()
  const hybrid = (options: Omit<HybridSearchOptions, 'model'> & { model?: EmbeddingModel } = {}): Search => (adapter, target, query) => hybridSearch(adapter, target, query, { model, ...options })
  const rows = [
    await evaluate('lexical (default ranked BM25F; createdAt = session date)', conversations, (adapter, target, query) => adapter.search(target, query)),
    await evaluate('lexical, imported (createdAt = import time, no occurredAt)', undated, (adapter, target, query) => adapter.search(target, query)),
    await evaluate('lexical + dates, imported (createdAt = import time, occurredAt = session date)', dated, (adapter, target, query) => adapter.search(target, query)),
    await evaluate('substring rule (search.mode "substring")', conversations, (adapter, target, query) => adapter.search(target, { ...query, mode: 'substring' })),
    await evaluate(`hybrid, ${label}; createdAt = session date`, withVectors, hybrid()),
    await evaluate(`hybrid, imported, ${label}`, undatedWithVectors, hybrid()),
    await evaluate(`hybrid + dates, imported, ${label}`, datedWithVectors, hybrid()),
    await evaluate('hybrid, hashing stand-in', conversations, hybrid({ model: hashing })),
    await evaluate(`hybrid without neighbour share (neighbourShare 0), ${label}; createdAt = session date`, withVectors, hybrid({ neighbourShare: 0 })),
    await evaluate(`vector side alone (lexicalWeight 0, neighbourShare 0), imported + dates, ${label}`, datedWithVectors, hybrid({ lexicalWeight: 0, neighbourShare: 0 })),
  ]
  // Lexical latency again, 5 more passes over every question: one pass's p95 is 19 of 383 searches, easily moved by a neighbour's load.
  const passes: Array<{ p50Ms: number; p95Ms: number }> = []
  for (let pass = 0; pass < 5; pass++) {
    const row = await evaluate('lexical pass', conversations, (adapter, target, query) => adapter.search(target, query))
    passes.push({ p50Ms: row.p50Ms, p95Ms: row.p95Ms })
  }
  const records = conversations.reduce((sum, c) => sum + c.records.length, 0)
  console.log(`load average at start: ${loadavg().map(value => value.toFixed(2)).join(' ')} (2-core machine shared with other work: latency varies, recall does not)`)
  console.log(`LoCoMo retrieval (dev conversations), ${rows[0]!.questions} questions (categories 1-4 with evidence) over ${records} observation records in ${conversations.length} scopes`)
  console.log(`Embedding ${records * 3} records at import (three stores): ${fixed(embedMs / 1000, 1)} s${cache ? ` (disk cache: ${cache.hits} hits, ${cache.misses} texts sent to the model)` : ''}`)
  const queryCost = raw ? await queryEmbedCost(raw, conversations[0]!.questions.slice(0, 20).map(question => question.question)) : undefined
  if (queryCost) console.log(`Query embedding by the model (not in the hybrid latency below: vectors come from the disk cache): p50 ${fixed(queryCost.p50Ms, 1)} ms, p95 ${fixed(queryCost.p95Ms, 1)} ms over ${queryCost.texts} questions`)
  console.log('| ranking | recall@5 | recall@10 | MRR@10 | p50 ms | p95 ms |')
  console.log('| --- | --- | --- | --- | --- | --- |')
  for (const row of rows) console.log(`| ${row.ranking} | ${fixed(row.recall5)} | ${fixed(row.recall10)} | ${fixed(row.mrr10)} | ${fixed(row.p50Ms, 2)} | ${fixed(row.p95Ms, 2)} |`)
  const p95s = passes.map(pass => pass.p95Ms).sort((a, b) => a - b)
  console.log(`lexical search latency, 5 more passes of ${rows[0]!.questions} questions: p95 min ${fixed(p95s[0]!, 2)} ms, median ${fixed(p95s[2]!, 2)} ms, max ${fixed(p95s[4]!, 2)} ms (target < 10 ms); p50 median ${fixed(passes.map(pass => pass.p50Ms).sort((a, b) => a - b)[2]!, 2)} ms`)
  const ranked = rows[0]!
  console.log(`default vs floor (${FLOOR.recall5}/${FLOOR.recall10}): recall@5 ×${fixed(ranked.recall5 / FLOOR.recall5, 2)}, recall@10 ×${fixed(ranked.recall10 / FLOOR.recall10, 2)}; vs goal (${GOAL.recall5}/${GOAL.recall10}): ×${fixed(ranked.recall5 / GOAL.recall5, 2)}, ×${fixed(ranked.recall10 / GOAL.recall10, 2)}`)
  for (const row of rows) console.log(`  ${row.ranking}: ${Object.entries(row.perConversation).map(([id, r]) => `${id} ${fixed(r.recall5)}/${fixed(r.recall10)}`).join(', ')}`)
  const sweep: Array<Row & { settings: Record<string, number> }> = []
  const settings: Array<Omit<HybridSearchOptions, 'model'>> = [
    ...[5, 10, 20, 60].flatMap(rrfK => [50, 100].map(depth => ({ rrfK, lexicalDepth: depth, vectorDepth: depth }))),
    { rrfK: 10, lexicalDepth: 100, vectorDepth: 100, vectorWeight: 0.5 },
    { rrfK: 10, lexicalDepth: 100, vectorDepth: 100, vectorWeight: 1.5 },
    { rrfK: 10, lexicalDepth: 100, vectorDepth: 100, vectorWeight: 2 },
  ]
  for (const setting of settings) {
    const row = await evaluate(JSON.stringify(setting), datedWithVectors, hybrid(setting))
    sweep.push({ ...row, settings: { ...DEFAULT_FUSION, ...setting } as unknown as Record<string, number> })
  }
  console.log(`Fusion settings, hybrid + dates, ${label} (defaults ${JSON.stringify(DEFAULT_FUSION)}):`)
  console.log('| rrfK | lexical depth | vector depth | vector weight | recall@5 | recall@10 | MRR@10 |')
  console.log('| --- | --- | --- | --- | --- | --- | --- |')
  for (const row of sweep) console.log(`| ${row.settings.rrfK} | ${row.settings.lexicalDepth} | ${row.settings.vectorDepth} | ${row.settings.vectorWeight} | ${fixed(row.recall5)} | ${fixed(row.recall10)} | ${fixed(row.mrr10)} |`)
  const kernel = await loadVectorKernel()
  const vectorRows = [1_000, 2_000, 10_000, 100_000].map(count => vectorScale(count, 512, kernel))
  console.log(`Exact vector search (createVectorIndex, top 100, 30 queries; JavaScript scan vs usearch kernel${kernel ? '' : ': usearch not installed'}, interleaved):`)
  console.log('| vectors | dims | build ms | JS min / p50 / p95 ms | usearch min / p50 / p95 ms | p50 ratio | same top 100 |')
  console.log('| --- | --- | --- | --- | --- | --- | --- |')
  const triple = (t: { minMs: number; p50Ms: number; p95Ms: number }) => `${fixed(t.minMs, 2)} / ${fixed(t.p50Ms, 2)} / ${fixed(t.p95Ms, 2)}`
  for (const row of vectorRows) console.log(`| ${row.vectors} | ${row.dimensions} | ${fixed(row.buildMs, 0)} | ${triple(row.js)} | ${row.kernel ? triple(row.kernel) : '-'} | ${row.kernel ? `${fixed(row.js.p50Ms / row.kernel.p50Ms, 1)}x` : '-'} | ${row.kernel ? fixed(row.kernel.sameTop100) : '-'} |`)
  const scaleRows = scale(100_000)
  console.log('Index at 100,000 records (createSearchIndex, limit 10):')
  console.log('| query | p50 ms | p95 ms |')
  console.log('| --- | --- | --- |')
  for (const row of scaleRows) console.log(`| ${row.query} | ${fixed(row.p50Ms, 2)} | ${fixed(row.p95Ms, 2)} |`)
  mkdirSync(dirname(jsonPath), { recursive: true })
  if (process.argv.includes('--per-question')) {
    // One line per question: conversation, category, the rank of its first evidence hit in each row (0: not in the top 10), the question.
    const asked = conversations.flatMap(conversation => conversation.questions.map(question => ({ conversation: conversation.id, question })))
    const perQuestionPath = jsonPath.replace(/\.json$/, '') + '.questions.tsv'
    writeFileSync(perQuestionPath, [['conversation', 'category', ...rows.map(row => row.ranking), 'question'].join('\t'), ...asked.map(({ conversation, question }, n) => [conversation, question.category, ...rows.map(row => row.ranks[n]), question.question].join('\t'))].join('\n') + '\n')
    console.log(`per question: ${perQuestionPath}`)
  }
  const summaries = rows.map(({ ranks: _ranks, ...row }) => row)
  writeFileSync(jsonPath, `${JSON.stringify({ date: new Date().toISOString(), embedder: label, floor: FLOOR, goal: GOAL, rows: summaries, lexicalPasses: passes, queryEmbedding: queryCost, fusion: sweep, vectors: vectorRows, scale: scaleRows }, null, 2)}\n`)
  console.log(`JSON: ${jsonPath}`)
}

await main()
