/**
 * Memory kinds, episodes and keywords/topics metadata (hosted-memory document): the text
 * that search reads from a record besides its title, content and tags.
 *
 * - An `episodic` record may carry an `episode` ({@link MemoryEpisode}); its fields are searched
 *   as part of the content (ranked index and the substring rule alike).
 * - `keywords`, `topics` and `recallTriggers` are searched as part of the tags field (same field
 *   weight as tags).
 * - the event time `occurredAt` adds its weekday, day, month and year words to the content.
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
  const [year, month, day] = occurredAt.slice(0, 10).split('-').map(Number) as [number, number, number]
  const weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay()
  return `${WEEKDAY_NAMES[weekday]} ${day} ${MONTH_NAMES[month - 1]} ${year}`
}

/**
 * The content field as search reads it: the content, then the episode's text on the next lines,
 * then the words of the event time (`occurredAt`) on the last line.
 */
export function searchableContent(record: Pick<MemoryRecord, 'content' | 'episode' | 'occurredAt'>): string {
  const episode = episodeText(record.episode)
  const when = eventTimeWords(record.occurredAt)
  const text = episode === '' ? record.content : `${record.content}\n${episode}`
  return when === '' ? text : `${text}\n${when}`
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
