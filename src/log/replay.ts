/**
 * Replay and tailing: bringing an open log up to date with its value. The first read replays
 * from the start (or from a checkpoint that matches the log); later reads check the value's size
 * (fs: `stat`; Redis: `STRLEN`; memory: the string) and parse only the bytes after the committed
 * offset. Every line is checked ({@link checkLineSync}); a bad line throws `MEMORY_LOG_CORRUPT`
 * with its number, never skipped unless the log was opened with `readPastCorruption`.
 */
import { agentError } from '../errors.ts'
import { loadCheckpoint, loadPartitions, sectionIgnored, SectionUnreadable } from './checkpoint.ts'
import { sha256HexSync } from './digest.ts'
import { headKey, headProblem, readHead, type LogHead } from './head.ts'
import { EMPTY, reset, utf8Decoder, warn, type LogHandle } from './handle.ts'
import { checkLine, checkLineSync, CorruptLine, digestOf, type Interner } from './line-check.ts'
import { quarantineTail } from './torn-tail.ts'
import type { WorkspaceValueStat } from '../workspace/types.ts'
import { foldLines } from './fold-lines.ts'
import type { FoldedLine, LogEvent, LogEventDraft } from './types.ts'

/**
 * Brings `handle` up to date: reads only the bytes after the committed offset (a full replay
 * when the value shrank, was replaced, or the new bytes do not continue the chain). Call under
 * the log's lock. `forWrite`: the caller holds the write path (a torn tail is kept for it).
 *
 * @throws AgentError `MEMORY_LOG_CORRUPT` with the first bad line; read errors of the workspace.
 */
export async function sync(handle: LogHandle<any, any, any>, forWrite = false, checkHead = true): Promise<void> {
  // The common case (nothing changed since the last look) in this one frame.
  let stat: WorkspaceValueStat | undefined = await handle.workspace.stat(handle.key)
  if (handle.seen && handle.seen.size === (stat?.size ?? 0) && handle.seen.id === stat?.id) return
  // A state already read from a checkpoint whose sections no longer read: another writer may have
  // replaced that checkpoint since, so the one on disk is tried (as an open tries it) before a replay.
  let fromCheckpoint = handle.offset > 0 ? 2 : 1
  for (;;) {
    try {
      await syncFrom(handle, forWrite, checkHead, true, stat)
      return
    }
    catch (error) {
      if (!(error instanceof SectionUnreadable)) throw error
      stat = undefined
      if (--fromCheckpoint > 0) continue
      // A checkpoint section that does not load: the checkpoint vouches for nothing; replay the log.
      sectionIgnored(handle, error)
      await syncFrom(handle, forWrite, checkHead, false)
      return
    }
  }
}

/**
 * Loads the partitions `keys` (`undefined`: all) of the handle's state that its checkpoint holds
 * and it has not loaded yet, with the events of later lines kept for them, before a read or a
 * write that uses them (call under the log's lock, after a {@link sync}). A section that does not
 * load makes the log replay in full.
 *
 * @throws AgentError `MEMORY_LOG_CORRUPT` when a kept event does not apply.
 */
export async function preparePartitions(handle: LogHandle<any, any, any>, keys: readonly string[] | undefined, forWrite = false): Promise<void> {
  try {
    await loadPartitions(handle, keys)
    return
  }
  catch (error) {
    if (error instanceof CorruptLine) throw corruptLog(handle.key, error)
    if (!(error instanceof SectionUnreadable)) throw error
  }
  // Another process may have replaced the checkpoint since its directory was read (a dropped
  // partition's section moved): open again, trusting the checkpoint on disk only as an open does.
  reset(handle)
  await sync(handle, forWrite)
  try {
    await loadPartitions(handle, keys)
  }
  catch (error) {
    if (error instanceof CorruptLine) throw corruptLog(handle.key, error)
    if (!(error instanceof SectionUnreadable)) throw error
    sectionIgnored(handle, error)
    reset(handle)
    await syncFrom(handle, forWrite, true, false)
  }
}

/** {@link sync} from `stat` of the value when given (taken just before), else from a new one. */
async function syncFrom(handle: LogHandle<any, any, any>, forWrite: boolean, checkHead: boolean, fromCheckpoint: boolean, known?: WorkspaceValueStat): Promise<void> {
  const { workspace, key } = handle
  const stat = known ?? await workspace.stat(key)
  const size = stat?.size ?? 0
  if (handle.seen && handle.seen.size === size && handle.seen.id === stat?.id) return
  const first = handle.seen === undefined && handle.lines === 0
  if ((size < handle.offset || (handle.seen && handle.seen.id !== stat?.id)) && !(await reanchor(handle))) reset(handle)
  try {
    // Read before the log: a head written after this read could name lines the read misses.
    const head = handle.offset === 0 && checkHead ? await readHead(handle) : undefined
    // A replay from the start may begin at a checkpoint that matches the log instead.
    const afterCheckpoint = fromCheckpoint && handle.offset === 0 && size > 0 ? await loadCheckpoint(handle, size) : undefined
    const start = handle.offset
    const bytes = afterCheckpoint ?? (await workspace.readBytes(key, start)) ?? EMPTY
    try {
      await scanBytes(handle, bytes)
      handle.seen = { size: start + bytes.length, id: stat?.id }
    }
    catch (error) {
      if (!(error instanceof CorruptLine) || start === 0) throw error
      // New bytes that do not continue our chain: the value was rewritten; replay it whole.
      reset(handle)
      const whole = (await workspace.readBytes(key, 0)) ?? EMPTY
      await scanBytes(handle, whole)
      handle.seen = { size: whole.length, id: stat?.id }
    }
    if (head !== undefined && typeof head !== 'string') checkHeadAnchor(handle, head)
  }
  catch (error) {
    reset(handle)
    throw error instanceof CorruptLine ? corruptLog(key, error) : error
  }
  // A torn tail found when the log is first opened is moved aside at once.
  if (first && !forWrite && handle.tail.length > 0 && workspace.writable) await quarantineTail(handle)
}

/**
 * After the value was replaced (another process's compaction: a new file, usually shorter): when
 * its line `handle.lines` is the line the state was folded to (same digest, so the same events up
 * to it: compaction strips payloads and keeps every digest), the state is kept and only the lines
 * after it are read, instead of a replay of the whole log. `false` (replay) when it is not.
 */
async function reanchor(handle: LogHandle<any, any, any>): Promise<boolean> {
  if (handle.lines === 0 || handle.lastDigest === null || handle.skipped > 0 || handle.options.readPastCorruption) return false
  const bytes = (await handle.workspace.readBytes(handle.key, 0)) ?? EMPTY
  let start = 0
  let end = -1
  for (let line = 0; line < handle.lines; line++) {
    start = end + 1
    end = bytes.indexOf(10, start)
    if (end === -1) return false
  }
  const text = utf8Decoder.decode(bytes.subarray(start, end))
  try {
    const prev = (JSON.parse(text) as { prev?: string | null }).prev ?? null
    const hash = await sha256HexSync()
    const event = hash ? checkLineSync(handle.fold, text, handle.lines, prev, hash, new Map(), new Map()) : await checkLine(handle.fold, text, handle.lines, prev)
    if (event.digest !== handle.lastDigest || event.more) return false
  }
  catch {
    return false
  }
  handle.offset = end + 1
  handle.lastLineStart = start
  handle.tail = EMPTY
  return true
}

/** A log that does not reach its head anchor (fewer lines, or another last line): the log may be a backup restored on purpose. */
class HeadAnchorMismatch extends CorruptLine {}

/** The `MEMORY_LOG_CORRUPT` error of a bad line of the log at `key`. */
function corruptLog(key: string, error: CorruptLine) {
  if (error instanceof HeadAnchorMismatch) {
    const head = headKey(key)
    return agentError('MEMORY_LOG_CORRUPT', `line ${error.line} of the memory log "${key}" fails verification: ${error.reason}`, `if you restored an older backup of the log on purpose, check that it is the backup you meant, then remove the head anchor "${head}" (the file ${head.replaceAll(':', '/')} in the workspace folder, beside the log; docs/log-format.md): that accepts the restored log, and the next write anchors it again. Otherwise lines were cut from the log: restore it from a backup (\`agent memory verify\` shows where it ends); the log is never repaired silently`, { key, line: error.line, reason: error.reason, head })
  }
  return agentError('MEMORY_LOG_CORRUPT', `line ${error.line} of the memory log "${key}" fails verification: ${error.reason}`, 'run `agent memory verify` to see the first bad line, then restore the log from a backup or move the lines from the bad one on aside by hand; the log is never repaired silently (reads can opt into continuing past it with `readPastCorruption`)', { key, line: error.line, reason: error.reason })
}

/**
 * After a read from the start: the log must reach its head anchor (`head.ts`, read before the
 * log), or lines were cut from its end.
 *
 * @throws CorruptLine naming the first missing line.
 */
function checkHeadAnchor(handle: LogHandle<any, any, any>, head: LogHead): void {
  // Only the last line's digest is at hand: a longer log is checked at that line by verifyLog.
  const problem = headProblem(head, handle.lines, head.lines === handle.lines ? handle.lastDigest : undefined, handle.key)
  if (problem) throw new HeadAnchorMismatch(Math.min(head.lines, handle.lines + 1), problem)
}

/**
 * Parses and checks the complete lines of `bytes` (the value after the handle's committed
 * offset) and folds the committed ones into the handle; the uncommitted rest goes to `tail`.
 * Records whose erase event is among the new lines are never folded (their content does not
 * enter memory).
 *
 * @throws CorruptLine at the first line that fails (unless the handle reads past corruption).
 */
export async function scanBytes<State, Draft extends LogEventDraft>(handle: LogHandle<State, Draft, any>, bytes: Uint8Array): Promise<void> {
  const { fold } = handle
  const events: Array<FoldedLine<Draft>> = []
  // One decode for the whole read: a `\n` byte is never part of a multi-byte sequence, so the
  // n-th newline of the text is the n-th newline byte (byte offsets still come from `bytes`).
  const whole = utf8Decoder.decode(bytes)
  const hash = await sha256HexSync()
  const interner: Interner = new Map()
  let textAt = 0
  let at = 0
  let line = handle.lines
  let prev = handle.lastDigest
  let committedAt = 0
  let committedCount = handle.lines
  let committedDigest = prev
  let committedLineStart = -1
  let skipped = 0
  for (let end = bytes.indexOf(10, at); end !== -1; end = bytes.indexOf(10, at)) {
    line++
    const textEnd = whole.indexOf('\n', textAt)
    const text = whole.slice(textAt, textEnd)
    const lineStart = at
    textAt = textEnd + 1
    at = end + 1
    let event: LogEvent<Draft>
    try {
      event = hash ? checkLineSync(fold, text, line, prev, hash, interner, handle.interned) : await checkLine(fold, text, line, prev)
    }
    catch (error) {
      if (!(error instanceof CorruptLine) || !handle.options.readPastCorruption) throw error
      warn(handle, { code: 'MEMORY_LOG_LINE_SKIPPED', key: handle.key, message: `line ${line} of the memory log "${handle.key}" was skipped: ${error.reason}`, details: { line, reason: error.reason } })
      skipped++
      // Continue the chain from whatever digest the bad line claims, if any.
      prev = digestOf(text)
      committedAt = at
      committedCount = line
      committedDigest = prev
      committedLineStart = lineStart
      continue
    }
    prev = event.digest
    events.push({ event, line })
    if (event.more) continue
    committedAt = at
    committedCount = line
    committedDigest = prev
    committedLineStart = lineStart
  }
  const committed = committedCount === line ? events : events.filter(item => item.line <= committedCount)
  // Lines of partitions whose checkpoint section is not loaded yet are kept for them (fold-lines.ts);
  // reading past corruption, their sections are loaded first instead (a bad line is skipped where it is).
  const partitions = fold.partitions
  if (partitions && handle.options.readPastCorruption && partitions.missing(handle.state, undefined).length > 0) {
    await loadPartitions(handle, [...new Set(committed.map(({ event }) => partitions.of(event)))])
  }
  skipped += foldLines(handle, committed)
  handle.lines = committedCount
  handle.lastDigest = committedDigest
  if (committedLineStart !== -1) handle.lastLineStart = handle.offset + committedLineStart
  handle.offset += committedAt
  // A copy: a view would keep the whole read buffer alive as long as the handle.
  handle.tail = committedAt === bytes.length ? EMPTY : bytes.slice(committedAt)
  handle.skipped += skipped
}
