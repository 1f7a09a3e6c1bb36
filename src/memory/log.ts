/**
 * The memory event log: an append-only JSONL value in the agent workspace, with a SHA-256 digest
 * chain, folded into records in process memory.
 *
 * ## Line format (version 1)
 *
 * UTF-8 text, one JSON object per line, each line ended by `\n`. Every line is the canonical JSON
 * (keys sorted, no whitespace; see `canonicalJson`) of:
 *
 * | field | type | meaning |
 * | --- | --- | --- |
 * | `v` | `1` | format version |
 * | `seq` | integer | 1 on the first line, +1 per line, no gaps |
 * | `type` | `"remember" \| "supersede" \| "delete"` | event type |
 * | `store` | string | name of the store that wrote the event |
 * | `scope` | object | the record's scope (fields `agent`, `environment`, ... `workspace`) |
 * | `recordId` | string | `mem_` + 32 hex characters |
 * | `version` | integer | the record's version after the event: 1 for `remember`, +1 per event |
 * | `at` | ISO 8601 | when the event was written |
 * | `audit` | object | who caused it (`via`, `agent`, `runId`, `threadId`, `user`, `approver`, `approvalReason`); host-written |
 * | `prev` | hex \| `null` | `digest` of the previous line; `null` on the first line |
 * | `digest` | hex | SHA-256 of the canonical JSON of this line without `digest` |
 * | `more` | `true` | only on lines of a multi-line write except its last (see below) |
 *
 * Payload by type: `remember` adds the record's fields `kind`, `content`, `title?`, `tags`,
 * `metadata`, `pinned`, `confidence?`, `supersedes`, `provenance`, `createdAt`; `supersede` adds
 * `supersededBy` (the newer record's id); `delete` (a tombstone) adds `reason?`. Lines are never
 * rewritten: a supersede or delete is a new line, and the record's earlier lines stay.
 *
 * ## Writes
 *
 * One write (a `remember` and the `supersede` events of its `supersedes` list) is one
 * `workspace.append` call, made while holding this process's lock for the log. A write is
 * committed when its last line, with its `\n`, is in the value: lines before the last carry
 * `more: true`, so a crash in the middle of a write leaves no half-applied batch.
 *
 * ## Reads
 *
 * The first operation replays the value: every line is parsed, and its `seq`, `prev` and
 * `digest` and its effect on the records are checked. A bad line anywhere before the end throws
 * `MEMORY_LOG_CORRUPT` with its line number; nothing is skipped. Text after the last committed
 * line (a torn line without `\n`, or an unfinished multi-line write) is a crash leftover: reads
 * ignore it, and the next write moves it to `<key>.torn-<epoch ms>` and truncates the log to its
 * last committed line before appending, so new lines never glue onto it. The folded state stays
 * in memory per (workspace object, key); later operations check the value's size (fs: `stat`;
 * other drivers: the text's length) and parse only lines added since. A read error is thrown,
 * never taken for an empty log.
 *
 * Limits (next issue): the lock is per process, so two processes appending to one log can break
 * the chain; change detection is by size, so a same-size rewrite by another writer is noticed
 * only by {@link verifyLog}.
 */
import { agentError } from '../errors.ts'
import type { Workspace } from '../workspace/types.ts'
import { canonicalJson, sha256Hex } from './digest.ts'
import {
  applyEvent,
  emptyRecordState,
  eventConflict,
  foldEvent,
  parseEvent,
  type MemoryEvent,
  type MemoryEventDraft,
  type MemoryRecordLookup,
  type MemoryRecordState,
} from './records.ts'
import type { MemoryRecord } from './types.ts'

/** An open log: the folded records of one workspace key, kept current. */
export interface MemoryLog {
  readonly workspace: Workspace
  /** Workspace key of the JSONL value, for example `memory:memory.jsonl`. */
  readonly key: string
  /**
   * Runs `read` on the current state (after taking in lines other writers added). `read` must
   * not mutate the state nor keep it past its return.
   *
   * @throws AgentError `MEMORY_LOG_CORRUPT` when the log fails verification; read errors of the workspace.
   */
  view<T>(read: (state: MemoryRecordState) => T): Promise<T>
  /**
   * Appends the events `build` returns as one all-or-nothing write. `build` runs under the log's
   * lock with the current state; it may throw to write nothing. Returns each event's record
   * after the event.
   *
   * @throws AgentError `MEMORY_WORKSPACE_READ_ONLY` when the workspace is read-only;
   * `MEMORY_LOG_CORRUPT`; `MEMORY_EVENT_CONFLICT` when an event cannot apply (nothing written);
   * whatever `build` throws; write errors of the workspace.
   */
  write(build: (state: MemoryRecordState) => MemoryEventDraft[] | Promise<MemoryEventDraft[]>): Promise<MemoryRecord[]>
}

/** Result of {@link verifyLog}. */
export interface MemoryLogVerification {
  /** True when every complete line verifies (a torn tail alone does not make the log bad). */
  ok: boolean
  /** Number of complete (newline-ended) lines in the log. */
  lines: number
  /** The first line that fails, 1-based, and why. */
  firstBad?: { line: number; reason: string }
  /** Uncommitted text at the end (torn line or unfinished write): first line it starts on and its size in UTF-8 bytes. */
  torn?: { line: number; bytes: number }
}

interface LogHandle {
  workspace: Workspace
  key: string
  lockKey: string
  state: MemoryRecordState
  /** Committed lines folded into `state`. */
  lines: number
  lastDigest: string | null
  /** Length of the committed text, in UTF-16 code units and in UTF-8 bytes. */
  chars: number
  bytes: number
  /** Uncommitted text after `chars` when last read. */
  tail: string
  /** Size of the whole value when last seen, as measured by the probe; `undefined` forces a read. */
  stamp: Stamp | undefined
}

type Stamp = { unit: 'bytes' | 'chars'; size: number }

const handles = new WeakMap<Workspace, Map<string, LogHandle>>()

/**
 * Opens (or returns the already open) log at `key` of `workspace`. Cheap: nothing is read until
 * the first operation. One state is kept per workspace object and key, so a new workspace object
 * over the same storage replays the log from storage.
 */
export function openMemoryLog(workspace: Workspace, key: string): MemoryLog {
  // `memory/x.jsonl` and `memory:x.jsonl` name one value: share one state.
  key = key.replace(/[/\\]/g, ':')
  let byKey = handles.get(workspace)
  if (!byKey) handles.set(workspace, byKey = new Map())
  let handle = byKey.get(key)
  if (!handle) {
    handle = { ...emptyHandle(), workspace, key, lockKey: `${key}.lock` }
    byKey.set(key, handle)
  }
  const log = handle
  return {
    workspace,
    key,
    view: read => view(log, read),
    write: build => write(log, build),
  }
}

/**
 * Reads the whole log at `key` and checks every line (JSON, shape, `seq`, `prev`, `digest`, and
 * each event's effect on the records) without touching the in-memory state or the value.
 *
 * @throws only read errors of the workspace (a missing value is an empty, valid log).
 */
export async function verifyLog(workspace: Workspace, key: string): Promise<MemoryLogVerification> {
  const text = (await workspace.readText(key)) ?? ''
  const scratch = { ...emptyHandle(), workspace, key, lockKey: '' }
  try {
    const scan = await scanLines(scratch, text)
    const lines = countNewlines(text)
    return {
      ok: true,
      lines,
      ...(scan.tail ? { torn: { line: scan.lines + 1, bytes: utf8Length(scan.tail) } } : {}),
    }
  }
  catch (error) {
    if (error instanceof CorruptLine) return { ok: false, lines: countNewlines(text), firstBad: { line: error.line, reason: error.reason } }
    throw error
  }
}

function emptyHandle() {
  return { state: emptyRecordState(), lines: 0, lastDigest: null, chars: 0, bytes: 0, tail: '', stamp: undefined }
}

async function view<T>(handle: LogHandle, read: (state: MemoryRecordState) => T): Promise<T> {
  // Fast path: nothing changed since we last looked, so the state is current. `read` runs in
  // the same synchronous turn, so no in-process write can interleave.
  if (await isUnchanged(handle)) return read(handle.state)
  return handle.workspace.withLock(handle.lockKey, async () => {
    await sync(handle)
    return read(handle.state)
  })
}

async function write(handle: LogHandle, build: (state: MemoryRecordState) => MemoryEventDraft[] | Promise<MemoryEventDraft[]>): Promise<MemoryRecord[]> {
  const { workspace, key } = handle
  if (!workspace.writable) {
    throw agentError('MEMORY_WORKSPACE_READ_ONLY', `the workspace is read-only, so the memory log "${key}" cannot be written`, 'give the agent a writable workspace, or set the store\'s `write.mode` to "off"', { key })
  }
  return workspace.withLock(handle.lockKey, async () => {
    await sync(handle)
    if (handle.tail) await quarantineTail(handle)
    const drafts = await build(handle.state)
    if (drafts.length === 0) return []
    checkDrafts(handle, drafts)
    let prev = handle.lastDigest
    let text = ''
    for (const [index, draft] of drafts.entries()) {
      const line = { ...draft, v: 1 as const, seq: handle.lines + 1 + index, prev, ...(index < drafts.length - 1 ? { more: true as const } : {}) }
      const digest = await sha256Hex(canonicalJson(line))
      text += `${canonicalJson({ ...line, digest })}\n`
      prev = digest
    }
    try {
      await workspace.append(key, text)
    }
    catch (error) {
      // The append may have written part of the text: re-read everything next time.
      reset(handle)
      throw error
    }
    // Fold what was written, parsed back from the text, so that live state equals a replay.
    const records = text.slice(0, -1).split('\n').map(line => applyEvent(handle.state, JSON.parse(line) as MemoryEvent))
    handle.lines += drafts.length
    handle.lastDigest = prev
    handle.chars += text.length
    const bytes = utf8Length(text)
    handle.bytes += bytes
    // Re-stamp so the next operation can skip reading: by size where the driver reports one (a
    // value that grew beyond our write means another writer: leave the stamp unset to re-read).
    const size = await metaSize(handle)
    if (size !== undefined) handle.stamp = size === handle.bytes ? { unit: 'bytes', size } : undefined
    else handle.stamp = handle.stamp?.unit === 'chars' ? { unit: 'chars', size: handle.stamp.size + text.length } : undefined
    return records
  })
}

/** Checks that the drafts apply one after the other, against an overlay of the state. */
function checkDrafts(handle: LogHandle, drafts: MemoryEventDraft[]): void {
  const overlay = new Map<string, MemoryRecord>()
  const lookup: MemoryRecordLookup = id => overlay.get(id) ?? handle.state.records.get(id)
  for (const draft of drafts) {
    const conflict = eventConflict(lookup, draft)
    if (conflict) {
      throw agentError('MEMORY_EVENT_CONFLICT', `the write to the memory log "${handle.key}" was refused: ${conflict}`, 'read the record again and retry with its current state', { key: handle.key, recordId: draft.recordId })
    }
    overlay.set(draft.recordId, foldEvent(lookup(draft.recordId), draft))
  }
}

/** Size of the value without reading it where the driver can tell (fs `stat`), else its text length. */
async function probe(handle: LogHandle): Promise<{ stamp: Stamp; text?: string }> {
  const size = await metaSize(handle)
  if (size !== undefined) return { stamp: { unit: 'bytes', size } }
  // No size from the driver (or the value is missing): read it. readText throws on read errors.
  const text = (await handle.workspace.readText(handle.key)) ?? ''
  return { stamp: { unit: 'chars', size: text.length }, text }
}

async function metaSize(handle: LogHandle): Promise<number | undefined> {
  const meta = await handle.workspace.storage.getMeta(handle.key, { nativeOnly: true })
  return typeof meta.size === 'number' ? meta.size : undefined
}

async function isUnchanged(handle: LogHandle): Promise<boolean> {
  if (!handle.stamp) return false
  const { stamp } = await probe(handle)
  return stamp.unit === handle.stamp.unit && stamp.size === handle.stamp.size
}

/** Brings `handle` up to date with the value. Call under the log's lock. */
async function sync(handle: LogHandle): Promise<void> {
  const probed = await probe(handle)
  if (handle.stamp && probed.stamp.unit === handle.stamp.unit && probed.stamp.size === handle.stamp.size) return
  const text = probed.text ?? (await handle.workspace.readText(handle.key)) ?? ''
  try {
    // Lines were only added after our committed text: parse just those. Anything else (shorter
    // value, a rewrite, a chain that does not continue) replays from the start.
    const appended = handle.chars > 0 && text.length >= handle.chars && text.charCodeAt(handle.chars - 1) === 10
    if (appended) {
      try {
        await scanLines(handle, text)
      }
      catch (error) {
        if (!(error instanceof CorruptLine)) throw error
        reset(handle)
        await scanLines(handle, text)
      }
    }
    else {
      reset(handle)
      await scanLines(handle, text)
    }
  }
  catch (error) {
    reset(handle)
    if (error instanceof CorruptLine) {
      throw agentError('MEMORY_LOG_CORRUPT', `line ${error.line} of the memory log "${handle.key}" fails verification: ${error.reason}`, 'restore the log from a backup, or move the lines from the bad one on aside by hand; the log is never repaired silently (verifyLog() reports the first bad line)', { key: handle.key, line: error.line, reason: error.reason })
    }
    throw error
  }
  handle.stamp = probed.text !== undefined ? probed.stamp : { unit: 'bytes', size: utf8Length(text) }
  if (probed.stamp.unit === 'bytes' && handle.stamp.size !== probed.stamp.size) {
    // The value grew between stat and read; the next probe re-reads.
    handle.stamp = undefined
  }
}

class CorruptLine extends Error {
  constructor(readonly line: number, readonly reason: string) {
    super(`line ${line}: ${reason}`)
  }
}

/**
 * Parses and checks the lines of `text` after the handle's committed text and folds them into
 * the handle; the uncommitted rest goes to `handle.tail`.
 *
 * @throws CorruptLine at the first line that fails.
 */
async function scanLines(handle: LogHandle, text: string): Promise<{ lines: number; tail: string }> {
  let offset = handle.chars
  let line = handle.lines
  let prev = handle.lastDigest
  // Events of a multi-line write wait here until its last line arrives.
  let pending: Array<{ event: MemoryEvent; line: number }> = []
  let pendingStart = offset
  let committedEnd = offset
  let committedLines = line
  for (let end = text.indexOf('\n', offset); end !== -1; end = text.indexOf('\n', offset)) {
    line++
    const event = await checkLine(text.slice(offset, end), line, prev)
    prev = event.digest
    if (pending.length === 0) pendingStart = offset
    pending.push({ event, line })
    offset = end + 1
    if (event.more) continue
    for (const item of pending) {
      try {
        applyEvent(handle.state, item.event)
      }
      catch (error) {
        throw new CorruptLine(item.line, (error as Error).message)
      }
    }
    pending = []
    committedEnd = offset
    committedLines = line
    handle.lines = line
    handle.lastDigest = event.digest
  }
  handle.bytes += utf8Length(text.slice(handle.chars, committedEnd))
  handle.chars = committedEnd
  handle.lines = committedLines
  handle.tail = text.slice(pending.length > 0 ? pendingStart : committedEnd)
  return { lines: committedLines, tail: handle.tail }
}

async function checkLine(text: string, line: number, prev: string | null): Promise<MemoryEvent> {
  if (text.trim() === '') throw new CorruptLine(line, 'the line is empty')
  let value: unknown
  try {
    value = JSON.parse(text)
  }
  catch {
    throw new CorruptLine(line, 'the line is not valid JSON')
  }
  // Lines are written in canonical form: any other spelling (spaces, key order) was edited by hand.
  if (canonicalJson(value) !== text) throw new CorruptLine(line, 'the line is not in canonical JSON form (it was reformatted after it was written)')
  const event = parseEvent(value)
  if (typeof event === 'string') throw new CorruptLine(line, event)
  if (event.seq !== line) throw new CorruptLine(line, `seq is ${event.seq}, expected ${line}`)
  if (event.prev !== prev) throw new CorruptLine(line, 'prev does not match the digest of the previous line (the chain is broken)')
  const { digest, ...rest } = event
  if ((await sha256Hex(canonicalJson(rest))) !== digest) throw new CorruptLine(line, 'digest does not match the line (it was changed after it was written)')
  return event
}

/** Moves the uncommitted tail to `<key>.torn-<epoch ms>` and truncates the log to its committed text. */
async function quarantineTail(handle: LogHandle): Promise<void> {
  const { workspace, key } = handle
  await workspace.append(`${key}.torn-${Date.now()}`, handle.tail)
  await workspace.truncate(key, handle.bytes)
  handle.tail = ''
  handle.stamp = undefined
  // Re-read after the truncate so the state and the value agree before we append.
  await sync(handle)
  if (handle.tail) {
    throw agentError('MEMORY_LOG_CORRUPT', `the torn end of the memory log "${key}" could not be moved aside`, 'check that the workspace driver supports truncate, then retry', { key })
  }
}

function reset(handle: LogHandle): void {
  Object.assign(handle, emptyHandle())
}

function countNewlines(text: string): number {
  let count = 0
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++
  return count
}

/** UTF-8 byte length of `text` without encoding it (lone surrogates count 3, as Node writes U+FFFD). */
export function utf8Length(text: string): number {
  let bytes = 0
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code < 0x80) bytes += 1
    else if (code < 0x800) bytes += 2
    else if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4
        index++
      }
      else bytes += 3
    }
    else bytes += 3
  }
  return bytes
}
