/**
 * The shapes the full-text engine reads and returns. The engine knows documents only through
 * these structural types: a memory record (`MemoryRecord`) and a memory query
 * (`MemorySearchQuery`) satisfy them as they are, and the caller says which text of a document is
 * searched through a {@link SearchText} accessor.
 */

/** The fields the engine reads from an indexed document. */
export interface SearchDocument {
  /** Stable identity: a later state of the same document has the same id. */
  readonly id: string
  /** Only `'active'` documents are indexed and returned. */
  readonly status: string
  /** Matched by the `kinds` filter. */
  readonly kind: string
  /** ISO 8601 instant: the `after` / `before` filters and the newest-first tie order. */
  readonly createdAt: string
  readonly title?: string
  /** The text snippets are cut from. */
  readonly content: string
  /** Matched by the `tags` filter (all of, case-insensitive). */
  readonly tags: readonly string[]
  /** Matched by the `keywords` filter (all of, case-insensitive). */
  readonly keywords?: readonly string[]
  /** Matched by the `topics` filter (any of, case-insensitive). */
  readonly topics?: readonly string[]
}

/**
 * The fields ranked search reads, in the order of {@link SearchIndexOptions.fieldWeights}. `dates`
 * is ranking-only ({@link SearchText.dates}): the substring rule, proximity and snippets read
 * only the title, content and tags.
 */
export const SEARCH_FIELDS = ['title', 'content', 'tags', 'dates'] as const
/** One of {@link SEARCH_FIELDS}. */
export type SearchField = (typeof SEARCH_FIELDS)[number]

/**
 * The searched text of a document, per field. Both the ranked index and the substring rule read
 * documents only through it, so a caller whose documents carry more text (the memory layer adds
 * episodes to the content and keywords/topics to the tags) passes its own.
 */
export interface SearchText<D extends SearchDocument = SearchDocument> {
  title(document: D): string
  content(document: D): string
  tags(document: D): readonly string[]
  /**
   * Words that ranked search indexes and weighs in a field of their own (`fieldWeights.dates`),
   * and that the substring rule, the proximity bonus and snippets never read: the memory layer
   * puts a record's date words here. Default: none.
   */
  dates?(document: D): string
}

/** A search request. `query` is required; everything else is optional. */
export interface SearchQuery {
  query: string
  /** Only documents of one of these kinds (an empty list matches nothing). */
  kinds?: readonly string[]
  /** Only documents carrying every listed tag (case-insensitive; an empty list adds no condition). */
  tags?: readonly string[]
  /** Only documents carrying every listed keyword (case-insensitive; an empty list adds no condition). */
  keywords?: readonly string[]
  /** Only documents with at least one of these topics (case-insensitive; an empty list matches nothing). */
  topics?: readonly string[]
  /** Only documents created at or after this ISO 8601 instant. */
  after?: string
  /** Only documents created strictly before this ISO 8601 instant. */
  before?: string
  /** Most results, 1 to `MAX_SEARCH_LIMIT` (100); default `DEFAULT_SEARCH_LIMIT` (10). */
  limit?: number
  /** `'ranked'` (default) or `'substring'` (exactly the documented rule, `searchRecords`). */
  mode?: 'ranked' | 'substring'
}

/** One result: the document, its score (ranked: BM25F points; substring: occurrences), and for ranked search a snippet. */
export interface SearchHit<D extends SearchDocument = SearchDocument> {
  record: D
  score: number
  /** Ranked search only: up to 160 code points of the content around the best match. */
  snippet?: string
}

/** Pseudo-relevance feedback settings of {@link SearchIndexOptions} (RM3-style). */
export interface SearchFeedbackOptions {
  /** Best-ranked records that lend terms; default 10, 0 turns feedback off. */
  records?: number
  /** Most terms lent; default 20. */
  terms?: number
  /** Weight of the strongest lent term, relative to a query term; default 0.1. */
  weight?: number
  /** A term is lent only when at least this many records hold it; default 2 (a term of one record brings back only that record). */
  minRecords?: number
  /** A term is lent only when at most this share of the records hold it; default 0.1. */
  maxShare?: number
}

/** Proximity bonus settings of {@link SearchIndexOptions}. */
export interface SearchProximityOptions {
  /** Two query terms count as near when at most this many token positions apart; default 3. */
  window?: number
  /** Bonus per near pair of distinct query terms, times the smaller idf of the two; default 0.5, 0 turns it off. */
  weight?: number
}

/**
 * Options of `createSearchIndex`. Every field is optional; the defaults are the store defaults.
 */
export interface SearchIndexOptions<D extends SearchDocument = SearchDocument> {
  /**
   * Weight of a term occurrence per field (BM25F). Default `{ title: 2, content: 1, tags: 2, dates: 1.5 }`:
   * title and tags above content; `dates` weighs the words of {@link SearchText.dates}.
   */
  fieldWeights?: Partial<Record<SearchField, number>>
  /** BM25 term-frequency saturation, default 1.2. */
  k1?: number
  /** BM25 length normalization in [0, 1], default 0.75. */
  b?: number
  /**
   * Pseudo-relevance feedback (on by default): the best `records` (5) filtered results lend their
   * `terms` (20) most telling terms (share of the record × record score / best score × idf), held
   * by `minRecords` (2) to `maxShare` (10%) of the records, at up to `weight` (0.1) of a query term.
   * Lent terms only add to the scores of the first ranking, their postings at most a quarter of
   * the query terms' (or 1,024); no feedback runs when the substring rule's hits fill the page.
   * `{ records: 0 }` turns it off.
   */
  feedback?: SearchFeedbackOptions
  /**
   * Proximity bonus (on by default): among the {@link rerankDepth} best candidates, each pair of
   * distinct query terms found within `window` (3) token positions of each other (stop-words are
   * not counted) adds `weight` (0.5) × the smaller idf of the two. `{ weight: 0 }` turns it off.
   */
  proximity?: SearchProximityOptions
  /**
   * Multiplier of the score of a candidate one of whose tags the query names (every term of the
   * tag is a term of the query), among the {@link rerankDepth} best candidates; default 1.5, 1
   * turns it off.
   */
  tagBoost?: number
  /** Candidates (best by BM25F and feedback, filters passed) that proximity and the tag boost re-rank; default 100. */
  rerankDepth?: number
  /** Irregular verb and noun forms stemmed as their base ("went" as "go", "children" as "child"); default true. */
  irregularForms?: boolean
  /**
   * Query expansion by light synonym groups of everyday English (synonyms.ts: "kid" and "child",
   * "mom" and "mother", British and American spellings): a query word also looks for the indexed
   * words of its group, each at `weight` of a query term; `{ weight: 0 }` is off.
   */
  synonyms?: SearchSynonymOptions
  /** Which text of a document is searched; default: `title`, `content` and `tags` as they are. */
  text?: SearchText<D>
}

/** Settings of the synonym expansion of {@link SearchIndexOptions.synonyms}. */
export interface SearchSynonymOptions {
  /** Weight of a synonym beside a query term (1). */
  weight?: number
}

/**
 * A search index over the documents of one partition (one store and scope), kept current by its
 * owner: `update` is called with the document after every change to it, in order (a superseded
 * or deleted document must disappear from results).
 */
export interface SearchIndex<D extends SearchDocument = SearchDocument> {
  /** Takes in the latest state of a document (any status). Cost: the document's own length. */
  update(record: D): void
  /**
   * Active documents matching `query`, best first, filters before the limit. `mode: 'substring'`
   * gives exactly `searchRecords`; the default ranked mode is described at `createSearchIndex`.
   *
   * @throws AgentError `MEMORY_QUERY_INVALID` as `searchRecords`.
   */
  search(query: SearchQuery): SearchHit<D>[]
  /** Number of active documents indexed. */
  readonly size: number
  /** True once the index is built (by a search, `size` or a restore); updates before that are only noted. */
  readonly built?: boolean
  /**
   * The persisted form of the index with every update taken in, or `undefined` when it was never
   * built (no search yet; see `restoreSearchIndex`). `recordNumber(record)` is the number a
   * checkpoint stores for an indexed document: its place in the partition's creation order.
   */
  snapshot?(recordNumber: (record: D) => number): SearchIndexSnapshot | undefined
}

/**
 * A built index as JSON values, for checkpoints (docs/log-format.md "Checkpoints"): the
 * vocabularies as strings in id order, and every number list in `data` as unsigned LEB128 varints
 * (zigzag deltas for slot keys, record numbers and positions), in base64. Tombstoned slots are
 * kept as they are (they go at the next rebuild).
 */
export interface SearchIndexSnapshot {
  /** `searchIndexFormat()` of the code that wrote it: another format is not restored (the index is rebuilt). */
  format: string
  /** Slots used, live and tombstoned. */
  slots: number
  /** The position the next new record gets (ties in ranking go to the greater position). */
  nextPosition: number
  /** Terms (stems) by id. */
  terms: string[]
  /** Runs (maximal letter/digit/mark sequences, lower case) by id. */
  runs: string[]
  /** Surface words (folded tokens as written) by id. */
  surfaces: string[]
  /**
   * Base64 of, in order: per slot its record number + 1 (0 for a tombstone), per slot its
   * position, per slot its 4 field lengths (title, content, tags, dates), then 1 and per slot its creation time in ms (0 instead,
   * and no times, when a live record's time is not a number: times are then parsed again on
   * restore), the term and run posting lists (per list: pair count, then key delta and
   * value per pair), per surface its term id, per surface its live record count, and the field
   * counts above the inline maximum (count, then slot × 4 + field and count per entry).
   */
  data: string
}
