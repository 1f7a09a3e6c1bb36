/**
 * The write path: one write (the events a `build` returns) is one conditional append of its
 * lines (`workspace.append(key, text, { ifSize })`, atomic across processes and Redis clients),
 * made under this process's lock for the log. A write is committed when its last line, with its
 * `\n`, is in the value: lines before the last carry `more: true`, so a crash in the middle of a
 * write leaves no half-applied batch. When another writer got there first, the new lines are
 * read and the write is built again against them.
 */
import { agentError } from '../errors.ts'
import { scheduleCheckpoint } from './checkpoint-schedule.ts'
import { evictPartitions, touchPartitions } from './eviction.ts'
import { knownSyncHash, lineHasher } from './digest.ts'
import { scheduleHead } from './head.ts'
import { MAX_WRITE_ATTEMPTS, requireWritable, reset, type LogHandle } from './handle.ts'
import { serializeEvent } from './line-writer.ts'
import { preparePartitions, sync } from './replay.ts'
import { quarantineTail } from './torn-tail.ts'
import type { LogEventDraft, LogPartitions } from './types.ts'
import { utf8Length } from './utf8.ts'

/** Appends the events `build` returns as one all-or-nothing write; see `EventLog.write`. */
export function appendEvents<State, Draft extends LogEventDraft, Result>(handle: LogHandle<State, Draft, Result>, build: (state: State) => Draft[] | Promise<Draft[]>, partitions?: readonly string[]): Promise<Result[]> {
  try {
    requireWritable(handle)
  }
  catch (error) {
    return Promise.reject(error)
  }
  touchPartitions(handle, partitions)
  // The lock's promise as it is: no promise of this function's own to adopt it.
  return handle.workspace.withLock(handle.lockKey, () => writeLocked(handle, build, partitions))
}

/** The write of {@link appendEvents}, under the log's lock. */
async function writeLocked<State, Draft extends LogEventDraft, Result>(handle: LogHandle<State, Draft, Result>, build: (state: State) => Draft[] | Promise<Draft[]>, partitions: readonly string[] | undefined): Promise<Result[]> {
  const { workspace, key, fold } = handle
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
    // The value as last read (its stat, taken in this turn): nothing to read, no promise to wait for.
    if (!unchangedNow(handle)) await sync(handle, true)
    if (handle.skipped > 0) {
      throw agentError('MEMORY_LOG_CORRUPT', `the memory log "${key}" has corrupt lines that reads skipped, so it cannot be written`, 'run `agent memory verify`, restore the log from a backup or move the bad lines aside; then retry', { key })
    }
    if (handle.tail.length > 0) {
      await quarantineTail(handle)
      continue
    }
    // No promise turn when every partition named is loaded (a burst of writes to loaded scopes).
    if (fold.partitions && fold.partitions.missing(handle.state, partitions).length > 0) await preparePartitions(handle, partitions, true)
    const built = build(handle.state)
    const drafts = built instanceof Promise ? await built : built
    // A draft of a partition the build did not name and the state has not loaded: load it, build again.
    const touched = fold.partitions && drafts.length > 0 ? unloadedOf(fold.partitions, handle.state, drafts, partitions) : undefined
    if (touched && touched.length > 0) {
      await preparePartitions(handle, touched, true)
      continue
    }
    if (drafts.length === 0) {
      scheduleCheckpoint(handle)
      evictPartitions(handle)
      return []
    }
    const conflict = fold.conflict(handle.state, drafts)
    if (conflict) {
      throw agentError('MEMORY_EVENT_CONFLICT', `the write to the memory log "${key}" was refused: ${conflict.reason}`, 'read the record again and retry with its current state', { key, recordId: conflict.draft.recordId })
    }
    let prev = handle.lastDigest
    const lines: string[] = []
    const events: Draft[] = []
    const hash = knownSyncHash() ?? await lineHasher()
    for (let index = 0; index < drafts.length; index++) {
      const serialized = serializeEvent(fold.schema, drafts[index]!, handle.lines + 1 + index, prev, index < drafts.length - 1, hash, handle.interned)
      const { line, digest, folded } = serialized instanceof Promise ? await serialized : serialized
      lines.push(line)
      events.push(folded)
      prev = digest
    }
    const text = lines.length === 1 ? `${lines[0]}\n` : `${lines.join('\n')}\n`
    let written: boolean
    try {
      const options = handle.options.fsync ? { ifSize: handle.offset, fsync: true } : { ifSize: handle.offset }
      // In this turn where the workspace can (a burst: the fs lease held), so a write to a log
      // as last read, with its partitions loaded, waits for no promise.
      written = workspace.appendNow?.(key, text, options) ?? await workspace.append(key, text, options)
    }
    catch (error) {
      // The append may have written part of the text: re-read everything next time.
      reset(handle)
      throw error
    }
    // Another process or client appended first: read its lines and build again.
    if (!written) continue
    // The conflict check ran against this state, which nothing else changes while the lock is held.
    const results = events.length === 1 ? [fold.apply(handle.state, events[0]!, true)] : events.map(event => fold.apply(handle.state, event, true))
    const bytes = utf8Length(text)
    handle.lines += events.length
    handle.lastDigest = prev
    handle.lastLineStart = lines.length === 1 ? handle.offset : handle.offset + bytes - utf8Length(lines[lines.length - 1]!) - 1
    handle.offset += bytes
    // The write created the value: learn its identity (fs inode) so the next look is a fast stat.
    const id = handle.offset === bytes ? (await workspace.stat(key))?.id : handle.seen?.id
    handle.seen = { size: handle.offset, id }
    scheduleHead(handle)
    scheduleCheckpoint(handle)
    evictPartitions(handle)
    return results
  }
  throw agentError('MEMORY_LOG_BUSY', `other writers kept appending to the memory log "${key}" while this write was retried ${MAX_WRITE_ATTEMPTS} times`, 'retry the write later', { key })
}

/**
 * Whether the value is, by one stat taken now (the workspace's synchronous `statNow`), the size
 * and identity it had when last read, so {@link sync} would find nothing to read. `false` when
 * the workspace cannot answer without waiting, or has not been read yet.
 */
function unchangedNow(handle: LogHandle<any, any, any>): boolean {
  const { seen, workspace } = handle
  if (seen === undefined || workspace.statNow === undefined) return false
  const stat = workspace.statNow(handle.key)
  return stat !== false && (stat?.size ?? 0) === seen.size && stat?.id === seen.id
}

const NONE: readonly string[] = Object.freeze([])

/** The partitions of `drafts` not loaded; a single draft of the one partition the write named (loaded above) is not asked again. */
function unloadedOf<State, Draft extends LogEventDraft>(partitions: LogPartitions<State, Draft>, state: State, drafts: readonly Draft[], named: readonly string[] | undefined): readonly string[] {
  if (drafts.length > 1) return partitions.missing(state, [...new Set(drafts.map(draft => partitions.of(draft)))])
  const key = partitions.of(drafts[0]!)
  return named?.length === 1 && named[0] === key ? NONE : partitions.missing(state, [key])
}
