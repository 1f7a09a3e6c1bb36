/**
 * The documented search rule, as a pure function over records.
 *
 * Source: capability document, "Search counts case-insensitive matches of `query` in the title,
 * content, and tags, and returns 10 results by default". Kept free of storage so that a ranked
 * index (a later issue) can replace it behind the same signature.
 */
import { agentError } from '../errors.ts'
import { isInstant, parseInstant } from './records.ts'
import type { MemoryRecord, MemorySearchHit, MemorySearchQuery } from './types.ts'

/** Results returned when a query gives no `limit` (source: capability document). */
export const DEFAULT_SEARCH_LIMIT = 10

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
 * not a parsable instant, or `limit` is not an integer >= 1 (fault class 2: an empty query must
 * not return everything, a bad date must not silently return nothing, `limit: 0` must not become 10).
 */
export function searchRecords(records: readonly MemoryRecord[], query: MemorySearchQuery): MemorySearchHit[] {
  const { needle, kinds, tags, after, before, limit } = checkQuery(query)
  const hits: Array<MemorySearchHit & { position: number; created: number }> = []
  records.forEach((record, position) => {
    if (record.status !== 'active') return
    if (kinds && !kinds.has(record.kind)) return
    const created = parseInstant(record.createdAt) ?? Number.NaN
    if (after !== undefined && !(created >= after)) return
    if (before !== undefined && !(created < before)) return
    if (tags.length > 0) {
      const carried = new Set(record.tags.map(tag => tag.toLowerCase()))
      if (!tags.every(tag => carried.has(tag))) return
    }
    let score = countOccurrences(record.title ?? '', needle) + countOccurrences(record.content, needle)
    for (const tag of record.tags) score += countOccurrences(tag, needle)
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
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw agentError('MEMORY_QUERY_INVALID', `\`limit\` must be a whole number of at least 1, got ${JSON.stringify(query.limit)}`, `pass a limit such as 5, or leave it out for ${DEFAULT_SEARCH_LIMIT}`, { field: 'limit' })
  }
  return {
    needle: query.query.toLowerCase(),
    kinds: query.kinds ? new Set<string>(query.kinds) : undefined,
    tags: (query.tags ?? []).map(tag => tag.toLowerCase()),
    after: parseInstant(query.after),
    before: parseInstant(query.before),
    limit,
  }
}

/**
 * A search index over the records of one store and scope (one partition), kept current by the
 * log's materialized state: `update` is called with the record after every event on it, in log
 * order (a superseded or deleted record must disappear from results). The ranked-search issue
 * replaces the implementation behind this interface; the state only calls `update` and `search`.
 */
export interface MemorySearchIndex {
  /** Takes in the latest state of a record (any status). */
  update(record: MemoryRecord): void
  /** Active records matching `query`, best first, filters before the limit (see {@link searchRecords}). */
  search(query: MemorySearchQuery): MemorySearchHit[]
}

/** Creates an empty {@link MemorySearchIndex} (today: the documented rule over the partition's records). */
export function createSearchIndex(): MemorySearchIndex {
  const records = new Map<string, MemoryRecord>()
  return {
    update(record) {
      records.set(record.id, record)
    },
    search(query) {
      return searchRecords([...records.values()], query)
    },
  }
}
