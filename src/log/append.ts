/**
 * The write path: one write (the events a `build` returns) is one conditional append of its
 * lines (`workspace.append(key, text, { ifSize })`, atomic across processes and Redis clients),
 * made under this process's lock for the log. A write is committed when its last line, with its
 * `\n`, is in the value: lines before the last carry `more: true`, so a crash in the middle of a
 * write leaves no half-applied batch. When another writer got there first, the new lines are
 * read and the write is built again against them.
 */
import { agentError } from '../errors.ts'
import { writeTurns } from './turns.ts'
import { scheduleCheckpoint } from './checkpoint-schedule.ts'
import { settleWhole } from './checkpoint.ts'
import { evictPartitions, touchPartitions } from './eviction.ts'
import { knownSyncHash, lineHasher, type LineHash } from './digest.ts'
import { scheduleHead } from './head.ts'
import { MAX_WRITE_ATTEMPTS, requireWritable, reset, type LogHandle } from './handle.ts'
import { serializeEvent, type SerializedEvent } from './line-writer.ts'
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
  const release = handle.workspace.lockNow?.(handle.lockKey)
  if (release === undefined) return handle.workspace.withLock(handle.lockKey, () => writeLocked(handle, build, partitions)).then(writeTurns.pace)
  let written: Result[] | Promise<Result[]>
  try {
    written = writeNow(handle, build, partitions)
  }
  catch (error) {
    release()
    return Promise.reject(error)
  }
  if (!(written instanceof Promise)) {
    release()
    // A write that completes in this turn makes `for (...) await write(...)` a loop of
    // microtasks, which no timer or I/O callback could enter: a turn once 10 ms of work ran
    // (src/log/turns.ts), given after the lock is released, so other writers go on meanwhile.
    return Promise.resolve(writeTurns.pace(written))
  }
  written.then(release, release)
  return written.then(writeTurns.pace)
}

/**
 * The write of {@link appendEvents} in this turn, under the lock taken now: a write to a log as
 * last read (one stat), with its partitions loaded, a synchronous build and hash, and a workspace
 * that appends in this turn (a burst: the fs lease held) makes no promise. Anything that needs
 * waiting goes on as {@link writeLocked}, with the drafts already built.
 */
function writeNow<State, Draft extends LogEventDraft, Result>(handle: LogHandle<State, Draft, Result>, build: (state: State) => Draft[] | Promise<Draft[]>, partitions: readonly string[] | undefined): Result[] | Promise<Result[]> {
  const { workspace, fold } = handle
  const hash = knownSyncHash()
  // Created by this write (its identity is learnt by a stat that waits), or anything to read or load first.
  if (hash === undefined || workspace.appendNow === undefined || handle.offset === 0 || !unchangedNow(handle) || handle.skipped > 0 || handle.tail.length > 0 || (fold.partitions && fold.partitions.missing(handle.state, partitions).length > 0)) return writeLocked(handle, build, partitions)
  settleWhole(handle, partitions)
  const built = build(handle.state)
  if (built instanceof Promise) return writeLocked(handle, build, partitions, built)
  // A draft of a partition the build did not name and the state has not loaded: the attempts load it.
  if (fold.partitions && built.length > 0 && unloadedOf(fold.partitions, handle.state, built, partitions).length > 0) return writeLocked(handle, build, partitions, built)
  if (built.length === 0) return nothingWritten(handle)
  checkConflict(handle, built)
  const serialized = serializeDrafts(handle, built, hash)
  if (serialized instanceof Promise) return writeLocked(handle, build, partitions, built)
  let written: boolean | undefined
  try {
    written = workspace.appendNow(handle.key, serialized.text, appendOptions(handle))
  }
  catch (error) {
    // The append may have written part of the text: re-read everything next time.
    reset(handle)
    throw error
  }
  // Not in this turn (the lease held elsewhere): the attempts append with waiting.
  if (written === undefined) return writeLocked(handle, build, partitions, built)
  // Another process or client appended first: read its lines and build again.
  if (!written) return writeLocked(handle, build, partitions)
  const results = committed(handle, serialized)
  handle.seen = { size: handle.offset, id: handle.seen?.id }
  afterWrite(handle)
  return results
}

/** The write of {@link appendEvents}, under the log's lock; `built`: what `build` returned in this lock already, for the first attempt. */
async function writeLocked<State, Draft extends LogEventDraft, Result>(handle: LogHandle<State, Draft, Result>, build: (state: State) => Draft[] | Promise<Draft[]>, partitions: readonly string[] | undefined, built?: Draft[] | Promise<Draft[]>): Promise<Result[]> {
  const { workspace, key, fold } = handle
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
    if (built === undefined) {
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
      else settleWhole(handle, partitions)
      built = build(handle.state)
    }
    const drafts = built instanceof Promise ? await built : built
    built = undefined
    // A draft of a partition the build did not name and the state has not loaded: load it, build again.
    const touched = fold.partitions && drafts.length > 0 ? unloadedOf(fold.partitions, handle.state, drafts, partitions) : undefined
    if (touched && touched.length > 0) {
      await preparePartitions(handle, touched, true)
      continue
    }
    if (drafts.length === 0) return nothingWritten(handle)
    checkConflict(handle, drafts)
    const serialized = serializeDrafts(handle, drafts, knownSyncHash() ?? await lineHasher())
    const lines = serialized instanceof Promise ? await serialized : serialized
    const text = lines.text
    let written: boolean
    try {
      const options = appendOptions(handle)
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
    const created = handle.offset === 0
    const results = committed(handle, lines)
    // The write created the value: learn its identity (fs inode) so the next look is a fast stat.
    const id = created ? (await workspace.stat(key))?.id : handle.seen?.id
    handle.seen = { size: handle.offset, id }
    afterWrite(handle)
    return results
  }
  throw agentError('MEMORY_LOG_BUSY', `other writers kept appending to the memory log "${key}" while this write was retried ${MAX_WRITE_ATTEMPTS} times`, 'retry the write later', { key })
}

/** The lines of one write: each draft serialized and chained after the last committed line, their text (each line with its `\n`), the events as a replay folds them, and the last digest. */
interface WriteLines<Draft> {
  lines: string[]
  events: Draft[]
  text: string
  prev: string | null
}

/** The drafts as the lines of one write, chained after the handle's last line (a promise only where the hash is one). */
function serializeDrafts<Draft extends LogEventDraft>(handle: LogHandle<any, Draft, any>, drafts: readonly Draft[], hash: LineHash): WriteLines<Draft> | Promise<WriteLines<Draft>> {
  const lines: string[] = []
  const events: Draft[] = []
  let prev = handle.lastDigest
  for (let index = 0; index < drafts.length; index++) {
    const serialized = serializeEvent(handle.fold.schema, drafts[index]!, handle.lines + 1 + index, prev, index < drafts.length - 1, hash, handle.interned)
    if (serialized instanceof Promise) return serializeRest(handle, drafts, hash, { lines, events, text: '', prev }, serialized)
    lines.push(serialized.line)
    events.push(serialized.folded)
    prev = serialized.digest
  }
  return { lines, events, text: textOf(lines), prev }
}

/** {@link serializeDrafts} from the draft whose line `pending` is being hashed (Web Crypto) on. */
async function serializeRest<Draft extends LogEventDraft>(handle: LogHandle<any, Draft, any>, drafts: readonly Draft[], hash: LineHash, done: WriteLines<Draft>, pending: Promise<SerializedEvent<Draft>>): Promise<WriteLines<Draft>> {
  const { lines, events } = done
  let prev = done.prev
  const first = lines.length
  for (let index = first; index < drafts.length; index++) {
    const serialized = index === first ? await pending : await serializeEvent(handle.fold.schema, drafts[index]!, handle.lines + 1 + index, prev, index < drafts.length - 1, hash, handle.interned)
    lines.push(serialized.line)
    events.push(serialized.folded)
    prev = serialized.digest
  }
  return { lines, events, text: textOf(lines), prev }
}

/** The text of one write: its lines, each with its `\n`. */
function textOf(lines: readonly string[]): string {
  return lines.length === 1 ? `${lines[0]}\n` : `${lines.join('\n')}\n`
}

/** The options of the write's conditional append: at the size as last read, with `fsync` when the log was opened with it. */
function appendOptions(handle: LogHandle<any, any, any>): { ifSize: number; fsync?: boolean } {
  return handle.options.fsync ? { ifSize: handle.offset, fsync: true } : { ifSize: handle.offset }
}

/** @throws AgentError `MEMORY_EVENT_CONFLICT` when the fold refuses one of the drafts (nothing written). */
function checkConflict<State, Draft extends LogEventDraft>(handle: LogHandle<State, Draft, any>, drafts: readonly Draft[]): void {
  const conflict = handle.fold.conflict(handle.state, drafts)
  if (conflict) {
    throw agentError('MEMORY_EVENT_CONFLICT', `the write to the memory log "${handle.key}" was refused: ${conflict.reason}`, 'read the record again and retry with its current state', { key: handle.key, recordId: conflict.draft.recordId })
  }
}

/** A write of no events: nothing appended, the bookkeeping of an operation done. */
function nothingWritten(handle: LogHandle<any, any, any>): [] {
  scheduleCheckpoint(handle)
  evictPartitions(handle)
  return []
}

/**
 * The lines just appended, applied: the events folded into the state (the conflict check ran
 * against this state, which nothing else changes while the lock is held) and the handle's
 * position moved past them. Returns each event's result.
 */
function committed<State, Draft extends LogEventDraft, Result>(handle: LogHandle<State, Draft, Result>, written: WriteLines<Draft>): Result[] {
  const { fold } = handle
  const { lines, events, text } = written
  const results = events.length === 1 ? [fold.apply(handle.state, events[0]!, true)] : events.map(event => fold.apply(handle.state, event, true))
  const bytes = utf8Length(text)
  handle.lines += events.length
  handle.lastDigest = written.prev
  handle.lastLineStart = lines.length === 1 ? handle.offset : handle.offset + bytes - utf8Length(lines[lines.length - 1]!) - 1
  handle.offset += bytes
  return results
}

/** After a write: the head anchor and a checkpoint scheduled when due, partitions over the bound dropped. */
function afterWrite(handle: LogHandle<any, any, any>): void {
  scheduleHead(handle)
  scheduleCheckpoint(handle)
  evictPartitions(handle)
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
