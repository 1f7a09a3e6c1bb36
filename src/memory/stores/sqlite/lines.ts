/**
 * Records of the SQLite store read from their event lines: a `memory_records` row holds no copy
 * of the record, only the seq of its `remember` line (`memory_events`) and the seqs of its later
 * events, so a record is the fold of those lines (an active record: its `remember` line alone).
 */
import { parseMemoryLine } from '../../event-log.ts'
import { foldEvent } from '../../records.ts'
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
