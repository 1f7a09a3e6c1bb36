/**
 * The vector side of hybrid search, kept between searches: per scope and embedding model, the
 * scope's active records and the partition's vector index holding exactly their vectors.
 *
 * An adapter with a change signal (`MemoryStoreAdapter.changes`: the built-in stores) is asked
 * only what changed since the last search: new active records are embedded (when no vector is
 * stored yet) and placed in the index, records that left the active set (superseded, deleted,
 * erased, by this process or another writer) are taken out. A reset of the signal (first search,
 * another process's store replaced, a partition loaded again) and a replaced vector store start
 * the scope over. An adapter without the signal is read whole (`export`) at every search, and the
 * difference to the last one is applied the same way.
 */
import { cachedRecordVectors, type MemoryVectorStore, type RecordVectors } from './vectors-store.ts'
import { partitionKey } from './records.ts'
import { createRecordOrder, type RecordOrder } from './record-order.ts'
import type { MemoryRecord, MemoryScopeChanges, MemoryStoreAdapter, MemoryTarget } from './types.ts'

/** The active records of one scope as hybrid search sees them after {@link syncHybridScope}. */
export interface HybridScope {
  /** The partition key of the scope. */
  readonly partition: string
  /** Active records by id: creation order, then the order later writes arrived in. With the change signal they are the store's own objects: never change them. */
  readonly records: ReadonlyMap<string, MemoryRecord>
  /** Up to `span` active records' ids on each side of `id` in creation order, nearest first (see {@link RecordOrder.around}). */
  around(id: string, span: number, keep: (id: string) => boolean): string[]
}

/** Scopes kept per {@link RecordVectors} (least recently searched dropped first; a dropped scope starts over at its next search). */
export const HYBRID_SCOPES_KEPT = 1000

interface ScopeEntry {
  partition: string
  cursor: unknown
  records: Map<string, MemoryRecord>
  /** The creation order of {@link records}. */
  order: RecordOrder
  /** Active records not in the vector index yet (their embedding is pending or failed). */
  unplaced: Map<string, MemoryRecord>
  /** {@link RecordVectors.generation} the index was filled in. */
  generation: number
  /** The sync running on this scope: searches of one scope apply changes one after the other. */
  queue: Promise<unknown>
}

const scopes = new WeakMap<RecordVectors, Map<string, ScopeEntry>>()

/**
 * Brings the scope's active records and its vector index up to date and returns them: applies
 * `adapter.changes` since the last call (or reads `adapter.export`), embeds the new records
 * without a stored vector (`vectors.ensure`, one batch) and places them in the index.
 *
 * @throws what the embedder throws (the records stay known as not placed; the next call embeds
 * them again) and what the adapter throws.
 */
export function syncHybridScope(adapter: MemoryStoreAdapter, target: MemoryTarget, vectors: RecordVectors, abortSignal?: AbortSignal): Promise<HybridScope> {
  const partition = partitionKey(target.store, target.scope)
  const entry = entryOf(vectors, partition)
  const run = entry.queue.then(() => apply(adapter, target, vectors, entry, abortSignal))
  entry.queue = run.catch(() => undefined)
  return run
}

function entryOf(vectors: RecordVectors, partition: string): ScopeEntry {
  let byPartition = scopes.get(vectors)
  if (!byPartition) scopes.set(vectors, byPartition = new Map())
  let entry = byPartition.get(partition)
  if (entry) {
    // Most recently searched last.
    byPartition.delete(partition)
  }
  else {
    entry = { partition, cursor: undefined, records: new Map(), order: createRecordOrder(), unplaced: new Map(), generation: -1, queue: Promise.resolve() }
  }
  byPartition.set(partition, entry)
  if (byPartition.size > HYBRID_SCOPES_KEPT) {
    const [oldest, dropped] = byPartition.entries().next().value!
    byPartition.delete(oldest)
    vectors.release(oldest, dropped.records.keys())
  }
  return entry
}

const dropListeners = new WeakMap<MemoryVectorStore, (partition: string) => void>()

/**
 * The function that forgets a partition in this process's hybrid search over `store` (every
 * model): its kept records, its vector index and, when the store reads vectors by id, their
 * vectors (`RecordVectors.release`). One per store, to hand to
 * `EventLog.onPartitionDropped` of the log it serves, so a scope that left the log's memory keeps
 * nothing here either; its next hybrid search starts over from the vectors held, embedding nothing.
 */
export function partitionDropListener(store: MemoryVectorStore): (partition: string) => void {
  let listener = dropListeners.get(store)
  if (!listener) {
    dropListeners.set(store, listener = (partition) => {
      for (const vectors of cachedRecordVectors(store)) {
        const entry = scopes.get(vectors)?.get(partition)
        scopes.get(vectors)?.delete(partition)
        vectors.release(partition, entry ? entry.records.keys() : [])
      }
    })
  }
  return listener
}

async function apply(adapter: MemoryStoreAdapter, target: MemoryTarget, vectors: RecordVectors, entry: ScopeEntry, abortSignal: AbortSignal | undefined): Promise<HybridScope> {
  const changes: MemoryScopeChanges = adapter.changes ? await adapter.changes(target, entry.cursor) : exportedChanges(entry, await adapter.export(target))
  entry.cursor = changes.cursor
  if (changes.reset || entry.generation !== vectors.generation) {
    if (changes.reset) {
      entry.records = new Map(changes.records.map(record => [record.id, record]))
      entry.order.reset(entry.records.keys())
    }
    else applyChanges(entry, vectors, changes)
    // Start the index over: it then holds exactly the active records' vectors.
    vectors.dropIndex(entry.partition)
    entry.unplaced = new Map(entry.records)
    entry.generation = vectors.generation
  }
  else {
    applyChanges(entry, vectors, changes)
  }
  while (entry.unplaced.size > 0) {
    const pending = [...entry.unplaced.values()]
    await vectors.ensure(pending, abortSignal, entry.partition)
    if (entry.generation !== vectors.generation) {
      // The vector store was replaced while these were embedded (an erasure rewrote it): its indexes were dropped, so every record is placed again.
      entry.unplaced = new Map(entry.records)
      entry.generation = vectors.generation
      continue
    }
    vectors.index(entry.partition, pending)
    for (const record of pending) entry.unplaced.delete(record.id)
  }
  return { partition: entry.partition, records: entry.records, around: entry.order.around }
}

/** The changes since the last search of an adapter without a change signal, from its whole export: a reset the first time, else the difference of the active sets. */
function exportedChanges(entry: ScopeEntry, exported: readonly MemoryRecord[]): MemoryScopeChanges {
  const active = exported.filter(record => record.status === 'active')
  if (entry.generation === -1) return { cursor: undefined, reset: true, records: active, removed: [] }
  const now = new Set(active.map(record => record.id))
  return { cursor: undefined, reset: false, records: active.filter(record => !entry.records.has(record.id)), removed: [...entry.records.keys()].filter(id => !now.has(id)) }
}

function applyChanges(entry: ScopeEntry, vectors: RecordVectors, changes: MemoryScopeChanges): void {
  const gone: string[] = [...changes.removed]
  for (const record of changes.records) {
    if (record.status === 'active') {
      // A record's content never changes while it stays active: a new one is placed, a known one keeps its slot.
      if (!entry.records.has(record.id)) {
        entry.unplaced.set(record.id, record)
        entry.order.append(record.id)
      }
      entry.records.set(record.id, record)
    }
    else {
      gone.push(record.id)
    }
  }
  for (const id of gone) {
    entry.records.delete(id)
    entry.unplaced.delete(id)
    entry.order.remove(id)
  }
  vectors.discard(entry.partition, gone)
}
