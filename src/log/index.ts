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
import type { Workspace } from '../workspace/types.ts'
import { appendEvents } from './append.ts'
import { scheduleCheckpoint, writeCheckpoint } from './checkpoint-schedule.ts'
import { compactHandle } from './compaction.ts'
import { evictPartitions, touchPartitions } from './eviction.ts'
import { openHandle, type LogHandle } from './handle.ts'
import { preparePartitions, sync } from './replay.ts'
import { DEFAULT_CHECKPOINT_EVERY, type EventLog, type LogAccessOptions, type LogEventDraft, type LogFold, type MemoryLogCompaction, type MemoryLogOptions } from './types.ts'

export * from './types.ts'
export { canonicalJson } from './canonical-json.ts'
export { knownSyncHash, sha256Hex, sha256HexSync } from './digest.ts'
export { checkpointKey } from './checkpoint.ts'
export { verifyEventLog } from './verify.ts'
export { parseEventLine } from './line-check.ts'
export { serializeEvent } from './line-writer.ts'
export { payloadDigestOf, stripPayload } from './compaction.ts'
export { utf8Length } from './utf8.ts'
export { deflateToBase64, inflateFromBase64 } from './deflate-text.ts'

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
  const loaded = () => (handle.fold.partitions?.missing(handle.state, keys).length ?? 0) === 0
  // Fast path: nothing changed since we last looked and the partitions read are loaded, so the
  // state is current. `read` runs in the same synchronous turn, so no in-process write can interleave.
  if (handle.seen && loaded()) {
    const stat = await handle.workspace.stat(handle.key)
    if ((stat?.size ?? 0) === handle.seen.size && stat?.id === handle.seen.id && loaded()) return read(handle.state)
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
