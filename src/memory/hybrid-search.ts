/**
 * Optional semantic search (issue 7, "a store option `embed` taking an AI SDK `EmbeddingModel`
 * ..., combined with full-text by reciprocal rank fusion; vectors kept in the materialized state
 * and in the log only if the user asks").
 *
 * Vectors are computed lazily at search time with the AI SDK (`embedMany` for records, `embed`
 * for the query) and kept in process memory per embedding model and record id; they are never
 * written to the log. A record's content never changes after it is written (a change is a new
 * record that supersedes it), so a vector, once computed, stays valid. Writes never call the
 * embedder, so an embedder failure can never lose a write.
 */
import { embed, embedMany } from 'ai'
import type { EmbeddingModel } from 'ai'
import { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, recordMatchesFilters, searchRecords } from '../search/search.ts'
import type { MemoryRecord, MemorySearchHit, MemorySearchQuery, MemoryStoreAdapter, MemoryTarget } from './types.ts'

/** The RRF constant `k` of `1 / (k + rank)` (the usual 60, from Cormack et al. 2009). */
export const RRF_K = 60

/** Most characters of a record sent to the embedder (title, content and tags joined). */
export const EMBED_INPUT_CHARS = 8192

const vectorCaches = new WeakMap<object, Map<string, number[]>>()
const namedCaches = new Map<string, Map<string, number[]>>()

function cacheOf(model: EmbeddingModel): Map<string, number[]> {
  if (typeof model === 'string') {
    let cache = namedCaches.get(model)
    if (!cache) namedCaches.set(model, cache = new Map())
    return cache
  }
  let cache = vectorCaches.get(model)
  if (!cache) vectorCaches.set(model, cache = new Map())
  return cache
}

/** The text embedded for a record: title, content and tags, cut at {@link EMBED_INPUT_CHARS} on a code point boundary. */
export function embeddingText(record: MemoryRecord): string {
  const text = [record.title, record.content, record.tags.length > 0 ? record.tags.join(', ') : undefined].filter(Boolean).join('\n')
  return Array.from(text).slice(0, EMBED_INPUT_CHARS).join('')
}

function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0
  let normA = 0
  let normB = 0
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    dot += a[i]! * b[i]!
    normA += a[i]! * a[i]!
    normB += b[i]! * b[i]!
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB)
}

/** Options of {@link hybridSearch}. */
export interface HybridSearchOptions {
  /** The AI SDK embedding model (the store option `embed`). */
  model: EmbeddingModel
  /** Passed to the AI SDK calls. */
  abortSignal?: AbortSignal
}

/**
 * Full-text and vector search of one store and scope, fused by reciprocal rank fusion:
 * `score = Σ 1 / (RRF_K + rank)` over the full-text ranking (`adapter.search` with
 * {@link MAX_SEARCH_LIMIT}) and the vector ranking (cosine similarity of the query vector and the
 * vectors of the scope's active records that pass the filters). Filters apply before the limit;
 * the records the substring rule returns are always kept (as in ranked search); superseded and
 * deleted records never appear (only active records of `adapter.export` are ranked).
 *
 * When the embedder fails (network, input too long), the full-text results are returned alone:
 * search degrades, it does not fail.
 *
 * @throws AgentError `MEMORY_QUERY_INVALID` for an invalid query (as `searchRecords`).
 */
export async function hybridSearch(adapter: MemoryStoreAdapter, target: MemoryTarget, query: MemorySearchQuery, options: HybridSearchOptions): Promise<MemorySearchHit[]> {
  const limit = query.limit ?? DEFAULT_SEARCH_LIMIT
  const fullText = await adapter.search(target, { ...query, limit: MAX_SEARCH_LIMIT })
  const active = (await adapter.export(target)).filter(record => recordMatchesFilters(record, query))
  let vectorRanking: MemoryRecord[]
  try {
    vectorRanking = await rankByVector(active, query.query, options)
  }
  catch {
    return fullText.slice(0, limit)
  }
  const fused = new Map<string, { hit: MemorySearchHit; score: number }>()
  fullText.forEach((hit, rank) => fused.set(hit.record.id, { hit, score: 1 / (RRF_K + rank + 1) }))
  vectorRanking.slice(0, MAX_SEARCH_LIMIT).forEach((record, rank) => {
    const entry = fused.get(record.id)
    if (entry) entry.score += 1 / (RRF_K + rank + 1)
    else fused.set(record.id, { hit: { record, score: 0 }, score: 1 / (RRF_K + rank + 1) })
  })
  const order = [...fused.values()].sort((a, b) => b.score - a.score)
  const guaranteed = new Set(searchRecords(active, { ...query, limit, mode: 'substring' }).map(hit => hit.record.id))
  const chosen = order.filter(entry => guaranteed.has(entry.hit.record.id))
  for (const entry of order) {
    if (chosen.length >= limit) break
    if (!guaranteed.has(entry.hit.record.id)) chosen.push(entry)
  }
  chosen.sort((a, b) => b.score - a.score)
  return chosen.map(({ hit, score }) => ({ ...hit, score: Math.round(score * 1e6) / 1e6 }))
}

async function rankByVector(records: readonly MemoryRecord[], text: string, options: HybridSearchOptions): Promise<MemoryRecord[]> {
  if (records.length === 0) return []
  const cache = cacheOf(options.model)
  const missing = records.filter(record => !cache.has(record.id))
  if (missing.length > 0) {
    const { embeddings } = await embedMany({ model: options.model, values: missing.map(embeddingText), maxRetries: 0, ...(options.abortSignal ? { abortSignal: options.abortSignal } : {}) })
    missing.forEach((record, i) => cache.set(record.id, embeddings[i]!))
  }
  const { embedding } = await embed({ model: options.model, value: text, maxRetries: 0, ...(options.abortSignal ? { abortSignal: options.abortSignal } : {}) })
  return records
    .map(record => ({ record, similarity: cosine(embedding, cache.get(record.id)!) }))
    .filter(entry => entry.similarity > 0)
    .sort((a, b) => b.similarity - a.similarity)
    .map(entry => entry.record)
}
