/**
 * Hybrid search: the full-text ranking and the vector ranking of one store
 * and scope, fused by weighted reciprocal rank fusion.
 *
 * Vectors are durable (vectors-store.ts): computed when a record is written through the memory
 * tools (an embedder failure never fails the write), else at the first search that needs them,
 * stored beside the records with the embedding model's id, loaded from there after a restart
 * instead of recomputed. Query vectors are cached per model. Vector search is exact
 * (vectors.ts; usearch's native scan from 2,000 vectors when installed, vector-kernel.ts) over
 * each scope's index, kept between searches (hybrid-scope.ts): with the adapter's change signal
 * (`changes`, the built-in stores) a search applies only what changed since the last one.
 */
import type { EmbeddingModel } from 'ai'
import { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, recordMatchesFilters } from '../search/search.ts'
import { floorLacksWord, wordsFirstAtFloor } from '../search/substring-rule.ts'
import { parseInstant } from '../instant.ts'
import { searchRecords, substringScoreOf } from './search-index.ts'
import { memoryVectorStore, recordVectors, type MemoryVectorStore, type RecordVectors } from './vectors-store.ts'
import { eventTimeBounds, hasEventTimeFilter, searchWithEventTime, withinEventTime, withoutEventTime } from './event-time.ts'
import { cloneRecord } from './records.ts'
import { syncHybridScope, type HybridScope } from './hybrid-scope.ts'
import { shareWithNeighbours, type FusedEntry } from './neighbour-share.ts'
import { namedPeriods, occurredIn } from './query-dates.ts'
import type { MemoryRecord, MemorySearchHit, MemorySearchQuery, MemoryStoreAdapter, MemoryTarget } from './types.ts'

/**
 * Default fusion of {@link hybridSearch}, measured with the local embedder on the LoCoMo dev
 * conversations (`npm run bench:recall` and `npm run bench:recall-variants`,
 * docs/search-and-recall.md "Fusion defaults") and, by the research behind it, on held-out ones:
 * - `rrfK` 10: `1 / (k + rank)` with k = 10 weighs the top of each ranking more than the usual
 *   60 (Cormack et al. 2009): recall@10 0.733 against 0.698 held-out, 0.736 against 0.715 on dev
 *   with event dates;
 * - `lexicalDepth` and `vectorDepth` 100: the candidates each ranking contributes (50 did worse);
 * - `lexicalWeight` 1 and `vectorWeight` 0.75: over the lexical ranking with synonym expansion
 *   and 5 feedback records, the vector rank counts 0.75 of the lexical one; chosen in two folds of
 *   the dev conversations (conv-26; conv-30 + conv-41: tuned on either, it won on the other), with
 *   event dates recall@5 / @10 0.697 / 0.747 against 0.684 / 0.739 at 1 (`bench/recall-folds.ts`).
 * Per fold (A: conv-26, 150 questions; B: conv-30 + conv-41, 233), recall@5 / @10: without event
 * dates A 0.620 / 0.707, B 0.704 / 0.747; with them A 0.647 / 0.713, B 0.730 / 0.768
 * (`bench/recall-fusion-folds.ts`). No other setting, embedded text, query text, vector similarity
 * floor or score fusion chosen on one fold won on the other (docs/search-and-recall.md, "In two
 * folds by conversation").
 * - `neighbourShare` 0.5 and `neighbourSpan` 2: after fusion, the 2 records written before and
 *   after a candidate on its event day get 0.5 of its score (neighbour-share.ts). Chosen leave one
 *   conversation out on the dev conversations (`bench/recall-loco-folds.ts`: chosen on two, read
 *   on the third, recall@5 / @10 +0 / +2, +0 / +1, +4 / +6 questions; all three: recall@10 0.734
 *   to 0.768, MRR@10 0.567 to 0.541).
 */
export const DEFAULT_FUSION = { rrfK: 10, lexicalDepth: 100, vectorDepth: 100, lexicalWeight: 1, vectorWeight: 0.75, neighbourShare: 0.5, neighbourSpan: 2 } as const

/** The RRF constant of {@link DEFAULT_FUSION}. */
export const RRF_K: number = DEFAULT_FUSION.rrfK

export { EMBED_INPUT_CHARS, embeddingText } from './vectors-store.ts'

/** Options of {@link hybridSearch}; each fusion field defaults to {@link DEFAULT_FUSION}. */
export interface HybridSearchOptions {
  /** The AI SDK embedding model (the store option `embed`). */
  model: EmbeddingModel
  /** Passed to the AI SDK calls. */
  abortSignal?: AbortSignal
  /** RRF constant `k` (> 0). Default 10; on the dev folds with event dates, k 5 gives A +0 / +0 and B −2 / +1 questions at recall@5 / @10, k 20 A −2 / −1 and B −3 / −3. */
  rrfK?: number
  /** Full-text candidates fused, 1..100 (`adapter.search` limit). Default 100; 50 / 50 with event dates: A +0 / +1, B −2 / −2 questions at recall@5 / @10. */
  lexicalDepth?: number
  /** Vector candidates fused, >= 1. Default 100; 50 with event dates: A +0 / +1, B −1 / +0 questions at recall@5 / @10. */
  vectorDepth?: number
  /** Weight of the full-text ranking's RRF terms (>= 0). */
  lexicalWeight?: number
  /**
   * Called with the error when the vector side fails (the embedder, the vector store) and the
   * full-text results are returned alone; `memory_search` turns it into a warning of its result.
   */
  onVectorFailure?: (error: unknown) => void
  /** Weight of the vector ranking's RRF terms (>= 0). Default 0.75; with event dates 0.6 gives A +2 / +1 and B −2 / +0 questions at recall@5 / @10, 1 gives A −2 / −2 and B −3 / −1. */
  vectorWeight?: number
  /** Share of a fused candidate's score given to the records written next to it on its event day (>= 0; 0 is off). Default 0.5; 0.3 gives +0 / −1, +1 / +0, −1 / −5 questions at recall@5 / @10 on conv-26, conv-30, conv-41 against 0.5; 0.7 −6 / +0, −1 / +0, +1 / −3. */
  neighbourShare?: number
  /** Records on each side of a candidate that get the share (>= 0). Default 2; 1 gives −2 / +3, +0 / +0, +0 / −4 questions at recall@5 / @10 on conv-26, conv-30, conv-41 against 2. */
  neighbourSpan?: number
}

const fallbackStores = new WeakMap<MemoryStoreAdapter, MemoryVectorStore>()

/** The vector store of an adapter: its own `vectors` (log-backed stores: the log's sidecar), else one in process memory per adapter object. */
export function vectorStoreOf(adapter: MemoryStoreAdapter): MemoryVectorStore {
  if (adapter.vectors) return adapter.vectors
  let store = fallbackStores.get(adapter)
  if (!store) fallbackStores.set(adapter, store = memoryVectorStore())
  return store
}

/** The {@link RecordVectors} cache of an adapter and model. */
export function adapterVectors(adapter: MemoryStoreAdapter, model: EmbeddingModel): RecordVectors {
  return recordVectors(vectorStoreOf(adapter), model)
}

/**
 * Full-text and vector search of one store and scope, fused by weighted reciprocal rank fusion:
 * `score = lexicalWeight / (rrfK + lexical rank) + vectorWeight / (rrfK + vector rank)` (ranks
 * from 1) over the full-text top `lexicalDepth` (`adapter.search`) and the vector top
 * `vectorDepth` (cosine similarity of the query vector and the vectors of the scope's active
 * records that pass the filters, `occurredAfter` / `occurredBefore` included; similarity 0 or
 * less is no candidate); then the records within `neighbourSpan` of a candidate in the scope's
 * creation order, on its event day and passing the filters, get `neighbourShare` × its score
 * (neighbour-share.ts). Filters apply before the limit; the substring rule's page is kept as
 * ranked search keeps it (at its lowest score, records holding a word of the query first:
 * `wordsFirstAtFloor`); superseded and deleted records never appear.
 *
 * The scope's active records and vector index are kept between searches (hybrid-scope.ts): with
 * the adapter's `changes`, a search reads only what changed since the last one (cost: the
 * changes, then the exact scan), and the substring rule is the adapter's own `mode: 'substring'`
 * search; without it, every search reads the scope with `export`. The full-text ranking, the
 * substring rule and that sync run concurrently. Records without a stored vector are embedded
 * in one batch and stored. When the embedder fails (network, input too long), the full-text
 * results are returned alone (`onVectorFailure` is told): search degrades, it does not fail, and
 * the next search tries again.
 *
 * @throws AgentError `MEMORY_QUERY_INVALID` for an invalid query (as `searchRecords`).
 */
export async function hybridSearch(adapter: MemoryStoreAdapter, target: MemoryTarget, query: MemorySearchQuery, options: HybridSearchOptions): Promise<MemorySearchHit[]> {
  const limit = query.limit ?? DEFAULT_SEARCH_LIMIT
  const k = options.rrfK ?? DEFAULT_FUSION.rrfK
  const lexicalDepth = Math.min(MAX_SEARCH_LIMIT, Math.max(limit, options.lexicalDepth ?? DEFAULT_FUSION.lexicalDepth))
  const vectorDepth = Math.max(1, options.vectorDepth ?? DEFAULT_FUSION.vectorDepth)
  const lexicalWeight = options.lexicalWeight ?? DEFAULT_FUSION.lexicalWeight
  const vectorWeight = options.vectorWeight ?? DEFAULT_FUSION.vectorWeight
  const neighbourShare = options.neighbourShare ?? DEFAULT_FUSION.neighbourShare
  const neighbourSpan = options.neighbourSpan ?? DEFAULT_FUSION.neighbourSpan
  const bounds = hasEventTimeFilter(query) ? eventTimeBounds(query) : undefined
  const base = withoutEventTime(query)
  const passes = (record: MemoryRecord) => recordMatchesFilters(record, base) && (!bounds || withinEventTime(record, bounds))
  const vectors = adapterVectors(adapter, options.model)
  // The full-text ranking, the substring rule (a store with the change signal answers it) and the vector side's sync run side by side (a database store: on their own connections).
  const fullText = searchWithEventTime(adapter, target, { ...query, limit: lexicalDepth })
  const substring = adapter.changes ? searchWithEventTime(adapter, target, { ...query, limit, mode: 'substring' }) : undefined
  const synced = syncHybridScope(adapter, target, vectors, options.abortSignal)
  for (const pending of [fullText, substring, synced]) pending?.catch(() => {})
  const lexical = await fullText
  let scope: HybridScope
  let vectorRanking: MemoryRecord[]
  try {
    scope = await synced
    vectorRanking = await rankByVector(vectors, scope, query.query, vectorDepth, passes, options)
  }
  catch (error) {
    options.onVectorFailure?.(error)
    return lexical.slice(0, limit)
  }
  const fused = new Map<string, FusedEntry>()
  lexical.forEach((hit, rank) => fused.set(hit.record.id, { hit, score: lexicalWeight / (k + rank + 1) }))
  vectorRanking.forEach((record, rank) => {
    const entry = fused.get(record.id)
    if (entry) entry.score += vectorWeight / (k + rank + 1)
    else fused.set(record.id, { hit: { record: cloneRecord(record), score: 0 }, score: vectorWeight / (k + rank + 1) })
  })
  shareWithNeighbours(fused, scope, neighbourShare, neighbourSpan, passes)
  const order = [...fused.values()].sort((a, b) => b.score - a.score)
  // Without the change signal the scope was read whole: the substring rule runs over it, as ranked search keeps it.
  const guaranteedHits = substring ? await substring : searchRecords([...scope.records.values()].filter(passes), { ...base, limit, mode: 'substring' })
  // At the page's lowest substring score, records holding a word of the query (a full-text score above 0) go first, as ranked search keeps the page.
  const lexicalScore = new Map(lexical.map(hit => [hit.record.id, hit.score]))
  const onPage = new Set(guaranteedHits.map(hit => hit.record.id))
  const holdsWord = (hit: MemorySearchHit) => (lexicalScore.get(hit.record.id) ?? 0) > 0
  const contenders = floorLacksWord(guaranteedHits, limit, hit => hit.score, holdsWord)
    ? lexical.filter(hit => hit.score > 0 && !onPage.has(hit.record.id) && passes(hit.record)).map(hit => ({ record: hit.record, score: substringScoreOf(hit.record, base) }))
    : []
  const createdOf = (hit: MemorySearchHit) => parseInstant(hit.record.createdAt) ?? 0
  const page = wordsFirstAtFloor(guaranteedHits, limit, hit => hit.score, contenders, holdsWord, (a, b) => createdOf(b) - createdOf(a))
  const guaranteed = new Set(page.map(hit => hit.record.id))
  const chosen = order.filter(entry => guaranteed.has(entry.hit.record.id)).slice(0, limit)
  for (const entry of order) {
    if (chosen.length >= limit) break
    if (!guaranteed.has(entry.hit.record.id)) chosen.push(entry)
  }
  chosen.sort((a, b) => b.score - a.score)
  return chosen.map(({ hit, score }) => ({ ...hit, score: Math.round(score * 1e6) / 1e6 }))
}

/** The date a record's event lies on for the vector side's date ordering: `occurredAt`, else `createdAt` (the time the full-text side's date words come from too). */
function eventDateOf(record: MemoryRecord): Pick<MemoryRecord, 'occurredAt'> {
  return { occurredAt: record.occurredAt ?? record.createdAt }
}

/**
 * The vector top `depth` of the scope's active records that pass the filters. When the query names
 * calendar periods (query-dates.ts), the records whose event date (`occurredAt`, else `createdAt`)
 * lies in one come first (their own top `depth`), then the others: the embedding does not tell
 * one date from another. Reading `createdAt` for a record without `occurredAt`: LoCoMo dev
 * without event dates, fold A +0 / +0, fold B +4 / +2 questions at recall@5 / @10; with them no
 * change (bench/recall-fusion-folds.ts).
 */
async function rankByVector(vectors: RecordVectors, scope: HybridScope, text: string, depth: number, passes: (record: MemoryRecord) => boolean, options: HybridSearchOptions): Promise<MemoryRecord[]> {
  if (scope.records.size === 0) return []
  const queryVector = await vectors.query(text, options.abortSignal)
  const accept = (id: string) => {
    const record = scope.records.get(id)
    return record !== undefined && passes(record)
  }
  const ids = () => [...scope.records.keys()]
  let ranked = (await vectors.search(scope.partition, queryVector, depth, { accept, ids })).filter(match => match.similarity > 0)
  const periods = namedPeriods(text)
  if (periods.length > 0) {
    const inPeriod = (id: string) => accept(id) && occurredIn(eventDateOf(scope.records.get(id)!), periods)
    const first = (await vectors.search(scope.partition, queryVector, depth, { accept: inPeriod, ids })).filter(match => match.similarity > 0)
    const firstIds = new Set(first.map(match => match.id))
    ranked = [...first, ...ranked.filter(match => !firstIds.has(match.id))].slice(0, depth)
  }
  return ranked.filter(match => scope.records.has(match.id)).map(match => scope.records.get(match.id)!)
}
