/** The `kinds`, `tags`, `keywords`, `topics`, `after` and `before` filters: applied before any limit, by every search. */
import { parseInstant } from '../instant.ts'
import { checkQuery, type CheckedQuery } from './query.ts'
import type { SearchDocument, SearchQuery } from './types.ts'

/**
 * Whether `record` (`created`: its `createdAt` in ms) passes the filters of `query`: kinds any-of
 * (an empty list matches nothing), tags and keywords all-of, topics any-of (all case-insensitive),
 * `after` inclusive, `before` exclusive.
 */
export function passesFilters(record: SearchDocument, created: number, { kinds, tags, after, before, keywords, topics }: CheckedQuery): boolean {
  if (kinds && !kinds.has(record.kind)) return false
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

/** Whether `query` has no filter at all (every record passes {@link passesFilters}): a pass may then skip reading the records. */
export function filtersNothing({ kinds, tags, after, before, keywords, topics }: CheckedQuery): boolean {
  return kinds === undefined && topics === undefined && after === undefined && before === undefined && tags.length === 0 && keywords.length === 0
}

/**
 * Whether an active `record` passes the `kinds`, `tags`, `keywords`, `topics`, `after` and
 * `before` filters of `query` (the same rule every search applies before its limit).
 *
 * @throws AgentError `MEMORY_QUERY_INVALID` for an invalid query, as `searchRecords`.
 */
export function recordMatchesFilters(record: SearchDocument, query: SearchQuery): boolean {
  return record.status === 'active' && passesFilters(record, parseInstant(record.createdAt) ?? Number.NaN, checkQuery(query))
}
