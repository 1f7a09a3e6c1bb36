/**
 * Memory kinds, episodes and keywords/topics metadata (hosted-memory document): the text
 * that search reads from a record besides its title, content and tags.
 *
 * - An `episodic` record may carry an `episode` ({@link MemoryEpisode}); its fields are searched
 *   as part of the content (ranked index and the substring rule alike).
 * - `keywords`, `topics` and `recallTriggers` are searched as part of the tags field (same field
 *   weight as tags).
 * - the weekday, day, month and year words of the record's date (`occurredAt`, else `createdAt`)
 *   are ranked in a field of their own (`dates`), which the substring rule never reads.
 */
import type { MemoryEpisode, MemoryRecord } from './types.ts'

/** The built-in kinds: facts, events, how-to and details about the user. Custom kinds are any other non-empty string. */
export const BUILTIN_MEMORY_KINDS = ['semantic', 'episodic', 'procedural', 'profile'] as const

/** The fields of an episode in their OTAR order. */
export const EPISODE_FIELDS = ['observation', 'thoughts', 'action', 'result'] as const

/** The episode's text, one field per line in OTAR order, each prefixed by its name (`Observation: ...`); `''` without an episode. */
export function episodeText(episode: MemoryEpisode | undefined): string {
  if (!episode) return ''
  return EPISODE_FIELDS
    .filter(field => typeof episode[field] === 'string' && episode[field] !== '')
    .map(field => `${field[0]!.toUpperCase()}${field.slice(1)}: ${episode[field]}`)
    .join('\n')
}

const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']
const WEEKDAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']

/**
 * The words of an event time that search reads: weekday, day of month, month name and year of
 * the calendar date as written (`"2023-05-08T23:30:00-05:00"` and `"2023-05-08"` both give
 * `"Monday 8 May 2023"`: the writer's own date, not the UTC one). `''` for `undefined` or an
 * invalid value.
 */
export function eventTimeWords(occurredAt: string | undefined): string {
  if (occurredAt === undefined || !/^\d{4}-\d{2}-\d{2}/.test(occurredAt)) return ''
  const date = occurredAt.slice(0, 10)
  let words = dateWordsCache.get(date)
  if (words === undefined) {
    const [year, month, day] = date.split('-').map(Number) as [number, number, number]
    const weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay()
    words = `${WEEKDAY_NAMES[weekday]} ${day} ${MONTH_NAMES[month - 1]} ${year}`
    // Every record of one day asks for the same words (an index build asks once per record).
    if (dateWordsCache.size >= 4096) dateWordsCache.clear()
    dateWordsCache.set(date, words)
  }
  return words
}

const dateWordsCache = new Map<string, string>()

/**
 * Which date of a record gives the words of its ranking-only `dates` field:
 * - `'event'` (default): `occurredAt`, else `createdAt` (when the record was written is the best
 *   guess of when its content happened; LoCoMo dev recall@10 +0.016, +0.027 with `feedback.dates`, docs/search-and-recall.md);
 * - `'occurred'`: `occurredAt` only (a record without one has no date words);
 * - `false`: no date words.
 */
export type MemoryDateWords = 'event' | 'occurred' | false

/** The default {@link MemoryDateWords}. */
export const DEFAULT_DATE_WORDS: MemoryDateWords = 'event'

/** The `dates` field of a record under `mode` ({@link MemoryDateWords}): `eventTimeWords` of its date, or `''`. */
export function recordDateWords(record: Pick<MemoryRecord, 'occurredAt' | 'createdAt'>, mode: MemoryDateWords = DEFAULT_DATE_WORDS): string {
  if (mode === false) return ''
  return eventTimeWords(mode === 'event' ? record.occurredAt ?? record.createdAt : record.occurredAt)
}

/** The content field as search reads it: the content, then the episode's text on the next lines. */
export function searchableContent(record: Pick<MemoryRecord, 'content' | 'episode'>): string {
  const episode = episodeText(record.episode)
  return episode === '' ? record.content : `${record.content}\n${episode}`
}

/**
 * The tags field as search reads it: tags, then keywords, then topics, then recall triggers
 * (hosted-memory document, `recallTriggers`: phrases of the questions a record answers, weighted
 * like tags).
 */
export function searchableTags(record: Pick<MemoryRecord, 'tags' | 'keywords' | 'topics' | 'recallTriggers'>): string[] {
  if (record.keywords === undefined && record.topics === undefined && record.recallTriggers === undefined) return record.tags
  return [...record.tags, ...(record.keywords ?? []), ...(record.topics ?? []), ...(record.recallTriggers ?? [])]
}
