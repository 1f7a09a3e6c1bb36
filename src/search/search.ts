/**
 * The full-text engine's public surface, one import for its users: the documented substring rule
 * (`searchRecords`), the ranked index (`createSearchIndex`, `restoreSearchIndex`), the snapshot
 * format, filters, snippets and limits. Each lives in its own module of this folder.
 */
export { countOccurrences, searchRecords } from './substring-rule.ts'
export { recordMatchesFilters } from './filters.ts'
export { checkQuery, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, type CheckedQuery } from './query.ts'
export { createSearchIndex, DEFAULT_SEARCH_INDEX_OPTIONS, restoreSearchIndex } from './index.ts'
export { searchIndexFormat } from './format.ts'
export { ByteReader, ByteWriter, fromBase64 } from './bytes.ts'
export { SNIPPET_CODE_POINTS, snippetOf } from './snippet.ts'
export { PLAIN_TEXT } from './plain-text.ts'
export { FUZZY_WEIGHT } from './query-terms.ts'
export { SEARCH_FIELDS } from './types.ts'
export type { SearchDocument, SearchFeedbackOptions, SearchField, SearchHit, SearchIndex, SearchIndexOptions, SearchIndexSnapshot, SearchQuery, SearchText } from './types.ts'
export type { SearchIndex as MemorySearchIndex, SearchIndexOptions as MemorySearchIndexOptions, SearchIndexSnapshot as MemorySearchIndexSnapshot } from './types.ts'
export type { SearchProximityOptions, SearchSynonymOptions } from './types.ts'
