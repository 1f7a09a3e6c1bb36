/**
 * `MemoryStoreAdapter.changes` of the log-backed stores: what changed in one scope since a
 * cursor, read from the partition's change journal (change-journal.ts).
 */
import { journalOf, type ChangeJournal } from './change-journal.ts'
import { partitionIndex, partitionRecords, type MemoryRecordState } from './records.ts'
import type { MemoryRecord, MemoryScopeChanges, MemoryTarget } from './types.ts'

interface JournalCursor {
  journal: ChangeJournal
  /** The entry number the next call starts at. */
  next: number
}

/**
 * The {@link MemoryScopeChanges} of `target`'s partition in `state` since `since`: a reset (every
 * active record, in creation order) for the first call, for a cursor of another journal (the
 * partition was loaded again, the state rebuilt) and for one older than the journal keeps; else
 * the records of the ids noted since, in their current state (an id no longer in the state, an
 * erased record, is in `removed`). Cost: the ids noted since, or one walk of the partition's
 * records on a reset.
 */
export function scopeChanges(state: MemoryRecordState, target: MemoryTarget, since: unknown): MemoryScopeChanges {
  const journal = journalOf(partitionIndex(state, target.store, target.scope))
  const end = journal.base + journal.ids.length
  const cursor: JournalCursor = { journal, next: end }
  const from = since as Partial<JournalCursor> | undefined
  if (!from || from.journal !== journal || from.next === undefined || from.next < journal.base || from.next > end) {
    const records = partitionRecords(state, target.store, target.scope).filter(record => record.status === 'active')
    return { cursor, reset: true, records, removed: [] }
  }
  const seen = new Set<string>()
  const records: MemoryRecord[] = []
  const removed: string[] = []
  for (let at = from.next - journal.base; at < journal.ids.length; at++) {
    const id = journal.ids[at]!
    if (seen.has(id)) continue
    seen.add(id)
    const record = state.records.get(id)
    if (record) records.push(record)
    else removed.push(id)
  }
  return { cursor, reset: false, records, removed }
}
