/**
 * Records of the SQLite store read from their event lines: a `memory_records` row holds no copy
 * of the record, only the seq of its `remember` line (`memory_events`) and the seqs of its later
 * events, so a record is the fold of those lines (an active record: its `remember` line alone).
 */
import { agentError } from '../../../errors.ts'
import { parseMemoryLine } from '../../event-log.ts'
import { foldEvent } from '../../records.ts'
import type { MemoryRecord } from '../../types.ts'

/**
 * The record after the events of these lines, in order (the first its `remember` line).
 *
 * @throws AgentError `MEMORY_SQLITE_FAILED` when a line is not a memory event (a row edited by
 * hand: `verify()` names it).
 */
export function recordOfLines(lines: readonly string[]): MemoryRecord {
  let record: MemoryRecord | undefined
  for (const line of lines) {
    let event: ReturnType<typeof parseMemoryLine>
    try {
      event = parseMemoryLine(JSON.parse(line))
    }
    catch {
      event = 'the line is not valid JSON'
    }
    if (typeof event === 'string') throw agentError('MEMORY_SQLITE_FAILED', `a line of the memory database is not a memory event: ${event}`, 'run verify() on the store: it names the bad row', { reason: event })
    record = foldEvent(record, event)
  }
  if (!record) throw agentError('MEMORY_SQLITE_FAILED', 'a record row of the memory database names no line', 'run verify() on the store')
  return record
}

/** The seqs of a row's `later` column (space-separated, `NULL` for none). */
export function laterSeqs(later: string | null): number[] {
  return later === null || later === '' ? [] : later.split(' ').map(Number)
}
