/**
 * The full-text engine (src/search/) bound to memory records: the searched text of a record is
 * its title, its content followed by its episode's text, and its tags followed by its keywords
 * and topics (kinds.ts). The log engine and the stores create their indexes here.
 */
import { createSearchIndex as createIndex, restoreSearchIndex as restoreIndex, searchRecords as searchDocuments } from '../search/search.ts'
import type { SearchIndex, SearchIndexOptions, SearchQuery, SearchText } from '../search/search.ts'
import { searchableContent, searchableTags } from './kinds.ts'
import type { MemoryRecord, MemorySearchHit } from './types.ts'

export { searchIndexFormat, snippetOf, type SearchIndexSnapshot as MemorySearchIndexSnapshot } from '../search/search.ts'

/** A search index over the records of one store and scope (see `createSearchIndex` in src/search/index.ts). */
export type MemorySearchIndex = SearchIndex<MemoryRecord>

/** Options of {@link createSearchIndex}: the engine's, without the text accessor (memory's is fixed). */
export type MemorySearchIndexOptions = Omit<SearchIndexOptions<MemoryRecord>, 'text'>

/** The text of a record as search reads it: title, content + episode, tags + keywords + topics. */
export const MEMORY_SEARCH_TEXT: SearchText<MemoryRecord> = {
  title: record => record.title ?? '',
  content: searchableContent,
  tags: searchableTags,
}

/** An empty ranked index over memory records. */
export function createSearchIndex(options: MemorySearchIndexOptions = {}): MemorySearchIndex {
  return createIndex<MemoryRecord>({ ...options, text: MEMORY_SEARCH_TEXT })
}

/** The index a snapshot was taken of, over the partition's records in creation order (see `restoreSearchIndex` in src/search/index.ts). */
export function restoreSearchIndex(snapshot: unknown, records: readonly MemoryRecord[], options: MemorySearchIndexOptions = {}): MemorySearchIndex {
  return restoreIndex<MemoryRecord>(snapshot, records, { ...options, text: MEMORY_SEARCH_TEXT })
}

/** The documented substring rule over memory records, episodes, keywords and topics included (see `searchRecords` in src/search/substring-rule.ts). */
export function searchRecords(records: readonly MemoryRecord[], query: SearchQuery): MemorySearchHit[] {
  return searchDocuments(records, query, MEMORY_SEARCH_TEXT)
}
