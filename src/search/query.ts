/**
 * Query validation: every search checks its query here first, and gets back the parsed form the
 * filters and rankers read.
 */
import { agentError } from '../errors.ts'
import { isInstant, parseInstant } from '../instant.ts'
import type { SearchQuery } from './types.ts'

/** Results returned when a query gives no `limit` (source: capability document). */
export const DEFAULT_SEARCH_LIMIT: number = 10

/** Most results one search returns (`limit` above it is an input error). */
export const MAX_SEARCH_LIMIT: number = 100

/** No tags or keywords asked for (shared: the engine only reads a checked query). */
const NO_WORDS: readonly string[] = Object.freeze([])

/** A query as the engine reads it: lower-case needle and filters, parsed instants, the limit. */
export interface CheckedQuery {
  /** The whole query string in lower case (the substring rule's needle). */
  needle: string
  kinds: ReadonlySet<string> | undefined
  tags: readonly string[]
  keywords: readonly string[]
  topics: ReadonlySet<string> | undefined
  /** Milliseconds, or `undefined` for no bound. */
  after: number | undefined
  before: number | undefined
  limit: number
}

/**
 * Validates `query` and returns its {@link CheckedQuery}.
 *
 * @throws AgentError `MEMORY_QUERY_INVALID` when `query` is empty or blank, `after`/`before` is
 * not a parsable instant, `limit` is not an integer from 1 to {@link MAX_SEARCH_LIMIT}, or `mode`
 * is neither `'ranked'` nor `'substring'` (fault class 2: an empty query must not return
 * everything, a bad date must not silently return nothing, `limit: 0` must not become 10).
 */
export function checkQuery(query: SearchQuery): CheckedQuery {
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
    tags: query.tags && query.tags.length > 0 ? query.tags.map(tag => tag.toLowerCase()) : NO_WORDS,
    keywords: query.keywords && query.keywords.length > 0 ? query.keywords.map(keyword => keyword.toLowerCase()) : NO_WORDS,
    topics: query.topics ? new Set(query.topics.map(topic => topic.toLowerCase())) : undefined,
    after: parseInstant(query.after),
    before: parseInstant(query.before),
    limit,
  }
}
