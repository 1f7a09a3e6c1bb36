/**
 * The change journal of a partition of the log-backed stores: the record ids each event touched,
 * in order, kept beside the partition's search index (the basis of `MemoryStoreAdapter.changes`,
 * scope-changes.ts).
 *
 * `applyEvent` (records.ts) notes every event of a partition in the journal of the partition's
 * search index, whoever wrote it: this process, or another writer whose lines the log's replay
 * folds in. A journal starts when a reader first asks for it and lives as long as its index: a
 * partition evicted and loaded again, or a state rebuilt (compaction, a replaced log), gets a new
 * index and so a new journal. It keeps at most {@link JOURNAL_MAX_IDS} ids.
 */
import type { MemorySearchIndex } from './search-index.ts'

/** Most record ids a journal keeps; past that, the older half is dropped (a reader behind it starts over). */
export const JOURNAL_MAX_IDS = 8192

/** The ids noted in one partition, oldest first: `ids[0]` is entry number `base`. */
export interface ChangeJournal {
  readonly ids: string[]
  base: number
}

const journals = new WeakMap<MemorySearchIndex, ChangeJournal>()
/** Whether any journal was started in this process: until one is, an event looks nothing up. */
let anyJournal = false

/** Notes that an event changed record `id` of the partition whose search index is `index` (nothing until a reader asked for that journal). */
export function noteChange(index: MemorySearchIndex, id: string): void {
  if (!anyJournal) return
  const journal = journals.get(index)
  if (!journal) return
  journal.ids.push(id)
  if (journal.ids.length > JOURNAL_MAX_IDS) {
    const dropped = journal.ids.length >> 1
    journal.ids.splice(0, dropped)
    journal.base += dropped
  }
}

/** The journal of the partition whose search index is `index`, started empty on the first call. */
export function journalOf(index: MemorySearchIndex): ChangeJournal {
  let journal = journals.get(index)
  if (!journal) {
    journals.set(index, journal = { ids: [], base: 0 })
    anyJournal = true
  }
  return journal
}
