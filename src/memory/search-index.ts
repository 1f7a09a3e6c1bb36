/**
 * The full-text engine (src/search/) bound to memory records: the searched text of a record is
 * its title, its content followed by its episode's text, its tags followed by its keywords and
 * topics, and (ranked only) the date words of its `occurredAt`, else `createdAt` (kinds.ts). The
 * log engine and the stores create their indexes here.
 */
import { createSearchIndex as createIndex, restoreSearchIndex as restoreIndex, searchRecords as searchDocuments } from '../search/search.ts'
import type { SearchIndex, SearchIndexOptions, SearchQuery, SearchText } from '../search/search.ts'
import { DEFAULT_DATE_WORDS, recordDateWords, searchableContent, searchableTags, type MemoryDateWords } from './kinds.ts'
import type { MemoryRecord, MemorySearchHit } from './types.ts'

export { searchIndexFormat, snippetOf, type SearchIndexSnapshot as MemorySearchIndexSnapshot } from '../search/search.ts'

/** A search index over the records of one store and scope (see `createSearchIndex` in src/search/index.ts). */
export type MemorySearchIndex = SearchIndex<MemoryRecord>

/** Options of {@link createSearchIndex}: the engine's, without the text accessor (memory's is fixed), and which date gives a record's date words. */
export type MemorySearchIndexOptions = Omit<SearchIndexOptions<MemoryRecord>, 'text'> & {
  /**
   * Which date's weekday, day, month and year words are ranked in the `dates` field (weight
   * `fieldWeights.dates`, default 1.5): `'event'` (default) `occurredAt`, else `createdAt`;
   * `'occurred'` `occurredAt` only; `false` none. The substring rule never reads them.
   */
  dateWords?: MemoryDateWords
}

/** The text of a record as search reads it under a {@link MemoryDateWords} mode: title, content + episode, tags + keywords + topics, dates. */
export function memorySearchText(dateWords: MemoryDateWords = DEFAULT_DATE_WORDS): SearchText<MemoryRecord> {
  return SEARCH_TEXTS[dateWords === false ? 'off' : dateWords]
}

function textWithDates(dateWords: MemoryDateWords): SearchText<MemoryRecord> {
  return {
    title: record => record.title ?? '',
    content: searchableContent,
    tags: searchableTags,
    ...(dateWords === false ? {} : { dates: (record: MemoryRecord) => recordDateWords(record, dateWords) }),
  }
}

const SEARCH_TEXTS = { event: textWithDates('event'), occurred: textWithDates('occurred'), off: textWithDates(false) }

/** The text of a record as search reads it by default ({@link memorySearchText} of the default mode). */
export const MEMORY_SEARCH_TEXT: SearchText<MemoryRecord> = memorySearchText()

/** An empty ranked index over memory records. */
export function createSearchIndex(options: MemorySearchIndexOptions = {}): MemorySearchIndex {
  const { dateWords, ...engine } = options
  return createIndex<MemoryRecord>({ ...engine, text: memorySearchText(dateWords) })
}

/** The index a snapshot was taken of, over the partition's records in creation order (see `restoreSearchIndex` in src/search/index.ts); `options` must be those it was made with. */
export function restoreSearchIndex(snapshot: unknown, records: readonly MemoryRecord[], options: MemorySearchIndexOptions = {}): MemorySearchIndex {
  const { dateWords, ...engine } = options
  return restoreIndex<MemoryRecord>(snapshot, records, { ...engine, text: memorySearchText(dateWords) })
}

/** The documented substring rule over memory records, episodes, keywords and topics included (see `searchRecords` in src/search/substring-rule.ts). */
export function searchRecords(records: readonly MemoryRecord[], query: SearchQuery): MemorySearchHit[] {
  return searchDocuments(records, query, MEMORY_SEARCH_TEXT)
}

/**
 * The documented rule's score of one record for `query`, its filters included: the number of
 * occurrences of the query {@link searchRecords} counts, 0 when the record fails a filter or holds
 * none.
 */
export function substringScoreOf(record: MemoryRecord, query: SearchQuery): number {
  return searchRecords([record], { ...query, limit: 1 })[0]?.score ?? 0
}
