/**
 * The memory event log: the log engine of `src/log/` with the memory fold plugged in. Events are
 * `remember`, `supersede`, `delete` and `erase` lines (records.ts); the state they fold into is
 * the records, their partitions per store and scope, and one search index per partition; a
 * checkpoint holds that state (checkpoint-state.ts). Stores open their log here.
 */
import type { Workspace } from '../workspace/types.ts'
import { canonicalJson, compactEventLog, knownSyncHash, openEventLog, parseEventLine, payloadDigestOf, serializeEvent, stripPayload, verifyEventLog, type EventLog, type LogFold, type MemoryLogCompaction, type MemoryLogOptions, type MemoryLogVerification } from '../log/index.ts'
import { createSearchIndex } from './search-index.ts'
import { memoryCheckpointCodec, memoryPartitions } from './checkpoint-state.ts'
import {
  applyEvent,
  emptyRecordState,
  eventConflict,
  foldEvent,
  HEADER_FIELDS,
  lineDraftOf,
  markErased,
  parseMemoryEvent,
  PAYLOAD_DEFAULTS,
  PAYLOAD_FIELDS,
  renewErasedIndexes,
  type MemoryEventDraft,
  type MemoryRecordLookup,
  type MemoryRecordState,
} from './records.ts'
import type { MemoryEvent } from './records.ts'
import type { MemoryRecord } from './types.ts'

export type { MemoryLogCompaction, MemoryLogOptions, MemoryLogVerification, MemoryLogWarning } from '../log/index.ts'
export { CHECKPOINT_GROWTH, DEFAULT_CHECKPOINT_EVERY } from '../log/index.ts'

/** An open memory log: the folded records of one workspace key, kept current. */
export type MemoryLog = EventLog<MemoryRecordState, MemoryEventDraft, MemoryRecord>

const lookups = new WeakMap<MemoryRecordState, MemoryRecordLookup>()

/** The record lookup of a state, made once (a write checks its draft against it). */
function lookupOf(state: MemoryRecordState): MemoryRecordLookup {
  let lookup = lookups.get(state)
  if (!lookup) lookups.set(state, lookup = id => state.records.get(id))
  return lookup
}

/** The fold of memory events into a {@link MemoryRecordState}. */
export const memoryFold: LogFold<MemoryRecordState, MemoryEventDraft, MemoryRecord> = {
  schema: {
    headerFields: HEADER_FIELDS,
    payloadFields: PAYLOAD_FIELDS,
    eraseType: 'erase',
    sharedFields: new Set(['audit', 'tags', 'metadata', 'provenance', 'supersedes']),
    internedField: 'scope',
    payloadDefaults: PAYLOAD_DEFAULTS,
    payloadSameAs: { createdAt: 'at' },
    lineDraft: lineDraftOf,
  },
  parse: parseMemoryEvent,
  empty: () => emptyRecordState(createSearchIndex),
  conflict(state, drafts) {
    if (drafts.length === 1) {
      const reason = eventConflict(lookupOf(state), drafts[0]!, state.erased)
      return reason ? { draft: drafts[0]!, reason } : undefined
    }
    // Each draft is checked against the records as the drafts before it leave them.
    const overlay = new Map<string, MemoryRecord>()
    const lookup: MemoryRecordLookup = id => overlay.get(id) ?? state.records.get(id)
    for (const draft of drafts) {
      const reason = eventConflict(lookup, draft, state.erased)
      if (reason) return { draft, reason }
      overlay.set(draft.recordId, foldEvent(lookup(draft.recordId), draft))
    }
    return undefined
  },
  apply: (state, event, checked) => applyEvent(state, event, checked),
  compacted: renewErasedIndexes,
  replayErase(state, event) {
    const existing = state.records.get(event.recordId)
    // Known from an earlier read: its events in between were skipped, so align the version.
    if (existing) applyEvent(state, { ...event, version: existing.version + 1 })
    else markErased(state, event.recordId)
  },
  markErased,
  isErased: (state, id) => state.erased.has(id),
  has: (state, id) => state.records.has(id),
  *internedValues(state) {
    for (const record of state.records.values()) yield record.scope
  },
  checkpoint: memoryCheckpointCodec,
  partitions: memoryPartitions,
}

/**
 * Opens (or returns the already open) memory log at `key` of `workspace`. Cheap: nothing is read
 * until the first operation. One state is kept per workspace object and key. Options apply when
 * the log is first opened.
 */
export function openMemoryLog(workspace: Workspace, key: string, options: MemoryLogOptions = {}): MemoryLog {
  return openEventLog(workspace, key, memoryFold, options)
}

/**
 * Reads the whole memory log at `key` and checks every line (JSON, shape, `seq`, `prev`,
 * `digest`, `payloadDigest`, and each event's effect on the records) without touching the
 * in-memory state or the value. Verifies format version 1 and 2 lines alike.
 *
 * @throws only read errors of the workspace (a missing value is an empty, valid log).
 */
export function verifyLog(workspace: Workspace, key: string): Promise<MemoryLogVerification> {
  return verifyEventLog(workspace, key, memoryFold)
}

/**
 * Rewrites the memory log at `key` atomically: every event is kept, the payload of erased
 * records' lines is removed (the chain still verifies), a torn tail is moved aside, version 1
 * lines are re-chained as version 2 when a record was erased (docs/log-format.md, "Compaction and erasure").
 *
 * @throws AgentError `MEMORY_LOG_CORRUPT` when the log does not verify (nothing is rewritten);
 * `MEMORY_WORKSPACE_READ_ONLY`; write errors of the workspace.
 */
export function compactLog(workspace: Workspace, key: string): Promise<MemoryLogCompaction> {
  return compactEventLog(workspace, key, memoryFold)
}

/** A parsed log line as a memory event, or why it is malformed (shape only: digests and order are checked by replay and `verifyLog`). */
export function parseMemoryLine(value: unknown): MemoryEvent | string {
  return parseEventLine(memoryFold, value) as MemoryEvent | string
}

/**
 * Memory event `draft` as line `seq` after the line whose digest is `prev` (`more`: not the last
 * line of its write), with a synchronous SHA-256: the log engine's own writer, for stores that
 * keep the lines elsewhere (the SQL stores). `event` is the draft as a replay folds it.
 */
export function formatMemoryLine(draft: MemoryEventDraft, seq: number, prev: string | null, more: boolean, hash: (text: string) => string): { line: string; digest: string; event: MemoryEventDraft } {
  const written = serializeEvent(memoryFold.schema, draft, seq, prev, more, hash)
  if (written instanceof Promise) throw new TypeError('formatMemoryLine needs a synchronous hash')
  return { line: written.line, digest: written.digest, event: written.folded }
}

/**
 * The line of an erased record's event with its payload removed (`erased: true`), as compaction
 * writes it (the erase event's own line too: its `reason` and `approvalReason` may quote the
 * record); `undefined` for a version 1 line (its digest covers the payload) or a line already stripped. A version 3 line gets its `payloadDigest` (SHA-256 of
 * `node:crypto`, `hash` or the one `sha256HexSync()` found).
 *
 * @throws TypeError for a version 3 line where no synchronous SHA-256 is known.
 */
export function strippedMemoryLine(line: string, hash: ((text: string) => string) | undefined = knownSyncHash()): string | undefined {
  const value = JSON.parse(line) as Record<string, unknown>
  if ((value.v !== 2 && value.v !== 3) || value.erased) return undefined
  if (value.v === 3 && !hash) throw new TypeError('strippedMemoryLine needs a synchronous SHA-256 for a version 3 line (await sha256HexSync() first)')
  stripPayload(memoryFold.schema, value, hash ? payloadDigestOf(memoryFold.schema, value, hash) as string | undefined : undefined)
  return canonicalJson(value)
}
