/**
 * The event log engine: an append-only JSONL value in a workspace, one event per line, each line
 * chained to the previous one by a SHA-256 digest (format: docs/log-format.md), folded into a
 * state in process memory by a {@link LogFold} that the caller supplies. The engine knows lines,
 * digests, byte offsets, locks and checkpoints, and nothing of what the events mean.
 *
 * Parts, one file each: the line format (`canonical-json.ts`, `digest.ts`, `line-writer.ts`,
 * `line-check.ts`), an open log (`handle.ts`), replay and tailing (`replay.ts`, `fold-lines.ts`), the write path
 * (`append.ts`), crash leftovers (`torn-tail.ts`), checkpoints (`checkpoint.ts`,
 * `checkpoint-schedule.ts`, `deflate-text.ts` for compressed sections), compaction and erasure
 * (`compaction.ts`), verification (`verify.ts`).
 */
import type { Workspace, WorkspaceValueStat } from '../workspace/types.ts'
import { appendEvents } from './append.ts'
import { scheduleCheckpoint, writeCheckpoint } from './checkpoint-schedule.ts'
import { settleWhole } from './checkpoint.ts'
import { compactHandle } from './compaction.ts'
import { evictPartitions, touchPartitions } from './eviction.ts'
import { openHandle, type LogHandle } from './handle.ts'
import { preparePartitions, sync } from './replay.ts'
import { DEFAULT_CHECKPOINT_EVERY, NOT_NOW, type EventLog, type LogAccessOptions, type LogEventDraft, type LogFold, type MemoryLogCompaction, type MemoryLogOptions } from './types.ts'

export * from './types.ts'
export { canonicalJson } from './canonical-json.ts'
export { knownSyncHash, sha256Hex, sha256HexSync } from './digest.ts'
export { checkpointKey } from './checkpoint.ts'
export { verifyEventLog } from './verify.ts'
export { parseEventLine } from './line-check.ts'
export { serializeEvent } from './line-writer.ts'
export { payloadDigestOf, stripPayload } from './compaction.ts'
export { utf8Length } from './utf8.ts'
export { deflateBytesToBase64, deflateToBase64, inflateBytesFromBase64, inflateFromBase64 } from './deflate-text.ts'

/**
 * Opens (or returns the already open) log at `key` of `workspace`, folded by `fold`. Cheap:
 * nothing is read until the first operation. One state is kept per fold, workspace object and
 * key, so a new workspace object over the same storage replays the log from storage. Options
 * apply when the log is first opened.
 */
export function openEventLog<State, Draft extends LogEventDraft, Result>(workspace: Workspace, key: string, fold: LogFold<State, Draft, Result>, options: MemoryLogOptions = {}): EventLog<State, Draft, Result> {
  const handle = openHandle(fold, workspace, key, options)
  return {
    workspace,
    key: handle.key,
    view: (read, access) => view(handle, read, access),
    peek: (read, access) => peek(handle, read, access),
    write: (build, access) => appendEvents(handle, build, access?.partitions),
    compact: () => compactHandle(handle),
    checkpoint: () => handle.workspace.withLock(handle.lockKey, () => writeCheckpoint(handle)),
    settled: () => handle.checkpointRun ?? Promise.resolve(),
    indexBuilt: (records) => {
      const every = handle.options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY
      if (every === false || records < every) return
      handle.indexesBuilt++
      scheduleCheckpoint(handle, true)
    },
    loadedPartitions: () => (handle.fold.partitions?.loaded?.(handle.state).size ?? 0),
    onPartitionDropped: (listener) => {
      handle.dropListeners.add(listener)
    },
  }
}

/**
 * Rewrites the log at `key` atomically, keeping every event and removing the payload of erased
 * records' lines (see `compaction.ts`). See docs/log-format.md, "Compaction and erasure".
 */
export function compactEventLog<State, Draft extends LogEventDraft>(workspace: Workspace, key: string, fold: LogFold<State, Draft, unknown>): Promise<MemoryLogCompaction> {
  return compactHandle(openHandle(fold, workspace, key, {}))
}

async function view<State, T>(handle: LogHandle<State, any, any>, read: (state: State) => T, access: LogAccessOptions | undefined): Promise<T> {
  const keys = access?.partitions
  touchPartitions(handle, keys)
  // Fast path: nothing changed since we last looked and the partitions read are loaded, so the
  // state is current. `read` runs in the same synchronous turn as the check, so no in-process
  // write can interleave.
  if (handle.seen && loaded(handle, keys)) {
    const now = statNow(handle)
    const stat = now === NOT_NOW ? await handle.workspace.stat(handle.key) : now
    if (unchanged(handle, stat) && loaded(handle, keys)) {
      settleWhole(handle, keys)
      return read(handle.state)
    }
  }
  return handle.workspace.withLock(handle.lockKey, async () => {
    await sync(handle)
    await preparePartitions(handle, keys)
    // Many lines read past the last checkpoint (a log without one, or another writer's appends): write one.
    scheduleCheckpoint(handle)
    const result = read(handle.state)
    evictPartitions(handle)
    return result
  })
}

/** The fast path of {@link view} in this turn, or {@link NOT_NOW} (see `EventLog.peek`). */
function peek<State, T>(handle: LogHandle<State, any, any>, read: (state: State) => T, access: LogAccessOptions | undefined): T | typeof NOT_NOW {
  const keys = access?.partitions
  if (!handle.seen || !loaded(handle, keys)) return NOT_NOW
  const stat = statNow(handle)
  if (stat === NOT_NOW || !unchanged(handle, stat)) return NOT_NOW
  touchPartitions(handle, keys)
  settleWhole(handle, keys)
  return read(handle.state)
}

/** Whether every partition in `keys` (default: all) is loaded. */
function loaded(handle: LogHandle<any, any, any>, keys: readonly string[] | undefined): boolean {
  const partitions = handle.fold.partitions
  return partitions === undefined || partitions.missing(handle.state, keys).length === 0
}

/** The value's stat in this turn, or {@link NOT_NOW} when the workspace cannot answer without waiting. */
function statNow(handle: LogHandle<any, any, any>): WorkspaceValueStat | undefined | typeof NOT_NOW {
  const workspace = handle.workspace
  if (workspace.statNow === undefined) return NOT_NOW
  const stat = workspace.statNow(handle.key)
  return stat === false ? NOT_NOW : stat
}

/** Whether `stat` is of the value as last read: same size, same identity. */
function unchanged(handle: LogHandle<any, any, any>, stat: WorkspaceValueStat | undefined): boolean {
  const seen = handle.seen
  return seen !== undefined && (stat?.size ?? 0) === seen.size && stat?.id === seen.id
}
