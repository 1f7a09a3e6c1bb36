/**
 * The ranked index of one partition: `createSearchIndex` composes the engine's structures
 * (state.ts: slots, vocabulary, runs) and operations (bm25f.ts, feedback.ts, query-terms.ts,
 * substring-index.ts, snapshot.ts) behind the {@link SearchIndex} interface.
 *
 * Ranked full-text search per scope that keeps the documented substring rule's page (capability
 * document) up to the order of its ties: every hit above the page's lowest score, and at that
 * score the records holding a word of the query first (`wordsFirstAtFloor`).
 */
import { scoreSlot, type Bm25fParams } from './bm25f.ts'
import { rankedCandidates } from './candidates.ts'
import type { FeedbackParams } from './feedback.ts'
import { textOf } from './plain-text.ts'
import { floorContenders } from './floor-words.ts'
import { scoresOf } from './kept-scores.ts'
import { checkQuery } from './query.ts'
import { queryTerms } from './query-terms.ts'
import { snippetOf } from './snippet.ts'
import { decodeSnapshot, encodeSnapshot } from './snapshot.ts'
import type { ScoredSlot } from './slots.ts'
import { IndexState } from './state.ts'
import { substringSearch } from './substring-index.ts'
import { floorLacksWord, wordsFirstAtFloor } from './substring-rule.ts'
import { candidateScorer, rerankBest, rerankOn, type RerankParams } from './rerank.ts'
import type { Vocabulary } from './vocabulary.ts'
import type { SearchDocument, SearchFeedbackOptions, SearchField, SearchHit, SearchIndex, SearchIndexOptions, SearchProximityOptions, SearchQuery, SearchSynonymOptions } from './types.ts'

/** Default {@link SearchIndexOptions}: the measured lexical levers on (docs/search-and-recall.md, "Ranking levers"). */
export const DEFAULT_SEARCH_INDEX_OPTIONS: {
  readonly fieldWeights: Readonly<Record<SearchField, number>>
  readonly k1: number
  readonly b: number
  readonly feedback: Readonly<Required<SearchFeedbackOptions>>
  readonly proximity: Readonly<Required<SearchProximityOptions>>
  readonly tagBoost: number
  readonly rerankDepth: number
  readonly irregularForms: boolean
  readonly synonyms: Readonly<Required<SearchSynonymOptions>>
} = {
  fieldWeights: { title: 2, content: 1, tags: 2, dates: 1.5 },
  k1: 1.2,
  b: 0.75,
  feedback: { records: 5, terms: 20, weight: 0.1, minRecords: 2, maxShare: 0.1, dates: false },
  proximity: { window: 3, weight: 0.5 },
  tagBoost: 1.5,
  rerankDepth: 100,
  irregularForms: true,
  synonyms: { weight: 0.7 },
}

/**
 * Creates an empty {@link SearchIndex} with ranked search.
 *
 * Ranked mode (the default):
 * - terms come from `tokenize` (text.ts: stemmed, accent-folded, stop-words dropped, CJK bigrams)
 *   of the title, content and tags (as `options.text` gives them); a query is tokenized the same way;
 * - score = BM25F (bm25f.ts) over the partition's active records (`avgLen` over the records where
 *   the field is not empty), plus pseudo-relevance feedback when `options.feedback` turns it on;
 * - every record the substring rule (`searchRecords`) returns for the same query and filters is
 *   returned too (ranking adds recall, never removes it): the substring rule's top `limit` are
 *   kept and the remaining places go to the best-ranked other records; a record found only by the
 *   substring rule scores 0 and comes after ranked ones;
 * - filters (`kinds`, `tags`, `keywords`, `topics`, `after`, `before`) apply before the limit;
 *   ties go to the newest; only active records are indexed, so superseded and deleted records
 *   never appear;
 * - each hit has a `snippet` around its best match, scores are rounded to 4 decimals.
 *
 * Layout: records are numbered slots (slots.ts); term postings (vocabulary.ts) and run postings
 * (runs.ts) are int32 pairs in shared arenas (postings.ts); a removed record's slot is a tombstone
 * skipped by searches and dropped when the index is rebuilt (once tombstones outnumber live
 * records, and at least 1,024).
 *
 * Cost: `update` is lazy (it only notes the latest state; the partition is indexed on its first
 * search); indexing a record is proportional to its length; a search visits the postings of the
 * query's terms once (with MaxScore pruning when one list dwarfs the others, match masks when a
 * few common lists are alike: candidates.ts) and
 * those of the runs containing the query, and keeps the top `limit` with a bounded heap
 * (candidates below the heap's floor are dropped before the filters run).
 */
export function createSearchIndex<D extends SearchDocument = SearchDocument>(options: SearchIndexOptions<D> = {}): SearchIndex<D> {
  return new RankedIndex<D>(options)
}

/**
 * The index a {@link SearchIndexSnapshot} was taken of (`snapshot()` of a {@link createSearchIndex}
 * index), over `records`: the partition's records in creation order, any status (the snapshot's
 * record numbers point into it). It answers every search as the index it was taken of, and takes
 * later updates the same way; `options` must be the ones that index had. The snapshot's `data`
 * may be its base64 text or the bytes it encodes (a `Uint8Array`, read in place). Cost:
 * proportional to the snapshot's size (nothing is tokenized).
 *
 * @throws Error when the snapshot is malformed, of another `searchIndexFormat`, or does not
 * index exactly the active records of `records`.
 */
export function restoreSearchIndex<D extends SearchDocument = SearchDocument>(snapshot: unknown, records: readonly D[], options: SearchIndexOptions<D> = {}): SearchIndex<D> {
  return new RankedIndex<D>(options, { snapshot, records })
}

/** Query texts whose terms an index keeps until it changes. */
const RECENT_QUERIES = 8

class RankedIndex<D extends SearchDocument> implements SearchIndex<D> {
  private state: IndexState<D>
  private readonly params: Bm25fParams
  private readonly feedback: FeedbackParams
  private readonly levers: RerankParams
  private readonly synonymWeight: number
  // Updates are taken in lazily: a replay only notes each record's latest state here, and the
  // partition is indexed (in first-update order, so positions are the same) on its first search.
  private pending = new Map<string, D>()
  // Built: searched (flushed) once, or restored. Only a built index is worth a snapshot.
  private isBuilt = false
  // The weighted terms of recent query texts: they depend only on the text and which terms and
  // plain Latin words live records hold, so they hold while the vocabulary's generations do.
  private readonly recentTerms = new Map<string, RecentTerms>()

  /** An empty index, or the index `restored` gives (a snapshot over its partition's records). */
  constructor(options: SearchIndexOptions<D>, restored?: { snapshot: unknown; records: readonly D[] }) {
    const weights = DEFAULT_SEARCH_INDEX_OPTIONS.fieldWeights
    this.params = {
      weights: [options.fieldWeights?.title ?? weights.title, options.fieldWeights?.content ?? weights.content, options.fieldWeights?.tags ?? weights.tags, options.fieldWeights?.dates ?? weights.dates],
      k1: options.k1 ?? DEFAULT_SEARCH_INDEX_OPTIONS.k1,
      b: options.b ?? DEFAULT_SEARCH_INDEX_OPTIONS.b,
    }
    this.feedback = { ...DEFAULT_SEARCH_INDEX_OPTIONS.feedback, ...options.feedback }
    const proximity = { ...DEFAULT_SEARCH_INDEX_OPTIONS.proximity, ...options.proximity }
    this.levers = {
      depth: options.rerankDepth ?? DEFAULT_SEARCH_INDEX_OPTIONS.rerankDepth,
      window: proximity.window,
      proximityWeight: proximity.weight,
      tagBoost: options.tagBoost ?? DEFAULT_SEARCH_INDEX_OPTIONS.tagBoost,
    }
    this.synonymWeight = options.synonyms?.weight ?? DEFAULT_SEARCH_INDEX_OPTIONS.synonyms.weight
    const text = textOf(options.text)
    const irregular = options.irregularForms ?? DEFAULT_SEARCH_INDEX_OPTIONS.irregularForms
    this.state = restored ? decodeSnapshot(restored.snapshot, restored.records, text, irregular) : new IndexState<D>(text, irregular)
    this.isBuilt = restored !== undefined
  }

  get size(): number {
    this.flush()
    return this.state.slots.live
  }

  get built(): boolean {
    return this.isBuilt
  }

  update(record: D): void {
    this.pending.set(record.id, record)
  }

  snapshot(recordNumber: (record: D) => number) {
    if (!this.isBuilt) return undefined
    this.flush()
    return encodeSnapshot(this.state, recordNumber)
  }

  search(query: SearchQuery): SearchHit<D>[] {
    const checked = checkQuery(query)
    this.flush()
    const { state, params, feedback } = this
    const slots = state.slots
    if (query.mode === 'substring') return substringSearch(state, checked).map(({ slot, score }) => ({ record: slots.records[slot]!, score }))
    // The substring rule's top `limit` first (it uses the score scratch), then the ranking.
    let guaranteed = substringSearch(state, checked)
    const terms = this.termsOf(query.query)
    // Nothing found by either rule (a word of other scopes, say): no ranking to set up.
    if (guaranteed.length === 0 && !holdsAny(state, terms)) return []
    const kept = new Set(guaranteed.map(hit => hit.slot))
    const scoreOf = new Map<number, { score: number; matched: number }>()
    const rerank = rerankOn(this.levers, terms)
    const room = checked.limit - kept.size
    let ranked: Array<{ slot: number; score: number; matched: number }>
    // No term the partition's live records hold (a word of other scopes, say): nothing to rank,
    // every kept record scores 0.
    if (!holdsAny(state, terms)) ranked = []
    else if (room <= 0) {
      // The rule fills the page: no place for a record it does not find, and at its lowest score
      // the records holding a word of the query go first (wordsFirstAtFloor). Scores of the page only.
      for (const [slot, score] of scoresOf(state, params, terms, kept)) scoreOf.set(slot, { score, matched: terms.size })
      const holdsWord = (hit: ScoredSlot) => (scoreOf.get(hit.slot)?.score ?? 0) > 0
      const substringOf = (hit: ScoredSlot) => hit.score
      if (floorLacksWord(guaranteed, checked.limit, substringOf, holdsWord)) {
        const contenders = floorContenders(state, checked, terms, guaranteed, checked.limit)
        for (const { slot } of contenders) scoreOf.set(slot, scoreSlot(state, params, terms, slot))
        guaranteed = wordsFirstAtFloor(guaranteed, checked.limit, substringOf, contenders, holdsWord, (a, c) => slots.compare(c, a))
      }
      ranked = []
    }
    else {
      // The best candidates by BM25F (and feedback): the page, or the re-ranking depth.
      const found = rankedCandidates(state, params, feedback, terms, checked, kept, rerank ? Math.max(this.levers.depth, room) : room)
      ranked = found.ranked
      for (const [slot, scored] of found.kept) scoreOf.set(slot, scored)
    }
    let kepts = guaranteed.map(({ slot }) => ({ slot, score: scoreOf.get(slot)?.score ?? 0, matched: scoreOf.get(slot)?.matched ?? 0 }))
    if (rerank) {
      const scorer = candidateScorer(state, this.levers, terms)
      ranked = rerankBest(state, this.levers, terms, ranked, Math.max(0, room), scorer)
      if (kepts.length > 0) kepts = kepts.map(candidate => ({ slot: candidate.slot, score: scorer(candidate), matched: candidate.matched }))
    }
    const merged = [...ranked.slice(0, Math.max(0, room)), ...kepts]
    merged.sort((a, c) => slots.compare(c, a))
    const wanted = new Set(terms.keys())
    return merged.map(({ slot, score }) => ({ record: slots.records[slot]!, score: Math.round(score * 1e4) / 1e4, snippet: snippetOf(slots.records[slot]!.content, wanted, checked.needle) }))
  }

  private termsOf(text: string): ReadonlyMap<string, number> {
    const vocabulary = this.state.vocabulary
    const recent = this.recentTerms.get(text)
    if (recent !== undefined && recent.vocabulary === vocabulary && recent.termGeneration === vocabulary.termGeneration && recent.latinGeneration === vocabulary.latinGeneration) return recent.terms
    const terms = queryTerms(vocabulary, text, this.synonymWeight)
    if (recent === undefined && this.recentTerms.size >= RECENT_QUERIES) this.recentTerms.clear()
    this.recentTerms.set(text, { terms, vocabulary, termGeneration: vocabulary.termGeneration, latinGeneration: vocabulary.latinGeneration })
    return terms
  }

  private flush(): void {
    this.isBuilt = true
    if (this.pending.size === 0) return
    const batch = this.pending
    this.pending = new Map()
    const state = this.state
    if (state.slots.count === 0) state.reserve(batch.size)
    for (const record of batch.values()) {
      const kept = state.remove(record.id)
      if (record.status === 'active') state.add(record, kept ?? state.nextPosition++)
    }
    if (state.slots.count - state.slots.live > Math.max(1024, state.slots.live)) state.rebuild()
  }
}

/** The weighted terms of a query text, and the vocabulary and generations they were read at. */
interface RecentTerms {
  readonly terms: ReadonlyMap<string, number>
  readonly vocabulary: Vocabulary
  readonly termGeneration: number
  readonly latinGeneration: number
}

/** Whether a live record of `state` holds a term of `terms`. */
function holdsAny<D extends SearchDocument>(state: IndexState<D>, terms: ReadonlyMap<string, number>): boolean {
  const { vocabulary } = state
  for (const term of terms.keys()) {
    const id = vocabulary.termIds.get(term)
    if (id !== undefined && vocabulary.termFrequency[id]! > 0) return true
  }
  return false
}
