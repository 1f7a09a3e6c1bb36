/**
 * Memory kinds, episodes and keywords/topics metadata (issue 5, "Memory semantics"): the text
 * that search reads from a record besides its title, content and tags.
 *
 * - An `episodic` record may carry an `episode` ({@link MemoryEpisode}); its fields are searched
 *   as part of the content (ranked index and the substring rule alike).
 * - `keywords`, `topics` and `recallTriggers` are searched as part of the tags field (same field
 *   weight as tags).
 */
import type { MemoryEpisode, MemoryRecord } from './types.ts'

/** The built-in kinds (issue 5): facts, events, how-to and details about the user. Custom kinds are any other non-empty string. */
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
