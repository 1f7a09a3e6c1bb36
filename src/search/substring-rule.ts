/**
 * The documented substring rule, over a plain list of documents.
 *
 * Source: capability document, "Search counts case-insensitive matches of `query` in the title,
 * content, and tags, and returns 10 results by default".
 */
import { parseInstant } from '../instant.ts'
import { passesFilters } from './filters.ts'
import { textOf } from './plain-text.ts'
import { checkQuery, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT } from './query.ts'
import type { SearchDocument, SearchHit, SearchQuery, SearchText } from './types.ts'

/**
 * Searches `records` (one store and scope, in creation order) with the documented rule:
 *
 * - score = number of case-insensitive, non-overlapping occurrences of the whole `query` string
 *   in the title, plus in the content, plus in each tag (counted per field, never across fields),
 *   the fields as `text` gives them (default: as they are);
 * - only `active` records with score > 0 are hits;
 * - filters apply before the limit: `kinds` (the record's kind is one of them; an empty list
 *   matches nothing), `tags` (the record carries every listed tag, compared case-insensitively;
 *   an empty list adds no condition), `keywords` (all of), `topics` (any of), `after` (created at
 *   or after), `before` (created strictly before); instants are compared as `Date` values;
 * - order: score descending, then newest first (`createdAt`, then position in `records`);
 * - at most `limit` hits, default {@link DEFAULT_SEARCH_LIMIT}.
 *
 * @throws AgentError `MEMORY_QUERY_INVALID` when `query` is empty or blank, `after`/`before` is
 * not a parsable instant, or `limit` is not an integer from 1 to {@link MAX_SEARCH_LIMIT}.
 */
export function searchRecords<D extends SearchDocument>(records: readonly D[], query: SearchQuery, text?: SearchText<D>): SearchHit<D>[] {
  const checked = checkQuery(query)
  const fields = textOf(text)
  const { needle, limit } = checked
  const hits: Array<SearchHit<D> & { position: number; created: number }> = []
  records.forEach((record, position) => {
    if (record.status !== 'active') return
    const created = parseInstant(record.createdAt) ?? Number.NaN
    if (!passesFilters(record, created, checked)) return
    let score = countOccurrences(fields.title(record), needle) + countOccurrences(fields.content(record), needle)
    for (const tag of fields.tags(record)) score += countOccurrences(tag, needle)
    if (score > 0) hits.push({ record, score, position, created })
  })
  hits.sort((a, b) => b.score - a.score || b.created - a.created || b.position - a.position)
  return hits.slice(0, limit).map(({ record, score }) => ({ record, score }))
}

/** Non-overlapping occurrences of `needle` (already lower case) in `text`, ignoring case. */
export function countOccurrences(text: string, needle: string): number {
  if (needle === '' || text.length === 0) return 0
  return countLower(text.toLowerCase(), needle)
}

/** Non-overlapping occurrences of `needle` in `haystack`, both already lower case (`needle` not empty). */
export function countLower(haystack: string, needle: string): number {
  if (haystack.length === 0) return 0
  let count = 0
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count++
  return count
}

/** The substring rule's score of one document (title + content + each tag). */
export function substringScore<D extends SearchDocument>(record: D, needle: string, text: SearchText<D>): number {
  let score = countLower(text.title(record).toLowerCase(), needle) + countLower(text.content(record).toLowerCase(), needle)
  for (const tag of text.tags(record)) score += countLower(tag.toLowerCase(), needle)
  return score
}

/**
 * A full page of the substring rule as ranked search keeps it: at the page's lowest score, a
 * record holding a word of the query (`holdsWord`: one of the ranking's terms, as folded and
 * stemmed) goes before one holding the query only inside longer words, then the rule's order
 * (`before`: newest first). The hits of `page` (the rule's top `limit`, best first) above that
 * score stay; the places left go to the first, in that order, of the page's hits at that score
 * and of the `contenders` (records not on the page that pass the filters) whose substring score
 * `substringOf` is that score too. Every record kept could be on the rule's page under another
 * order of its ties, which the capability document leaves open. A page shorter than `limit`
 * holds every record the rule finds and is returned as it is.
 *
 * Example: `tea`, limit 10, eleven records holding it once: ten newer ones in `team`, an older
 * `green tea`. The rule's page is the ten `team` records; ranked search gives `green tea` a place.
 */
export function wordsFirstAtFloor<T>(page: readonly T[], limit: number, substringOf: (item: T) => number, contenders: Iterable<T>, holdsWord: (item: T) => boolean, before: (a: T, b: T) => number): T[] {
  if (page.length < limit || page.length === 0) return [...page]
  const floor = substringOf(page[page.length - 1]!)
  const kept: T[] = []
  const tied: T[] = []
  for (const item of page) (substringOf(item) > floor ? kept : tied).push(item)
  for (const item of contenders) if (substringOf(item) === floor) tied.push(item)
  tied.sort((a, b) => Number(holdsWord(b)) - Number(holdsWord(a)) || before(a, b))
  return [...kept, ...tied.slice(0, limit - kept.length)]
}

/** Whether a full page of the rule (`limit` hits, best first) has a hit at its lowest score that `holdsWord` says holds no word of the query: only then can {@link wordsFirstAtFloor} change it. */
export function floorLacksWord<T>(page: readonly T[], limit: number, substringOf: (item: T) => number, holdsWord: (item: T) => boolean): boolean {
  if (page.length < limit || page.length === 0) return false
  const floor = substringOf(page[page.length - 1]!)
  return page.some(item => substringOf(item) === floor && !holdsWord(item))
}
