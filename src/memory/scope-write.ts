/**
 * The per-scope write that retention, erasure and import run on (retention.ts): a `build` that
 * reads one scope through an asynchronous {@link MemoryScopeView} and returns event drafts,
 * written as one all-or-nothing write under the store's write lock.
 *
 * Two stores carry it: a memory log (`memoryLogAdapter`: the workspace JSONL and in-memory
 * stores), where the view reads the folded state inside `log.write`; and the SQL stores
 * (`sqlMemoryAdapter` of sql/core.ts: SQLite and Postgres), whose `writeScope` runs the build in
 * one database transaction and reads the rows it asks for there. The drafts then go through the
 * same chain rules in both (docs/log-format.md: `erase` events, payloads stripped from the erased
 * records' lines, digests kept).
 */
import { activeDuplicate, partitionIndex, partitionKey, partitionRecords, type MemoryEventDraft, type MemoryRecordState } from './records.ts'
import type { MemoryRecord, MemoryTarget } from './types.ts'

/** What the store holds under an id (any scope): the record, or only the fact that it was erased. */
export interface MemoryStoredId {
  record?: MemoryRecord
  erased: boolean
}

/**
 * One scope as a scope write's `build` reads it, under the store's write lock: nothing it returns
 * can change before the drafts are written.
 */
export interface MemoryScopeView {
  /** Every record of the scope in creation order, in any status (erased records are gone). */
  records(): Promise<MemoryRecord[]>
  /** How many records of the scope are active (cheap: kept as a count by every store). */
  activeCount(): Promise<number>
  /** What the store holds under these ids, in any scope of the store's log; unknown ids are left out. */
  lookup(ids: readonly string[]): Promise<Map<string, MemoryStoredId>>
  /** An active record of the scope with this kind whose content is equal after normalization (dedupe.ts), if any. */
  duplicate(kind: string, content: string): Promise<MemoryRecord | undefined>
}

/** Builds the drafts of one scope write from the view (it may throw to write nothing). */
export type MemoryScopeBuild = (view: MemoryScopeView) => Promise<MemoryEventDraft[]>

/** A store that writes one scope natively (the SQL stores): the retention, erasure and import path. */
export interface MemoryScopeWriter {
  /**
   * Runs `build` in one transaction holding the store's write lock and writes the drafts it
   * returns after the chain head; the lines of records erased by the drafts lose their payload in
   * the same transaction (headers and digests stay, so the chain verifies). Returns each event's
   * record after the event (none when `build` returned no drafts).
   *
   * @throws AgentError `MEMORY_SCOPE_*` for a bad target, what `build` throws (nothing written),
   * `MEMORY_WRITE_CONFLICT` when a draft cannot apply, and the store's database errors.
   */
  writeScope(target: MemoryTarget, build: MemoryScopeBuild): Promise<MemoryRecord[]>
}

/** Whether `adapter` writes scopes natively ({@link MemoryScopeWriter}). */
export function isScopeWriter(adapter: object): adapter is MemoryScopeWriter {
  return typeof (adapter as Partial<MemoryScopeWriter>).writeScope === 'function'
}

/** The {@link MemoryScopeView} of `target` over a folded memory log state (inside `log.write`). */
export function stateScopeView(state: MemoryRecordState, target: MemoryTarget): MemoryScopeView {
  const partition = partitionKey(target.store, target.scope)
  return {
    records: async () => partitionRecords(state, target.store, target.scope),
    // The partition's search index counts active records: O(1).
    activeCount: async () => partitionIndex(state, target.store, target.scope).size,
    async lookup(ids) {
      const found = new Map<string, MemoryStoredId>()
      for (const id of ids) {
        const record = state.records.get(id)
        if (record) found.set(id, { record, erased: false })
        else if (state.erased.has(id)) found.set(id, { erased: true })
      }
      return found
    },
    async duplicate(kind, content) {
      return activeDuplicate(state, partition, kind, content)
    },
  }
}
