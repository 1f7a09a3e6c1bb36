/**
 * Records of the SQLite store read from their event lines: a `memory_records` row holds no text,
 * only the seq of its `remember` line (`memory_events`) and the seqs of its later events, so a
 * record is the fold of those lines (an active record: its `remember` line alone). And the
 * substring rule counted in SQL over the lines, without a copy of the text.
 */
import { parseMemoryLine } from '../../event-log.ts'
import { foldEvent } from '../../records.ts'
import { MEMORY_SEARCH_TEXT } from '../../search-index.ts'
import { searchableContent, searchableTags } from '../../kinds.ts'
import { substringScore } from '../../../search/substring-rule.ts'
import type { MemoryRecord } from '../../types.ts'

/** The record after the events of these lines, in order (the first its `remember` line). */
export function recordOfLines(lines: readonly string[]): MemoryRecord {
  let record: MemoryRecord | undefined
  for (const line of lines) {
    const event = parseMemoryLine(JSON.parse(line))
    if (typeof event === 'string') throw new Error(event)
    record = foldEvent(record, event)
  }
  if (!record) throw new Error('a record needs its remember line')
  return record
}

/** The seqs of a row's `later` column (space-separated, `NULL` for none). */
export function laterSeqs(later: string | null): number[] {
  return later === null || later === '' ? [] : later.split(' ').map(Number)
}

// Characters where SQLite's lower() (ASCII only) and JavaScript's toLowerCase() may differ, and NUL and U+0001, which SQLite's text functions and the field join do not keep.
const UNSAFE = /[^\u0002-\u007f]/
const ASCII_UPPER = /[A-Z]/g

/** `text` passes when SQLite's `lower()` gives what `toLowerCase()` gives and it holds neither NUL nor U+0001. */
function sqlSafe(text: string): boolean {
  if (!UNSAFE.test(text)) return true
  if (/[\u0000\u0001]/.test(text)) return false
  return text.toLowerCase() === text.replace(ASCII_UPPER, c => c.toLowerCase())
}

/**
 * Whether SQL counts the substring rule of this active record exactly from its line
 * ({@link SUBSTRING_SCORE_SQL}): its searched text is its title, content, tags, keywords, topics
 * and recall triggers as the line holds them (no episode, no event time words), and each passes
 * {@link sqlSafe}. Other records are counted by the JavaScript function {@link substringScoreOfLine}.
 */
export function plainRecord(record: MemoryRecord): boolean {
  if (searchableContent(record) !== record.content) return false
  return sqlSafe(record.title ?? '') && sqlSafe(record.content) && searchableTags(record).every(sqlSafe)
}

/** Whether SQL may count `needle` (the query in lower case) in plain records: no NUL, no U+0001. */
export function sqlNeedle(needle: string): boolean {
  return !/[\u0000\u0001]/.test(needle)
}

/** `needle` as it appears inside a JSON string of a line (the escapes `JSON.stringify` writes), for `instr` over the line. */
export function escapedNeedle(needle: string): string {
  return JSON.stringify(needle).slice(1, -1)
}

/** The substring rule's score of the active record of a `remember` line, for the SQL function `memory_substring(line, needle)`. */
export function substringScoreOfLine(line: string, needle: string): number {
  return substringScore(recordOfLines([line]), needle, MEMORY_SEARCH_TEXT)
}

/**
 * The substring rule's score of the active record `r` with line `e.line`, in SQL. A plain record
 * (`r.plain`, {@link plainRecord}) is counted in SQL: non-overlapping occurrences of `@needle` in
 * the lower case of each field (title, content, each tag, keyword, topic, recall trigger), after
 * a cheap `instr` over the whole line (`@escaped`, {@link escapedNeedle}: every occurrence in a
 * field is one in the line). Others, and every record when `@sql` is 0 ({@link sqlNeedle}), by
 * the registered JavaScript function `memory_substring`.
 */
export const SUBSTRING_SCORE_SQL = `CASE WHEN r.plain AND @sql THEN
    CASE WHEN instr(lower(e.line), @escaped) > 0 THEN (
      SELECT coalesce(sum((length(v) - length(replace(v, @needle, ''))) / length(@needle)), 0) FROM (
        SELECT lower(json_extract(e.line, '$.title')) AS v
        UNION ALL SELECT lower(json_extract(e.line, '$.content'))
        UNION ALL SELECT lower(value) FROM json_each(e.line, '$.tags')
        UNION ALL SELECT lower(value) FROM json_each(e.line, '$.keywords')
        UNION ALL SELECT lower(value) FROM json_each(e.line, '$.topics')
        UNION ALL SELECT lower(value) FROM json_each(e.line, '$.recallTriggers')))
    ELSE 0 END
  ELSE memory_substring(e.line, @needle) END`
