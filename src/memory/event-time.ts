/**
 * Event time of a record: `occurredAt` says when the remembered thing
 * happened, distinct from `createdAt` (when it was written). It is an ISO 8601 instant with a
 * zone or a calendar date `YYYY-MM-DD`, kept as given. This module gives its filter
 * (`occurredAfter` / `occurredBefore` of a search) and its searchable words (day, month, year and
 * weekday, ranked in the record's `dates` field by kinds.ts and search-index.ts; the substring rule
 * never reads them).
 */
import { MAX_SEARCH_LIMIT, recordMatchesFilters } from '../search/search.ts'
import { createSearchIndex } from './search-index.ts'
import { agentError } from '../errors.ts'
import { isInstant, parseInstant } from './records.ts'
export { eventTimeWords } from './kinds.ts'
import type { MemoryRecord, MemorySearchHit, MemorySearchQuery, MemoryStoreAdapter, MemoryTarget } from './types.ts'

/** True for a valid `occurredAt`: an ISO 8601 instant with a zone, or a calendar date `YYYY-MM-DD`. */
export function isEventTime(value: unknown): value is string {
  return isInstant(value)
}

/** The event time of a record in epoch milliseconds: `occurredAt` (a date is midnight UTC), else `createdAt`. */
export function eventTimeOf(record: Pick<MemoryRecord, 'occurredAt' | 'createdAt'>): number {
  return parseInstant(record.occurredAt ?? record.createdAt) ?? Number.NaN
}

/** Whether a search query has an event-time condition. */
export function hasEventTimeFilter(query: MemorySearchQuery): boolean {
  return query.occurredAfter !== undefined || query.occurredBefore !== undefined
}

/**
 * The `occurredAfter` / `occurredBefore` bounds of a query in epoch milliseconds.
 *
 * @throws AgentError `MEMORY_QUERY_INVALID` when a bound is not an ISO 8601 instant or date, or
 * `occurredAfter` is not earlier than `occurredBefore`.
 */
export function eventTimeBounds(query: MemorySearchQuery): { after?: number; before?: number } {
  const bounds: { after?: number; before?: number } = {}
  for (const [field, key] of [['occurredAfter', 'after'], ['occurredBefore', 'before']] as const) {
    const value = query[field]
    if (value === undefined) continue
    const time = parseInstant(value)
    if (time === undefined) {
      throw agentError('MEMORY_QUERY_INVALID', `\`${field}\` is not a date: ${JSON.stringify(value)}`, `pass an ISO 8601 instant with a zone such as "2024-05-01T09:00:00Z" or a date such as "2024-05-01", or leave \`${field}\` out`, { field })
    }
    bounds[key] = time
  }
  if (bounds.after !== undefined && bounds.before !== undefined && !(bounds.after < bounds.before)) {
    throw agentError('MEMORY_QUERY_INVALID', '`occurredAfter` must be earlier than `occurredBefore`', 'swap the two dates, or leave one out', { field: 'occurredAfter' })
  }
  return bounds
}

/** Whether `record`'s event time is within the bounds (`after` inclusive, `before` exclusive). */
export function withinEventTime(record: Pick<MemoryRecord, 'occurredAt' | 'createdAt'>, bounds: { after?: number; before?: number }): boolean {
  const time = eventTimeOf(record)
  if (bounds.after !== undefined && !(time >= bounds.after)) return false
  if (bounds.before !== undefined && !(time < bounds.before)) return false
  return true
}

/** `query` without its event-time fields (what an adapter's own search is given). */
export function withoutEventTime(query: MemorySearchQuery): MemorySearchQuery {
  const { occurredAfter: _after, occurredBefore: _before, ...rest } = query
  return rest
}

/**
 * An adapter search that also honours `occurredAfter` / `occurredBefore`, for every adapter
 * (the built-in ones and custom ones alike): the adapter ranks without the event-time condition
 * (up to {@link MAX_SEARCH_LIMIT} hits) and the hits outside the window are dropped. When that
 * leaves fewer than `limit` hits while the adapter had more to give, the scope's active records
 * inside the window (and the other filters) are ranked on their own by a fresh index, so the
 * answer is exact: the best `limit` records of the window. Without an event-time condition it
 * is one `adapter.search` call.
 *
 * @throws AgentError `MEMORY_QUERY_INVALID` for an invalid query (as the adapter's search).
 */
export async function searchWithEventTime(adapter: MemoryStoreAdapter, target: MemoryTarget, query: MemorySearchQuery): Promise<MemorySearchHit[]> {
  if (!hasEventTimeFilter(query)) return adapter.search(target, query)
  const bounds = eventTimeBounds(query)
  const limit = query.limit ?? 10
  const base = withoutEventTime(query)
  const pool = await adapter.search(target, { ...base, limit: MAX_SEARCH_LIMIT })
  const kept = pool.filter(hit => withinEventTime(hit.record, bounds))
  if (kept.length >= limit || pool.length < MAX_SEARCH_LIMIT) return kept.slice(0, limit)
  // The window holds records ranked below the pool: rank the window's records alone.
  const inWindow = (await adapter.export(target)).filter(record => recordMatchesFilters(record, base) && withinEventTime(record, bounds))
  const index = createSearchIndex()
  for (const record of inWindow) index.update(record)
  return index.search({ ...base, limit })
}
