/**
 * Memory search: the documented substring rule ({@link searchRecords}) and the ranked index that
 * serves every store's search by default ({@link createSearchIndex}, issue 7).
 *
 * Source: capability document, "Search counts case-insensitive matches of `query` in the title,
 * content, and tags, and returns 10 results by default"; issue 7, "Ranked full-text search per
 * scope ... Every record that the documented rule returns must still be returned".
 */
import { agentError } from '../errors.ts'
import { isInstant, parseInstant } from './records.ts'
import { MEMORY_LIMITS } from './schemas.ts'
import { editDistance, foldText, stemWord, tokenizeWords } from './text.ts'
import { searchableContent, searchableTags } from './kinds.ts'
import type { MemoryRecord, MemorySearchHit, MemorySearchQuery } from './types.ts'

/** Results returned when a query gives no `limit` (source: capability document). */
export const DEFAULT_SEARCH_LIMIT = 10

/** Most results one search returns (`limit` above it is an input error): `MEMORY_LIMITS.searchLimit`, 100. */
export const MAX_SEARCH_LIMIT: number = MEMORY_LIMITS.searchLimit

/**
 * Searches `records` (one store and scope, in creation order) with the documented rule:
 *
 * - score = number of case-insensitive, non-overlapping occurrences of the whole `query` string
 *   in the title, plus in the content, plus in each tag (counted per field, never across fields);
 * - only `active` records with score > 0 are hits;
 * - filters apply before the limit: `kinds` (the record's kind is one of them; an empty list
 *   matches nothing), `tags` (the record carries every listed tag, compared case-insensitively;
 *   an empty list adds no condition), `after` (created at or after), `before` (created strictly
 *   before); instants are compared as `Date` values;
 * - order: score descending, then newest first (`createdAt`, then position in `records`);
 * - at most `limit` hits, default {@link DEFAULT_SEARCH_LIMIT}.
 *
 * @throws AgentError `MEMORY_QUERY_INVALID` when `query` is empty or blank, `after`/`before` is
 * not a parsable instant, or `limit` is not an integer from 1 to {@link MAX_SEARCH_LIMIT} (fault class 2: an empty query must
 * not return everything, a bad date must not silently return nothing, `limit: 0` must not become 10).
 */
export function searchRecords(records: readonly MemoryRecord[], query: MemorySearchQuery): MemorySearchHit[] {
  const checked = checkQuery(query)
  const { needle, limit } = checked
  const hits: Array<MemorySearchHit & { position: number; created: number }> = []
  records.forEach((record, position) => {
    if (record.status !== 'active') return
    const created = parseInstant(record.createdAt) ?? Number.NaN
    if (!passesFilters(record, created, checked)) return
    // Issue 5: the episode is read with the content; keywords and topics with the tags.
    let score = countOccurrences(record.title ?? '', needle) + countOccurrences(searchableContent(record), needle)
    for (const tag of searchableTags(record)) score += countOccurrences(tag, needle)
    if (score > 0) hits.push({ record, score, position, created })
  })
  hits.sort((a, b) => b.score - a.score || b.created - a.created || b.position - a.position)
  return hits.slice(0, limit).map(({ record, score }) => ({ record, score }))
}

/** Non-overlapping occurrences of `needle` (already lower case) in `text`, ignoring case. */
export function countOccurrences(text: string, needle: string): number {
  if (needle === '' || text.length === 0) return 0
  const haystack = text.toLowerCase()
  let count = 0
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count++
  return count
}

type CheckedQuery = ReturnType<typeof checkQuery>

/**
 * Whether an active `record` passes the `kinds`, `tags`, `after` and `before` filters of `query`
 * (the same rule every search applies before its limit). Validates `query` like {@link searchRecords}.
 */
export function recordMatchesFilters(record: MemoryRecord, query: MemorySearchQuery): boolean {
  return record.status === 'active' && passesFilters(record, parseInstant(record.createdAt) ?? Number.NaN, checkQuery(query))
}

/** The `kinds`, `tags`, `after` and `before` conditions (applied before any limit). */
function passesFilters(record: MemoryRecord, created: number, { kinds, tags, after, before, keywords, topics }: CheckedQuery): boolean {
  if (kinds && !kinds.has(record.kind)) return false
  // Issue 5: keywords all-of (like tags), topics any-of (like kinds), both case-insensitive.
  if (keywords.length > 0 && !keywords.every(keyword => record.keywords?.some(own => own.toLowerCase() === keyword))) return false
  if (topics && !record.topics?.some(topic => topics.has(topic.toLowerCase()))) return false
  if (after !== undefined && !(created >= after)) return false
  if (before !== undefined && !(created < before)) return false
  if (tags.length > 0) {
    const carried = new Set(record.tags.map(tag => tag.toLowerCase()))
    if (!tags.every(tag => carried.has(tag))) return false
  }
  return true
}

function checkQuery(query: MemorySearchQuery) {
  if (typeof query.query !== 'string' || query.query.trim() === '') {
    throw agentError('MEMORY_QUERY_INVALID', 'the search query is empty', 'pass the words to look for in `query`, for example "favorite color"')
  }
  for (const field of ['after', 'before'] as const) {
    const value = query[field]
    if (value !== undefined && !isInstant(value)) {
      throw agentError('MEMORY_QUERY_INVALID', `\`${field}\` is not a date: ${JSON.stringify(value)}`, `pass an ISO 8601 instant with a zone such as "2024-05-01T09:00:00Z" or a date such as "2024-05-01", or leave \`${field}\` out`, { field })
    }
  }
  const limit = query.limit ?? DEFAULT_SEARCH_LIMIT
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
    throw agentError('MEMORY_QUERY_INVALID', `\`limit\` must be a whole number from 1 to ${MAX_SEARCH_LIMIT}, got ${JSON.stringify(query.limit)}`, `pass a limit such as 5, or leave it out for ${DEFAULT_SEARCH_LIMIT}`, { field: 'limit' })
  }
  if (query.mode !== undefined && query.mode !== 'ranked' && query.mode !== 'substring') {
    throw agentError('MEMORY_QUERY_INVALID', `\`mode\` must be "ranked" or "substring", got ${JSON.stringify(query.mode)}`, 'leave `mode` out for ranked search, or pass "substring" for the documented rule', { field: 'mode' })
  }
  return {
    needle: query.query.toLowerCase(),
    kinds: query.kinds ? new Set<string>(query.kinds) : undefined,
    tags: (query.tags ?? []).map(tag => tag.toLowerCase()),
    keywords: (query.keywords ?? []).map(keyword => keyword.toLowerCase()),
    topics: query.topics ? new Set(query.topics.map(topic => topic.toLowerCase())) : undefined,
    after: parseInstant(query.after),
    before: parseInstant(query.before),
    limit,
  }
}


// ---------------------------------------------------------------------------------------------
// Ranked index
// ---------------------------------------------------------------------------------------------

/** The fields ranked search reads, in the order of {@link MemorySearchIndexOptions.fieldWeights}. */
export const SEARCH_FIELDS = ['title', 'content', 'tags'] as const
type SearchField = (typeof SEARCH_FIELDS)[number]

/**
 * Options of {@link createSearchIndex}. Every field is optional; the defaults are the store
 * defaults (the log engine creates indexes without options).
 */
export interface MemorySearchIndexOptions {
  /**
   * Weight of a term occurrence per field (BM25F). Default `{ title: 2, content: 1, tags: 2 }`:
   * title and tags above content (issue 7, "field weights (title and tags above content)").
   */
  fieldWeights?: Partial<Record<SearchField, number>>
  /** BM25 term-frequency saturation, default 1.2. */
  k1?: number
  /** BM25 length normalization in [0, 1], default 0.75. */
  b?: number
  /**
   * Pseudo-relevance feedback: terms of the best `records` results (default 0: off) are added to the
   * query, the `terms` (default 10) most telling ones at up to `weight` (default 0.3) of a query
   * term. `{ records: 0 }` turns it off.
   */
  feedback?: { records?: number; terms?: number; weight?: number }
}

/** Default {@link MemorySearchIndexOptions}. */
export const DEFAULT_SEARCH_INDEX_OPTIONS: {
  readonly fieldWeights: Readonly<Record<SearchField, number>>
  readonly k1: number
  readonly b: number
  readonly feedback: Readonly<{ records: number; terms: number; weight: number }>
} = {
  fieldWeights: { title: 2, content: 1, tags: 2 },
  k1: 1.2,
  b: 0.75,
  feedback: { records: 0, terms: 10, weight: 0.3 },
}

/**
 * A search index over the records of one store and scope (one partition), kept current by the
 * log's materialized state: `update` is called with the record after every event on it, in log
 * order (a superseded or deleted record must disappear from results).
 */
export interface MemorySearchIndex {
  /** Takes in the latest state of a record (any status). Cost: the record's own length. */
  update(record: MemoryRecord): void
  /**
   * Active records matching `query`, best first, filters before the limit. `mode: 'substring'`
   * gives exactly {@link searchRecords}; the default ranked mode is described at {@link createSearchIndex}.
   *
   * @throws AgentError `MEMORY_QUERY_INVALID` as {@link searchRecords}.
   */
  search(query: MemorySearchQuery): MemorySearchHit[]
  /** Number of active records indexed. */
  readonly size: number
}

interface IndexedRecord {
  record: MemoryRecord
  /** Order of first insertion (the substring rule's last tie-break). */
  position: number
  created: number
  /** Lower-cased fields for the substring rule (cached: the rule runs on every ranked search). */
  lower: { title: string; content: string; tags: string[] }
  /** Term -> occurrences per field, in {@link SEARCH_FIELDS} order. */
  terms: Map<string, [number, number, number]>
  /** Field lengths in terms. */
  lengths: [number, number, number]
  /** Distinct Latin surface words of the record. */
  surfaces: string[]
  /** Scratch of the running search: its stamp and the score accumulated so far. */
  stamp: number
  score: number
}

const LATIN_SURFACE = /^[a-z]+$/

/**
 * Creates an empty {@link MemorySearchIndex} with ranked search (issue 7).
 *
 * Ranked mode (the default):
 * - terms come from {@link tokenize} (stemmed, accent-folded, stop-words dropped, CJK bigrams) of
 *   the title, content and tags; a query is tokenized the same way;
 * - score = BM25F: per query term, `idf × tf' × (k1 + 1) / (tf' + k1)` with
 *   `tf' = Σ weight(field) × tf(field) / (1 − b + b × len(field) / avgLen(field))` and
 *   `idf = ln(1 + (N − n + 0.5) / (n + 0.5))` over the partition's active records (`avgLen` over
 *   the records where the field is not empty);
 * - every record the substring rule ({@link searchRecords}) returns for the same query and
 *   filters is returned too (ranking adds recall, never removes it): the substring rule's top
 *   `limit` are kept and the remaining places go to the best-ranked other records; a record found
 *   only by the substring rule scores 0 and comes after ranked ones;
 * - filters (`kinds`, `tags`, `after`, `before`) apply before the limit; ties go to the newest;
 *   only active records are indexed, so superseded and deleted records never appear;
 * - each hit has a `snippet` around its best match.
 *
 * Cost: `update` is proportional to the record's length; a search visits the postings of the
 * query's terms (no per-record scan besides the cached substring check) and keeps the top
 * `limit` with a bounded heap.
 */
export function createSearchIndex(options: MemorySearchIndexOptions = {}): MemorySearchIndex {
  const weights = [
    options.fieldWeights?.title ?? DEFAULT_SEARCH_INDEX_OPTIONS.fieldWeights.title,
    options.fieldWeights?.content ?? DEFAULT_SEARCH_INDEX_OPTIONS.fieldWeights.content,
    options.fieldWeights?.tags ?? DEFAULT_SEARCH_INDEX_OPTIONS.fieldWeights.tags,
  ] as const
  const feedback = { ...DEFAULT_SEARCH_INDEX_OPTIONS.feedback, ...options.feedback }
  const k1 = options.k1 ?? DEFAULT_SEARCH_INDEX_OPTIONS.k1
  const b = options.b ?? DEFAULT_SEARCH_INDEX_OPTIONS.b
  const docs = new Map<string, IndexedRecord>()
  // Term -> record -> occurrences per field: the counts sit in the posting so that a search reads
  // them without a second lookup.
  const postings = new Map<string, Map<IndexedRecord, [number, number, number]>>()
  const lengthSums = [0, 0, 0]
  // Records with a non-empty field: average lengths are over these (a missing title is no short title).
  const fieldCounts = [0, 0, 0]
  const positions = new Map<string, number>()
  // Indexed Latin words as written (folded), with their term and how many records hold them: the
  // vocabulary that misspelt or run-together query words are matched against.
  const surfaces = new Map<string, { term: string; count: number }>()

  function remove(id: string): void {
    const doc = docs.get(id)
    if (!doc) return
    docs.delete(id)
    for (const term of doc.terms.keys()) {
      const posting = postings.get(term)!
      posting.delete(doc)
      if (posting.size === 0) postings.delete(term)
    }
    for (let field = 0; field < 3; field++) {
      lengthSums[field]! -= doc.lengths[field]!
      if (doc.lengths[field]! > 0) fieldCounts[field]!--
    }
    for (const surface of doc.surfaces) {
      const entry = surfaces.get(surface)!
      if (--entry.count === 0) surfaces.delete(surface)
    }
  }

  function add(record: MemoryRecord): void {
    let position = positions.get(record.id)
    if (position === undefined) positions.set(record.id, position = positions.size)
    const terms = new Map<string, [number, number, number]>()
    const lengths: [number, number, number] = [0, 0, 0]
    const fields = [record.title ?? '', searchableContent(record), searchableTags(record).join(' \n ')]
    const words = new Set<string>()
    fields.forEach((text, field) => {
      for (const { surface, term } of tokenizeWords(text)) {
        let counts = terms.get(term)
        if (!counts) terms.set(term, counts = [0, 0, 0])
        counts[field]!++
        lengths[field]!++
        if (LATIN_SURFACE.test(surface)) words.add(surface)
      }
    })
    for (const surface of words) {
      const entry = surfaces.get(surface)
      if (entry) entry.count++
      else surfaces.set(surface, { term: stemWord(surface), count: 1 })
    }
    const doc: IndexedRecord = {
      record,
      position,
      created: parseInstant(record.createdAt) ?? Number.NaN,
      lower: { title: (record.title ?? '').toLowerCase(), content: searchableContent(record).toLowerCase(), tags: searchableTags(record).map(tag => tag.toLowerCase()) },
      terms,
      lengths,
      surfaces: [...words],
      stamp: 0,
      score: 0,
    }
    docs.set(record.id, doc)
    for (const [term, counts] of terms) {
      let posting = postings.get(term)
      if (!posting) postings.set(term, posting = new Map())
      posting.set(doc, counts)
    }
    for (let field = 0; field < 3; field++) {
      lengthSums[field]! += lengths[field]!
      if (lengths[field]! > 0) fieldCounts[field]!++
    }
  }

  function substringScore(doc: IndexedRecord, needle: string): number {
    let score = countLower(doc.lower.title, needle) + countLower(doc.lower.content, needle)
    for (const tag of doc.lower.tags) score += countLower(tag, needle)
    return score
  }

  /** The substring rule over the index (same result as {@link searchRecords} on the active records). */
  function substringSearch(checked: CheckedQuery): Array<{ doc: IndexedRecord; score: number }> {
    const top = new TopK<{ doc: IndexedRecord; score: number }>(checked.limit, (a, c) => a.score - c.score || a.doc.created - c.doc.created || a.doc.position - c.doc.position)
    for (const doc of docs.values()) {
      const score = substringScore(doc, checked.needle)
      if (score > 0 && passesFilters(doc.record, doc.created, checked)) top.push({ doc, score })
    }
    return top.sorted()
  }

  /**
   * Query terms with weights: each known term once (weight 1); a word the partition never uses is
   * matched to indexed words one edit away (two for words of 8+ letters), or split into two
   * indexed words when it was written together ("roadtrip" -> "road", "trip").
   */
  function queryTerms(text: string): Map<string, number> {
    const weighted = new Map<string, number>()
    const add = (term: string, weight: number) => weighted.set(term, Math.max(weighted.get(term) ?? 0, weight))
    for (const { surface, term } of tokenizeWords(text)) {
      if (postings.has(term) || !LATIN_SURFACE.test(surface) || surface.length < 4) {
        add(term, 1)
        continue
      }
      let found = false
      for (let cut = 3; cut <= surface.length - 3; cut++) {
        const left = surfaces.get(surface.slice(0, cut))
        const right = surfaces.get(surface.slice(cut))
        if (left && right) {
          add(left.term, 1)
          add(right.term, 1)
          found = true
          break
        }
      }
      if (found) continue
      const max = surface.length >= 8 ? 2 : 1
      let best = max + 1
      let matches: string[] = []
      for (const [word, entry] of surfaces) {
        const distance = editDistance(surface, word, Math.min(max, best))
        if (distance > max) continue
        if (distance < best) {
          best = distance
          matches = [entry.term]
        }
        else if (distance === best) matches.push(entry.term)
      }
      for (const match of matches) add(match, FUZZY_WEIGHT)
    }
    return weighted
  }

  let stamp = 0
  function rank(terms: ReadonlyMap<string, number>): Map<IndexedRecord, number> {
    const scores = new Map<IndexedRecord, number>()
    const count = docs.size
    if (count === 0) return scores
    const average = lengthSums.map((sum, field) => Math.max(sum / Math.max(fieldCounts[field]!, 1), 1e-9))
    const [w0, w1, w2] = weights
    const [a0, a1, a2] = [b / average[0]!, b / average[1]!, b / average[2]!]
    const base = 1 - b
    // Scores accumulate on the records themselves (stamped per search): no map per posting.
    const current = ++stamp
    const touched: IndexedRecord[] = []
    for (const [term, weight] of terms) {
      const posting = postings.get(term)
      if (!posting) continue
      const idf = weight * Math.log(1 + (count - posting.size + 0.5) / (posting.size + 0.5))
      for (const [doc, counts] of posting) {
        const lengths = doc.lengths
        const tf = (counts[0] === 0 ? 0 : w0 * counts[0] / (base + a0 * lengths[0]))
          + (counts[1] === 0 ? 0 : w1 * counts[1] / (base + a1 * lengths[1]))
          + (counts[2] === 0 ? 0 : w2 * counts[2] / (base + a2 * lengths[2]))
        const points = idf * tf * (k1 + 1) / (tf + k1)
        if (doc.stamp !== current) {
          doc.stamp = current
          doc.score = points
          touched.push(doc)
        }
        else doc.score += points
      }
    }
    for (const doc of touched) scores.set(doc, doc.score)
    return scores
  }

  /**
   * Pseudo-relevance feedback (RM3-style): the best `feedback.records` filtered records lend their
   * `feedback.terms` most telling terms (term share in the record × record score × idf) to a
   * second ranking, at `feedback.weight` of an original query term.
   */
  function withFeedback(terms: ReadonlyMap<string, number>, scores: Map<IndexedRecord, number>, checked: CheckedQuery): Map<IndexedRecord, number> {
    const best = new TopK<[IndexedRecord, number]>(feedback.records, (a, c) => a[1] - c[1])
    for (const entry of scores) if (passesFilters(entry[0].record, entry[0].created, checked)) best.push(entry)
    const top = best.sorted()
    if (top.length === 0) return scores
    const maxScore = top[0]![1]
    const lent = new Map<string, number>()
    for (const [doc, score] of top) {
      const length = doc.lengths[0] + doc.lengths[1] + doc.lengths[2]
      for (const [term, counts] of doc.terms) {
        if (terms.has(term)) continue
        const df = postings.get(term)!.size
        if (df < 2) continue // a term of one record only brings back that record
        const idf = Math.log(1 + (docs.size - df + 0.5) / (df + 0.5))
        lent.set(term, (lent.get(term) ?? 0) + (counts[0] + counts[1] + counts[2]) / length * score / maxScore * idf)
      }
    }
    const chosen = [...lent].sort((a, c) => c[1] - a[1]).slice(0, feedback.terms)
    if (chosen.length === 0) return scores
    const strongest = chosen[0]![1]
    const expanded = new Map(terms)
    for (const [term, value] of chosen) expanded.set(term, feedback.weight * value / strongest)
    return rank(expanded)
  }

  // Updates are taken in lazily: a replay only notes each record's latest state here, and the
  // partition is indexed (in first-update order, so positions are the same) on its first search.
  let pending = new Map<string, MemoryRecord>()
  function flush(): void {
    if (pending.size === 0) return
    const batch = pending
    pending = new Map()
    for (const record of batch.values()) {
      remove(record.id)
      if (record.status === 'active') add(record)
    }
  }

  return {
    get size() {
      flush()
      return docs.size
    },
    update(record) {
      pending.set(record.id, record)
    },
    search(query) {
      const checked = checkQuery(query)
      flush()
      if (query.mode === 'substring') return substringSearch(checked).map(({ doc, score }) => ({ record: doc.record, score }))
      const terms = queryTerms(query.query)
      let scores = rank(terms)
      if (feedback.records > 0 && feedback.terms > 0 && feedback.weight > 0) scores = withFeedback(terms, scores, checked)
      const guaranteed = substringSearch(checked)
      const kept = new Set(guaranteed.map(hit => hit.doc))
      const byRank = (a: { doc: IndexedRecord; score: number }, c: { doc: IndexedRecord; score: number }) => a.score - c.score || a.doc.created - c.doc.created || a.doc.position - c.doc.position
      const top = new TopK<{ doc: IndexedRecord; score: number }>(checked.limit - kept.size, byRank)
      for (const [doc, score] of scores) {
        if (!kept.has(doc) && passesFilters(doc.record, doc.created, checked)) top.push({ doc, score })
      }
      const merged = [...top.sorted(), ...guaranteed.map(({ doc }) => ({ doc, score: scores.get(doc) ?? 0 }))]
      merged.sort((a, c) => byRank(c, a))
      const wanted = new Set(terms.keys())
      return merged.map(({ doc, score }) => ({ record: doc.record, score: Math.round(score * 1e4) / 1e4, snippet: snippetOf(doc.record.content, wanted, checked.needle) }))
    },
  }
}

/** Weight of a query term reached through a corrected spelling. */
const FUZZY_WEIGHT = 0.8

function countLower(haystack: string, needle: string): number {
  if (haystack.length === 0) return 0
  let count = 0
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count++
  return count
}

/** Keeps the `capacity` greatest items under `compare` (a min-heap); `sorted()` gives them greatest first. */
class TopK<T> {
  private readonly heap: T[] = []
  constructor(private readonly capacity: number, private readonly compare: (a: T, b: T) => number) {}

  push(item: T): void {
    if (this.capacity <= 0) return
    const heap = this.heap
    if (heap.length < this.capacity) {
      heap.push(item)
      let at = heap.length - 1
      while (at > 0) {
        const parent = (at - 1) >> 1
        if (this.compare(heap[at]!, heap[parent]!) >= 0) break
        ;[heap[at], heap[parent]] = [heap[parent]!, heap[at]!]
        at = parent
      }
      return
    }
    if (this.compare(item, heap[0]!) <= 0) return
    heap[0] = item
    let at = 0
    for (;;) {
      const left = 2 * at + 1
      const right = left + 1
      let least = at
      if (left < heap.length && this.compare(heap[left]!, heap[least]!) < 0) least = left
      if (right < heap.length && this.compare(heap[right]!, heap[least]!) < 0) least = right
      if (least === at) break
      ;[heap[at], heap[least]] = [heap[least]!, heap[at]!]
      at = least
    }
  }

  sorted(): T[] {
    return [...this.heap].sort((a, b) => this.compare(b, a))
  }
}

/** Longest snippet, in code points. */
export const SNIPPET_CODE_POINTS = 160

const SNIPPET_WORD = /[\p{L}\p{N}\p{M}]+/gu

/**
 * Up to {@link SNIPPET_CODE_POINTS} code points of `content` around the first word whose term is
 * in `terms` (or the first occurrence of `needle`), cut on code point boundaries, with `…` where
 * text was left out. Content that fits is returned whole.
 */
export function snippetOf(content: string, terms: ReadonlySet<string>, needle = ''): string {
  const points = Array.from(content)
  if (points.length <= SNIPPET_CODE_POINTS) return content
  let unitAt = -1
  for (const match of content.matchAll(SNIPPET_WORD)) {
    const folded = foldText(match[0])
    if (terms.has(stemWord(folded)) || [...terms].some(term => term.length > 1 && folded.includes(term) && /[^\p{Script=Latin}\p{N}]/u.test(term))) {
      unitAt = match.index
      break
    }
  }
  if (unitAt === -1 && needle !== '') unitAt = content.toLowerCase().indexOf(needle)
  // Code point index of the match, then a window that starts a little before it.
  const pointAt = unitAt <= 0 ? 0 : Array.from(content.slice(0, unitAt)).length
  const start = Math.max(0, Math.min(pointAt - 40, points.length - SNIPPET_CODE_POINTS))
  const end = Math.min(points.length, start + SNIPPET_CODE_POINTS)
  return `${start > 0 ? '…' : ''}${points.slice(start, end).join('').trim()}${end < points.length ? '…' : ''}`
}
