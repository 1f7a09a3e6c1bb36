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
 * Since issue 3 the engine tails by byte offset (fs: size and offset; Redis: `STRLEN` and
 * `GETRANGE`; memory: the cached string), writes format version 2 lines (digest over the header
 * and a `payloadDigest`, so an erased record's payload can be removed while the chain verifies),
 * and appends with `workspace.append(key, text, { ifSize })`: a conditional append that is
 * atomic across processes (fs lock lease) and Redis clients (Lua), retried after re-reading the
 * tail when another writer got there first. See docs/log-format.md.
 *
 * Checkpoints (docs/log-format.md, "Checkpoints"): the folded state is persisted next to the log
 * (`<key>.checkpoint`, see checkpoint.ts) every `checkpointEvery` lines and at compaction; a cold
 * open loads a checkpoint whose stamp matches the log and replays only the lines after it. A
 * matching checkpoint is trusted for the lines it covers; `verifyLog` checks every line.
 */
import { agentError } from '../errors.ts'
import type { Workspace } from '../workspace/types.ts'
import { canonicalJson, hasSortedKeys, sha256Hex, sha256HexSync } from './digest.ts'
import {
  applyEvent,
  emptyRecordState,
  eventConflict,
  foldEvent,
  HEADER_FIELDS,
  markErased,
  parseEvent,
  payloadFields,
  PAYLOAD_FIELDS,
  setDefaultIndexFactory,
  type MemoryEvent,
  type MemoryEventDraft,
  type MemoryRecordLookup,
  type MemoryRecordState,
} from '../memory/records.ts'
import { checkpointKey, readCheckpointStamp, readCheckpointState, serializeCheckpoint } from './checkpoint.ts'
import { createSearchIndex, restoreSearchIndex, searchIndexFormat } from '../memory/search-index.ts'
import type { MemoryRecord, MemoryScope } from '../memory/types.ts'

/** Options of {@link openMemoryLog}. */
export interface MemoryLogOptions {
  /** `fsync` every write (fs driver): durable against power loss, slower (see `npm run bench`). Default `false`. */
  fsync?: boolean
  /**
   * `true`: reads skip a corrupt complete line (reported once through `onWarning`) instead of
   * throwing `MEMORY_LOG_CORRUPT`; writes to such a log still throw. Default `false`.
   */
  readPastCorruption?: boolean
  /** Receives warnings (a torn tail moved aside, a corrupt line skipped, a checkpoint ignored). Default: `console.warn`. */
  onWarning?: (warning: MemoryLogWarning) => void
  /**
   * Persist a checkpoint of the folded state (key `<log key>.checkpoint`) after a write once the
   * log has grown since the last one by this many lines and by a quarter of the lines that one
   * covers ({@link CHECKPOINT_GROWTH}: a checkpoint costs time in proportion to the state, so
   * its cost per appended line stays constant as the log grows), and at every compaction; a cold
   * open then replays only the lines after it (see docs/log-format.md, "Checkpoints"). `false`:
   * never write nor read checkpoints. Default {@link DEFAULT_CHECKPOINT_EVERY} (10,000 lines).
   */
  checkpointEvery?: number | false
}

/** Default {@link MemoryLogOptions.checkpointEvery}: lines appended between two checkpoints, at least. */
export const DEFAULT_CHECKPOINT_EVERY = 10_000

/**
 * A new checkpoint also waits until the log has grown by this fraction of the lines the last one
 * covers (at 100,000 lines: every 25,000 lines, not 10,000). Writing one costs about 6 µs per
 * record held (`checkpointWriteMs` in `npm run bench`), so a fixed interval would make its cost
 * per appended line grow with the log; the tail a cold open replays stays under a fifth of it.
 */
export const CHECKPOINT_GROWTH = 0.25

/** Lines the log must grow by past the last checkpoint before the next one (see {@link CHECKPOINT_GROWTH}). */
function checkpointDue(handle: LogHandle, every: number): boolean {
  return handle.lines - handle.checkpointLines >= Math.max(every, Math.floor(handle.checkpointLines * CHECKPOINT_GROWTH))
}

/** A warning of the log engine. */
export interface MemoryLogWarning {
  code: 'MEMORY_LOG_TORN_TAIL' | 'MEMORY_LOG_LINE_SKIPPED' | 'MEMORY_LOG_CHECKPOINT_IGNORED' | 'MEMORY_LOG_CHECKPOINT_FAILED'
  key: string
  message: string
  /**
   * `MEMORY_LOG_TORN_TAIL`: the quarantine key; `MEMORY_LOG_LINE_SKIPPED`: the line number and
   * reason; `MEMORY_LOG_CHECKPOINT_IGNORED` (a checkpoint that does not match the log, so the log
   * is replayed in full) and `MEMORY_LOG_CHECKPOINT_FAILED` (a checkpoint could not be written;
   * nothing else is affected): the checkpoint key and reason.
   */
  details: Record<string, unknown>
}

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
   * lock with the current state; it may throw to write nothing, and it runs again when another
   * process or client appended first. Returns each event's record after the event.
   *
   * @throws AgentError `MEMORY_WORKSPACE_READ_ONLY` when the workspace is read-only;
   * `MEMORY_LOG_CORRUPT`; `MEMORY_EVENT_CONFLICT` when an event cannot apply (nothing written);
   * `MEMORY_LOG_BUSY` when other writers kept winning for 1,000 attempts; whatever `build`
   * throws; write errors of the workspace.
   */
  write(build: (state: MemoryRecordState) => MemoryEventDraft[] | Promise<MemoryEventDraft[]>): Promise<MemoryRecord[]>
  /** Rewrites the log atomically (see {@link compactLog}). */
  compact(): Promise<MemoryLogCompaction>
  /**
   * Writes a checkpoint of the current state now (key `<log key>.checkpoint`, replaced
   * atomically, only while the log is still at the offset it covers). Returns `false` when
   * nothing was written (checkpoints off, read-only workspace, empty log, a torn tail or skipped
   * lines, or another writer appended meanwhile).
   *
   * @throws AgentError `MEMORY_LOG_CORRUPT`; write errors of the workspace.
   */
  checkpoint(): Promise<boolean>
  /**
   * Tells the log that a partition's search index of `records` active records was just built. A
   * large one (at least `checkpointEvery` records) is worth persisting: a checkpoint is scheduled,
   * so that the next cold open restores the index instead of building it again.
   */
  indexBuilt(records: number): void
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

/** Result of {@link compactLog}. */
export interface MemoryLogCompaction {
  /** Lines in the log after compaction (every event is kept). */
  lines: number
  /** Size in UTF-8 bytes before and after. */
  bytesBefore: number
  bytesAfter: number
  /** Lines whose payload was removed because their record was erased. */
  erasedLines: number
  /** True when version 1 lines were rewritten as version 2 (new digests from line 1 on). */
  rechained: boolean
}

interface LogHandle {
  workspace: Workspace
  key: string
  lockKey: string
  options: MemoryLogOptions
  state: MemoryRecordState
  /** Committed lines folded into `state`. */
  lines: number
  lastDigest: string | null
  /** Byte length of the committed text. */
  offset: number
  /** Size and identity of the value when last read; `undefined` forces a read. */
  seen: { size: number; id: string | undefined } | undefined
  /** Uncommitted bytes after `offset` when last read. */
  tail: Uint8Array
  /** The log holds version 1 lines (compaction must re-chain to erase from them). */
  hasV1: boolean
  /** Corrupt lines skipped (only with `readPastCorruption`). */
  skipped: number
  /** Byte offset where the last committed line starts (stamped into checkpoints). */
  lastLineStart: number
  /** Lines covered by the last checkpoint loaded or written by this handle. */
  checkpointLines: number
  /** A threshold checkpoint is scheduled or being written. */
  checkpointScheduled?: boolean
  /** Large search indexes built so far ({@link MemoryLog.indexBuilt}), and how many of them the last checkpoint written came after. */
  indexesBuilt: number
  checkpointIndexes: number
  /** Frozen scope objects by their canonical JSON, shared by the records that replay and writes fold. */
  scopes: Map<string, unknown>
}

setDefaultIndexFactory(createSearchIndex)

const handles = new WeakMap<Workspace, Map<string, LogHandle>>()
const EMPTY = new Uint8Array(0)
const decoder = new TextDecoder('utf-8')
const MAX_WRITE_ATTEMPTS = 1000

/**
 * Opens (or returns the already open) log at `key` of `workspace`. Cheap: nothing is read until
 * the first operation. One state is kept per workspace object and key, so a new workspace object
 * over the same storage replays the log from storage. Options apply when the log is first opened.
 */
export function openMemoryLog(workspace: Workspace, key: string, options: MemoryLogOptions = {}): MemoryLog {
  const log = openHandle(workspace, key, options)
  return {
    workspace,
    key: log.key,
    view: read => view(log, read),
    write: build => write(log, build),
    compact: () => compact(log),
    checkpoint: () => log.workspace.withLock(log.lockKey, () => writeCheckpoint(log)),
    indexBuilt: (records) => {
      const every = log.options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY
      if (every === false || records < every) return
      log.indexesBuilt++
      scheduleCheckpoint(log, true)
    },
  }
}

function openHandle(workspace: Workspace, key: string, options: MemoryLogOptions): LogHandle {
  // `memory/x.jsonl` and `memory:x.jsonl` name one value: share one state.
  key = key.replace(/[/\\]/g, ':')
  let byKey = handles.get(workspace)
  if (!byKey) handles.set(workspace, byKey = new Map())
  let handle = byKey.get(key)
  if (!handle) {
    handle = { ...emptyHandle(), workspace, key, lockKey: `${key}.lock`, options }
    byKey.set(key, handle)
  }
  return handle
}

/**
 * Reads the whole log at `key` and checks every line (JSON, shape, `seq`, `prev`, `digest`,
 * `payloadDigest`, and each event's effect on the records) without touching the in-memory state
 * or the value. Verifies format version 1 and 2 lines alike.
 *
 * @throws only read errors of the workspace (a missing value is an empty, valid log).
 */
export async function verifyLog(workspace: Workspace, key: string): Promise<MemoryLogVerification> {
  const bytes = (await workspace.readBytes(key, 0)) ?? EMPTY
  const scratch: LogHandle = { ...emptyHandle(), workspace, key, lockKey: '', options: {} }
  const lines = countNewlines(bytes)
  try {
    await scanBytes(scratch, bytes)
    return { ok: true, lines, ...(scratch.tail.length > 0 ? { torn: { line: scratch.lines + 1, bytes: scratch.tail.length } } : {}) }
  }
  catch (error) {
    if (error instanceof CorruptLine) return { ok: false, lines, firstBad: { line: error.line, reason: error.reason } }
    throw error
  }
}

/**
 * Rewrites the log at `key` atomically (a new value swapped in with `workspace.replace`, guarded
 * by the size it was read at): every event is kept, the payload fields of lines of erased records
 * are removed (each line keeps its header and `payloadDigest`, so the chain verifies), a torn
 * tail is dropped (moved to a quarantine key first), and version 1 lines are rewritten as
 * version 2 when any record was erased (a version 1 digest covers the content, so its chain is
 * recomputed from line 1). Source: issue 3, "Compaction and erasure".
 *
 * @throws AgentError `MEMORY_LOG_CORRUPT` when the log does not verify (nothing is rewritten);
 * `MEMORY_WORKSPACE_READ_ONLY`; write errors of the workspace.
 */
export async function compactLog(workspace: Workspace, key: string): Promise<MemoryLogCompaction> {
  return compact(openHandle(workspace, key, {}))
}

function emptyHandle() {
  return { state: emptyRecordState(createSearchIndex), lines: 0, lastDigest: null, offset: 0, seen: undefined, tail: EMPTY, hasV1: false, skipped: 0, lastLineStart: 0, checkpointLines: 0, scopes: new Map<string, unknown>(), indexesBuilt: 0, checkpointIndexes: 0 }
}

function requireWritable(handle: LogHandle) {
  if (!handle.workspace.writable) {
    throw agentError('MEMORY_WORKSPACE_READ_ONLY', `the workspace is read-only, so the memory log "${handle.key}" cannot be written`, 'give the agent a writable workspace, or set the store\'s `write.mode` to "off"', { key: handle.key })
  }
}

async function view<T>(handle: LogHandle, read: (state: MemoryRecordState) => T): Promise<T> {
  // Fast path: nothing changed since we last looked, so the state is current. `read` runs in
  // the same synchronous turn, so no in-process write can interleave.
  if (handle.seen) {
    const stat = await handle.workspace.stat(handle.key)
    if ((stat?.size ?? 0) === handle.seen.size && stat?.id === handle.seen.id) return read(handle.state)
  }
  return handle.workspace.withLock(handle.lockKey, async () => {
    await sync(handle)
    return read(handle.state)
  })
}

async function write(handle: LogHandle, build: (state: MemoryRecordState) => MemoryEventDraft[] | Promise<MemoryEventDraft[]>): Promise<MemoryRecord[]> {
  requireWritable(handle)
  const { workspace, key } = handle
  return workspace.withLock(handle.lockKey, async () => {
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      await sync(handle, true)
      if (handle.skipped > 0) {
        throw agentError('MEMORY_LOG_CORRUPT', `the memory log "${key}" has corrupt lines that reads skipped, so it cannot be written`, 'run `agent memory verify`, restore the log from a backup or move the bad lines aside; then retry', { key })
      }
      if (handle.tail.length > 0) {
        await quarantineTail(handle)
        continue
      }
      const built = build(handle.state)
      const drafts = built instanceof Promise ? await built : built
      if (drafts.length === 0) return []
      checkDrafts(handle, drafts)
      let prev = handle.lastDigest
      const lines: string[] = []
      const events: MemoryEventDraft[] = []
      const hash = syncHash ?? await lineHasher()
      for (const [index, draft] of drafts.entries()) {
        const serialized = serializeEvent(draft, handle.lines + 1 + index, prev, index < drafts.length - 1, hash, handle.scopes)
        const { line, digest, folded } = serialized instanceof Promise ? await serialized : serialized
        lines.push(line)
        events.push(folded)
        prev = digest
      }
      const text = `${lines.join('\n')}\n`
      let written: boolean
      try {
        written = await workspace.append(key, text, { ifSize: handle.offset, ...(handle.options.fsync ? { fsync: true } : {}) })
      }
      catch (error) {
        // The append may have written part of the text: re-read everything next time.
        reset(handle)
        throw error
      }
      // Another process or client appended first: read its lines and build again.
      if (!written) continue
      // checkDrafts checked them against this state, which nothing else changes while the lock is held.
      const records = events.map(event => applyEvent(handle.state, event, true))
      const bytes = utf8Length(text)
      handle.lines += events.length
      handle.lastDigest = prev
      handle.lastLineStart = handle.offset + bytes - utf8Length(lines[lines.length - 1]!) - 1
      handle.offset += bytes
      // The write created the value: learn its identity (fs inode) so the next look is a fast stat.
      const id = handle.offset === bytes ? (await workspace.stat(key))?.id : handle.seen?.id
      handle.seen = { size: handle.offset, id }
      scheduleCheckpoint(handle)
      return records
    }
    throw agentError('MEMORY_LOG_BUSY', `other writers kept appending to the memory log "${key}" while this write was retried ${MAX_WRITE_ATTEMPTS} times`, 'retry the write later', { key })
  })
}

/**
 * The members of a version 2 line of one event type in canonical (sorted) order, each with its
 * part: the header (covered by `digest`), the payload (covered by `payloadDigest`), or one of
 * the two digests (`payloadDigest` is itself a header member).
 */
interface LineLayout {
  fields: readonly string[]
  /** `"field":` of each member. */
  prefixes: readonly string[]
  parts: ReadonlyArray<'header' | 'payload' | 'payloadDigest' | 'digest'>
}

const LINE_LAYOUTS = Object.fromEntries(Object.entries(PAYLOAD_FIELDS).map(([type, payloadFields]) => {
  const fields = [...HEADER_FIELDS, ...payloadFields, 'digest'].sort()
  const parts = fields.map(field => (field === 'digest' || field === 'payloadDigest' ? field : HEADER_FIELDS.includes(field) ? 'header' : 'payload'))
  return [type, { fields, prefixes: fields.map(field => `${JSON.stringify(field)}:`), parts }]
})) as Record<string, LineLayout>
const SCOPE_INTERNER_MAX = 10_000
const SCOPE_MEMBER_PREFIX = '"scope":'.length

/**
 * A draft as a version 2 line: header + `payloadDigest` under `digest`, payload fields beside it.
 * Each member is written once in canonical JSON; the payload text, the header text and the line
 * are joined from those pieces in canonical member order (so each is exactly `canonicalJson` of
 * its object). The event is the line parsed back (what a replay folds), its scope shared
 * (frozen) with earlier events of the same scope through `scopes`.
 */
function serializeEvent(draft: MemoryEventDraft, seq: number, prev: string | null, more: boolean, hash: LineHash, scopes?: Map<string, unknown>): SerializedEvent | Promise<SerializedEvent> {
  const source = draft as MemoryEventDraft & Record<string, unknown>
  const { fields, prefixes, parts } = LINE_LAYOUTS[draft.type]!
  const pieces: Array<string | undefined> = new Array(fields.length)
  let payload = ''
  for (let index = 0; index < fields.length; index++) {
    const part = parts[index]
    if (part !== 'header' && part !== 'payload') continue
    const field = fields[index]!
    const json = memberJson(field === 'v' ? 2 : field === 'seq' ? seq : field === 'prev' ? prev : field === 'more' ? (more || undefined) : source[field])
    pieces[index] = json
    if (json !== undefined && part === 'payload') payload += `${payload === '' ? '' : ','}${prefixes[index]}${json}`
  }
  return whenDone(hash(`{${payload}}`), (payloadDigest) => {
    let header = ''
    for (let index = 0; index < fields.length; index++) {
      if (parts[index] === 'payloadDigest') pieces[index] = `"${payloadDigest}"`
      else if (parts[index] !== 'header' || pieces[index] === undefined) continue
      header += `${header === '' ? '' : ','}${prefixes[index]}${pieces[index]}`
    }
    return whenDone(hash(`{${header}}`), (digest) => {
      let line = ''
      // The draft as a replay folds it from the line (so that live state equals a replay): each
      // member's value as JSON gives it back, the draft's own when JSON keeps it (copied), else
      // its piece parsed; a member the line leaves out is undefined.
      const folded: Record<string, unknown> = { ...source }
      for (let index = 0; index < fields.length; index++) {
        if (parts[index] === 'digest') pieces[index] = `"${digest}"`
        const piece = pieces[index]
        const field = fields[index]!
        if (piece !== undefined) line += `${line === '' ? '' : ','}${prefixes[index]}${piece}`
        if (!(field in source)) continue
        if (piece === undefined) {
          folded[field] = undefined
          continue
        }
        const value = source[field]
        if (field === 'scope' && scopes) {
          folded.scope = internScope(scopes, piece, value)
          continue
        }
        if (typeof value === 'string' || typeof value === 'boolean') continue
        folded[field] = asParsed(value, piece)
      }
      return { line: `{${line}}`, digest, folded: folded as unknown as MemoryEventDraft }
    })
  })
}

type LineHash = (text: string) => string | Promise<string>
interface SerializedEvent {
  line: string
  digest: string
  /** The draft with each value as the line gives it back (what a replay folds). */
  folded: MemoryEventDraft
}

/** `next(value)` at once, or once `value` settles when it is a promise (a synchronous hash needs no turn of the event loop). */
function whenDone<T, R>(value: T | Promise<T>, next: (value: T) => R | Promise<R>): R | Promise<R> {
  return value instanceof Promise ? value.then(next) : next(value)
}

/** The frozen scope object shared by the events of one scope (keyed by its canonical JSON). */
function internScope(scopes: Map<string, unknown>, json: string, value: unknown): MemoryScope {
  const known = scopes.get(json) as MemoryScope | undefined
  if (known) return known
  const scope = Object.freeze(asParsed(value, json)) as MemoryScope
  if (scopes.size >= SCOPE_INTERNER_MAX) scopes.clear()
  // A key of our own: `json` may be a slice of a whole read's text, which a kept key would keep alive.
  scopes.set(canonicalJson(scope), scope)
  return scope
}

/** `JSON.parse(json)`, where `json` is the canonical JSON of `value`: a copy of `value` when JSON keeps it as is, else parsed. */
function asParsed(value: unknown, json: string): unknown {
  const copy = plainJsonCopy(value, 0)
  return copy === NOT_PLAIN ? JSON.parse(json) : copy
}

const NOT_PLAIN = Symbol('not plain JSON')

/**
 * A deep copy of `value` when `JSON.parse` of its canonical JSON would give an equal value with
 * the same key order: strings, booleans, `null`, finite numbers other than -0, dense arrays and
 * plain objects of those whose keys are already in sorted order. Else {@link NOT_PLAIN}.
 */
function plainJsonCopy(value: unknown, depth: number): unknown {
  if (typeof value === 'string' || typeof value === 'boolean' || value === null) return value
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0) ? value : NOT_PLAIN
  if (typeof value !== 'object' || depth > 32) return NOT_PLAIN
  if (Array.isArray(value)) {
    const copy: unknown[] = []
    for (let index = 0; index < value.length; index++) {
      if (!(index in value)) return NOT_PLAIN
      const item = plainJsonCopy(value[index], depth + 1)
      if (item === NOT_PLAIN) return NOT_PLAIN
      copy.push(item)
    }
    return copy
  }
  const prototype = Object.getPrototypeOf(value)
  if (prototype !== Object.prototype && prototype !== null) return NOT_PLAIN
  const copy: Record<string, unknown> = {}
  let last: string | undefined
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key) || key === '__proto__') return NOT_PLAIN
    if (last !== undefined && !(last < key)) return NOT_PLAIN
    last = key
    const item = plainJsonCopy((value as Record<string, unknown>)[key], depth + 1)
    if (item === NOT_PLAIN) return NOT_PLAIN
    copy[key] = item
  }
  return copy
}

/** SHA-256 to hex for writing lines: synchronous `node:crypto` where it exists, else Web Crypto. */
async function lineHasher(): Promise<LineHash> {
  syncHash = await sha256HexSync()
  return syncHash ?? sha256Hex
}

/** The synchronous hasher once {@link lineHasher} found one. */
let syncHash: ((text: string) => string) | undefined

/** Canonical JSON of one member's value, `undefined` when the member is left out (as JSON.stringify drops it). */
function memberJson(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'number':
      return JSON.stringify(value)
    case 'boolean':
      return value ? 'true' : 'false'
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined
    default:
      return canonicalJson(value)
  }
}

function refusedWrite(handle: LogHandle, draft: MemoryEventDraft, conflict: string) {
  return agentError('MEMORY_EVENT_CONFLICT', `the write to the memory log "${handle.key}" was refused: ${conflict}`, 'read the record again and retry with its current state', { key: handle.key, recordId: draft.recordId })
}

/** Checks that the drafts apply one after the other, against an overlay of the state. */
function checkDrafts(handle: LogHandle, drafts: MemoryEventDraft[]): void {
  if (drafts.length === 1) {
    const conflict = eventConflict(id => handle.state.records.get(id), drafts[0]!, handle.state.erased)
    if (conflict) throw refusedWrite(handle, drafts[0]!, conflict)
    return
  }
  const overlay = new Map<string, MemoryRecord>()
  const lookup: MemoryRecordLookup = id => overlay.get(id) ?? handle.state.records.get(id)
  for (const draft of drafts) {
    const conflict = eventConflict(lookup, draft, handle.state.erased)
    if (conflict) throw refusedWrite(handle, draft, conflict)
    overlay.set(draft.recordId, foldEvent(lookup(draft.recordId), draft))
  }
}

/**
 * Brings `handle` up to date: reads only the bytes after the committed offset (a full replay
 * when the value shrank, was replaced, or the new bytes do not continue the chain). Call under
 * the log's lock. `forWrite`: the caller holds the write path (a torn tail is kept for it).
 */
async function sync(handle: LogHandle, forWrite = false): Promise<void> {
  const { workspace, key } = handle
  const stat = await workspace.stat(key)
  const size = stat?.size ?? 0
  if (handle.seen && handle.seen.size === size && handle.seen.id === stat?.id) return
  const first = handle.seen === undefined && handle.lines === 0
  if (size < handle.offset || (handle.seen && handle.seen.id !== stat?.id)) reset(handle)
  try {
    // A replay from the start may begin at a checkpoint that matches the log instead.
    const fromCheckpoint = handle.offset === 0 && size > 0 ? await openFromCheckpoint(handle, size) : undefined
    const start = handle.offset
    const bytes = fromCheckpoint ?? (await workspace.readBytes(key, start)) ?? EMPTY
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
  }
  catch (error) {
    reset(handle)
    if (error instanceof CorruptLine) {
      throw agentError('MEMORY_LOG_CORRUPT', `line ${error.line} of the memory log "${key}" fails verification: ${error.reason}`, 'run `agent memory verify` to see the first bad line, then restore the log from a backup or move the lines from the bad one on aside by hand; the log is never repaired silently (reads can opt into continuing past it with `readPastCorruption`)', { key, line: error.line, reason: error.reason })
    }
    throw error
  }
  // A torn tail found when the log is first opened is moved aside at once (issue 3, "Faults").
  if (first && !forWrite && handle.tail.length > 0 && workspace.writable) await quarantineTail(handle)
  // Many lines read past the last checkpoint (a log without one, or another writer's appends): write one, so the next cold open does not read them again.
  scheduleCheckpoint(handle)
}

class CorruptLine extends Error {
  constructor(readonly line: number, readonly reason: string) {
    super(`line ${line}: ${reason}`)
  }
}

/**
 * Parses and checks the complete lines of `bytes` (the value after the handle's committed
 * offset) and folds the committed ones into the handle; the uncommitted rest goes to `tail`.
 * Records whose `erase` event is among the new lines are never folded (their content does not
 * enter memory).
 *
 * @throws CorruptLine at the first line that fails (unless the handle reads past corruption).
 */
async function scanBytes(handle: LogHandle, bytes: Uint8Array): Promise<void> {
  const events: Array<{ event: MemoryEvent; line: number }> = []
  // One decode for the whole read: a `\n` byte is never part of a multi-byte sequence, so the
  // n-th newline of the text is the n-th newline byte (byte offsets still come from `bytes`).
  const whole = decoder.decode(bytes)
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
    let event: MemoryEvent
    try {
      event = hash ? checkLineSync(text, line, prev, hash, interner, handle.scopes) : await checkLine(text, line, prev)
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
  const committed = events.filter(item => item.line <= committedCount)
  const doomed = new Set(committed.filter(item => item.event.type === 'erase').map(item => item.event.recordId))
  for (const { event, line: number } of committed) {
    if (event.v === 1) handle.hasV1 = true
    if (event.erased && !doomed.has(event.recordId) && !handle.state.erased.has(event.recordId)) {
      throw new CorruptLine(number, `the payload of the line was removed, but record "${event.recordId}" has no erase event`)
    }
  }
  // Records erased later in this read are never folded; events that name them stay valid.
  const unseen = [...doomed].filter(id => !handle.state.records.has(id))
  for (const id of unseen) markErased(handle.state, id)
  for (const { event, line: number } of committed) {
    if (doomed.has(event.recordId) && event.type !== 'erase') continue
    if (event.erased) continue
    try {
      if (event.type === 'erase') {
        const existing = handle.state.records.get(event.recordId)
        // Known from an earlier read: its events in between were skipped, so align the version.
        if (existing) applyEvent(handle.state, { ...event, version: existing.version + 1 })
        else markErased(handle.state, event.recordId)
      }
      else applyEvent(handle.state, event)
    }
    catch (error) {
      if (!handle.options.readPastCorruption) throw new CorruptLine(number, (error as Error).message)
      skipped++
    }
  }
  handle.lines = committedCount
  handle.lastDigest = committedDigest
  if (committedLineStart !== -1) handle.lastLineStart = handle.offset + committedLineStart
  handle.offset += committedAt
  // A copy: a view would keep the whole read buffer alive as long as the handle.
  handle.tail = committedAt === bytes.length ? EMPTY : bytes.slice(committedAt)
  handle.skipped += skipped
}

function digestOf(text: string): string | null {
  const match = /"digest":"([0-9a-f]{64})"/.exec(text)
  return match ? match[1]! : null
}

/** The checks every line gets first, on both paths: not empty, JSON, a known event, `seq` and `prev` in order. */
function parseLine(text: string, line: number, prev: string | null): { value: unknown; event: MemoryEvent } {
  if (text.length === 0 || (text.charCodeAt(0) <= 32 && text.trim() === '')) throw new CorruptLine(line, 'the line is empty')
  let value: unknown
  try {
    value = JSON.parse(text)
  }
  catch {
    throw new CorruptLine(line, 'the line is not valid JSON')
  }
  const event = parseEvent(value)
  if (typeof event === 'string') throw new CorruptLine(line, event)
  if (event.seq !== line) throw new CorruptLine(line, `seq is ${event.seq}, expected ${line}`)
  if (event.prev !== prev) throw new CorruptLine(line, 'prev does not match the digest of the previous line (the chain is broken)')
  return { value, event }
}

async function checkLine(text: string, line: number, prev: string | null): Promise<MemoryEvent> {
  const { value, event } = parseLine(text, line, prev)
  const record = event as unknown as Record<string, unknown>
  // Lines are written in canonical form: any other spelling (spaces, key order) was edited by hand.
  if (canonicalJson(value) !== text) throw new CorruptLine(line, 'the line is not in canonical JSON form (it was reformatted after it was written)')
  if (event.v === 1) {
    const { digest, ...rest } = event
    if ((await sha256Hex(canonicalJson(rest))) !== digest) throw new CorruptLine(line, 'digest does not match the line (it was changed after it was written)')
    return event
  }
  const header: Record<string, unknown> = {}
  for (const field of HEADER_FIELDS) if (record[field] !== undefined) header[field] = record[field]
  if ((await sha256Hex(canonicalJson(header))) !== event.digest) throw new CorruptLine(line, 'digest does not match the line (it was changed after it was written)')
  if (!event.erased) {
    const payload: Record<string, unknown> = {}
    for (const field of PAYLOAD_FIELDS[event.type]) if (record[field] !== undefined) payload[field] = record[field]
    if ((await sha256Hex(canonicalJson(payload))) !== event.payloadDigest) throw new CorruptLine(line, 'the payload digest does not match the payload (it was changed after it was written)')
  }
  return event
}

/**
 * Checks that `text` (a line JSON.parse accepted as an object) is canonical JSON in one pass,
 * without serializing anything: no whitespace outside strings, keys strictly increasing in
 * UTF-16 order in every object, only the escapes JSON.stringify writes (\" \\ \b \f \n \r \t),
 * numbers as JavaScript writes them. Returns the top-level keys and where each member starts
 * (plus one past the closing brace), `false` when the text is not canonical, or `undefined` when it holds
 * a `\u` escape or an escaped key (the caller then uses the general check).
 */
function canonicalMembers(text: string): { keys: string[]; starts: number[] } | false | undefined {
  const length = text.length
  if (text.charCodeAt(0) !== 123 || text.charCodeAt(length - 1) !== 125) return false
  const keys: string[] = []
  const starts: number[] = []
  // Per depth: 1 object, 2 array; and the last key seen in each open object.
  const kinds: number[] = [0]
  const lastKeys: Array<string | undefined> = [undefined]
  let depth = 0
  let expectKey = false
  let at = 0
  while (at < length) {
    const code = text.charCodeAt(at)
    if (code === 34) {
      let end = at + 1
      let escaped = false
      for (;;) {
        const inner = text.charCodeAt(end)
        if (inner === 34) break
        if (inner === 92) {
          const next = text.charCodeAt(end + 1)
          if (next === 117) return undefined
          if (next !== 34 && next !== 92 && next !== 98 && next !== 102 && next !== 110 && next !== 114 && next !== 116) return false
          escaped = true
          end += 2
          continue
        }
        if (Number.isNaN(inner)) return false
        end++
      }
      if (expectKey) {
        if (escaped) return undefined
        const key = text.slice(at + 1, end)
        const last = lastKeys[depth]
        if (last !== undefined && !(last < key)) return false
        lastKeys[depth] = key
        if (depth === 1) {
          keys.push(key)
          starts.push(at)
        }
        if (text.charCodeAt(end + 1) !== 58) return false
        expectKey = false
        at = end + 2
        continue
      }
      at = end + 1
      continue
    }
    if (code === 123) {
      depth++
      kinds[depth] = 1
      lastKeys[depth] = undefined
      expectKey = true
      at++
      continue
    }
    if (code === 91) {
      depth++
      kinds[depth] = 2
      at++
      continue
    }
    if (code === 125 || code === 93) {
      expectKey = false
      // One past the closing brace, so that every member ends one character before the next start.
      if (depth === 1 && code === 125) starts.push(at + 1)
      depth--
      at++
      continue
    }
    if (code === 44) {
      if (kinds[depth] === 1) expectKey = true
      at++
      continue
    }
    if (code === 116 || code === 110) {
      at += 4
      continue
    }
    if (code === 102) {
      at += 5
      continue
    }
    if (code === 45 || (code >= 48 && code <= 57)) {
      let end = at + 1
      for (let next = text.charCodeAt(end); (next >= 48 && next <= 57) || next === 46 || next === 101 || next === 69 || next === 43 || next === 45; next = text.charCodeAt(++end));
      const token = text.slice(at, end)
      if (String(Number(token)) !== token) return false
      at = end
      continue
    }
    return false
  }
  return depth === 0 && starts.length === keys.length + 1 ? { keys, starts } : false
}

// Reasons of a line that fails (one string each: no closure per checked line).
const NOT_CANONICAL = 'the line is not in canonical JSON form (it was reformatted after it was written)'
const DIGEST_CHANGED = 'digest does not match the line (it was changed after it was written)'
const PAYLOAD_CHANGED = 'the payload digest does not match the payload (it was changed after it was written)'

/** Parsed values of repeated field texts (scopes, audits, empty lists and objects), shared by the records of one read. */
type Interner = Map<string, unknown>
const INTERNED_FIELDS = new Set(['scope', 'audit', 'tags', 'metadata', 'provenance', 'supersedes'])
const INTERNER_MAX = 10_000
const HEADER_SET: ReadonlySet<string> = new Set(HEADER_FIELDS)
const PAYLOAD_SETS = Object.fromEntries(Object.entries(PAYLOAD_FIELDS).map(([type, fields]) => [type, new Set(fields)])) as Record<string, ReadonlySet<string>>

/**
 * {@link checkLine} with a synchronous hash, without re-serializing the line from scratch: each
 * top-level value is written back with `JSON.stringify` (canonical when its objects list their
 * keys in sorted order, which {@link hasSortedKeys} checks), the pieces must rebuild the line
 * exactly, and the header and payload texts that the digests cover are joined from the same
 * pieces. Lines whose objects are not in enumeration order (integer-like keys) take the general
 * path. Same checks, same reasons as {@link checkLine}.
 */
function checkLineSync(text: string, line: number, prev: string | null, hash: (text: string) => string, interner: Interner, scopes: Map<string, unknown>): MemoryEvent {
  const { value, event } = parseLine(text, line, prev)
  const record = event as unknown as Record<string, unknown>
  const members = canonicalMembers(text)
  if (members === false) throw new CorruptLine(line, NOT_CANONICAL)
  if (members === undefined) {
    // General path (rare: \u escapes): full canonical form and digests over rebuilt objects.
    if (canonicalJson(value) !== text) throw new CorruptLine(line, NOT_CANONICAL)
    if (event.v === 1) {
      const { digest, ...rest } = event
      if (hash(canonicalJson(rest)) !== digest) throw new CorruptLine(line, DIGEST_CHANGED)
      return event
    }
    const header: Record<string, unknown> = {}
    for (const field of HEADER_FIELDS) if (record[field] !== undefined) header[field] = record[field]
    if (hash(canonicalJson(header)) !== event.digest) throw new CorruptLine(line, DIGEST_CHANGED)
    if (!event.erased && hash(canonicalJson(payloadFields(record as MemoryEventDraft & Record<string, unknown>))) !== event.payloadDigest) throw new CorruptLine(line, PAYLOAD_CHANGED)
    return event
  }
  const { keys, starts } = members
  const header: string[] = []
  const payload: string[] = []
  const payloadSet = PAYLOAD_SETS[event.type]
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!
    if (key === 'digest') continue
    if (event.v === 1 || HEADER_SET.has(key)) header.push(text.slice(starts[index]!, starts[index + 1]! - 1))
    else if (payloadSet?.has(key)) payload.push(text.slice(starts[index]!, starts[index + 1]! - 1))
  }
  if (hash(`{${header.join(',')}}`) !== event.digest) throw new CorruptLine(line, DIGEST_CHANGED)
  if (event.v === 2 && !event.erased && hash(`{${payload.join(',')}}`) !== event.payloadDigest) throw new CorruptLine(line, PAYLOAD_CHANGED)
  // Share the parsed values of repeated texts (a scope, an audit block, `[]`, `{}`) between records.
  if (interner.size > INTERNER_MAX) interner.clear()
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!
    if (!INTERNED_FIELDS.has(key)) continue
    const piece = text.slice(starts[index]!, starts[index + 1]! - 1)
    if (key === 'scope') {
      // The piece is the member (`"scope":{...}`); the interner is keyed by the value's JSON.
      record.scope = internScope(scopes, piece.slice(SCOPE_MEMBER_PREFIX), record.scope as MemoryScope)
      continue
    }
    if (piece.length > 512) continue
    const known = interner.get(piece)
    if (known !== undefined) record[key] = known
    else interner.set(piece, record[key])
  }
  if (record.createdAt === record.at) record.createdAt = record.at
  return event
}

function warn(handle: LogHandle, warning: MemoryLogWarning): void {
  if (handle.options.onWarning) handle.options.onWarning(warning)
  else console.warn(`${warning.code}: ${warning.message}`)
}

/** Moves the uncommitted tail to `<key>.torn-<epoch ms>` and truncates the log to its committed text, if nobody wrote since. */
async function quarantineTail(handle: LogHandle): Promise<void> {
  const { workspace, key } = handle
  const quarantine = `${key}.torn-${Date.now()}`
  const size = handle.offset + handle.tail.length
  const tail = decoder.decode(handle.tail)
  if (await workspace.truncate(key, handle.offset, { ifSize: size })) {
    await workspace.append(quarantine, tail)
    warn(handle, { code: 'MEMORY_LOG_TORN_TAIL', key, message: `the memory log "${key}" ended with ${handle.tail.length} bytes of an unfinished write (a crash mid-write); they were moved to "${quarantine}" and every complete line is kept`, details: { quarantine, bytes: handle.tail.length, line: handle.lines + 1 } })
  }
  // Either way, read again: the value is now ours truncated, or another writer changed it.
  handle.seen = undefined
  handle.tail = EMPTY
}

async function compact(handle: LogHandle): Promise<MemoryLogCompaction> {
  requireWritable(handle)
  const { workspace, key } = handle
  return workspace.withLock(handle.lockKey, async () => {
    const hash = await lineHasher()
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      await sync(handle, true)
      if (handle.tail.length > 0) {
        await quarantineTail(handle)
        continue
      }
      const bytesBefore = handle.offset
      const bytes = (await workspace.readBytes(key, 0)) ?? EMPTY
      if (bytes.length !== bytesBefore) continue
      const erased = handle.state.erased
      const source = decoder.decode(bytes).split('\n').slice(0, -1)
      const events = source.map(text => JSON.parse(text) as MemoryEvent & Record<string, unknown>)
      const rechain = handle.hasV1 && events.some(event => erased.has(event.recordId))
      const lines: string[] = []
      let erasedLines = 0
      let prev: string | null = null
      for (const [index, event] of events.entries()) {
        const strip = erased.has(event.recordId) && event.type !== 'erase' && !event.erased
        if (rechain) {
          // Version 1 digests cover the payload: rebuild the chain as version 2 from line 1.
          const { v: _v, seq: _seq, prev: _prev, digest: _digest, more, payloadDigest: _payloadDigest, erased: wasErased, ...draft } = event
          const rebuilt = await serializeEvent(draft as unknown as MemoryEventDraft, index + 1, prev, more === true, hash)
          const value = JSON.parse(rebuilt.line) as Record<string, unknown>
          if (strip || wasErased) stripPayload(value)
          if (strip) erasedLines++
          lines.push(canonicalJson(value))
          prev = rebuilt.digest
          continue
        }
        if (strip) {
          const value = { ...event } as Record<string, unknown>
          stripPayload(value)
          lines.push(canonicalJson(value))
          erasedLines++
        }
        else lines.push(source[index]!)
      }
      const text = lines.length > 0 ? `${lines.join('\n')}\n` : ''
      // The old checkpoint goes first: it may hold records erased since, and a crash between the
      // swap and the new checkpoint must not leave their content in storage.
      if (checkpointsOn(handle)) await workspace.remove(checkpointKey(key))
      if (!(await workspace.replace(key, text, { ifSize: bytesBefore, ...(handle.options.fsync ? { fsync: true } : {}) }))) continue
      reset(handle)
      await sync(handle, true)
      const result = { lines: handle.lines, bytesBefore, bytesAfter: handle.offset, erasedLines, rechained: rechain }
      try {
        await writeCheckpoint(handle)
      }
      catch (error) {
        checkpointFailed(handle, error)
      }
      return result
    }
    throw agentError('MEMORY_LOG_BUSY', `other writers kept appending to the memory log "${key}" while it was compacted`, 'retry the compaction later', { key })
  })
}

function checkpointsOn(handle: LogHandle): boolean {
  return handle.options.checkpointEvery !== false
}

/**
 * After a write or a read of new lines: when a checkpoint is due ({@link checkpointDue}) and the
 * workspace is writable, writes one once the current event-loop
 * turn is done (never inside the operation, never failing it).
 */
function scheduleCheckpoint(handle: LogHandle, always = false): void {
  const every = handle.options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY
  if (every === false || handle.checkpointScheduled || (!always && !checkpointDue(handle, every)) || !handle.workspace.writable) return
  handle.checkpointScheduled = true
  setImmediate(() => {
    handle.workspace.withLock(handle.lockKey, () => writeCheckpoint(handle, always ? undefined : every, always))
      .catch(error => checkpointFailed(handle, error))
      .finally(() => { handle.checkpointScheduled = false })
  })
}

function checkpointFailed(handle: LogHandle, error: unknown): void {
  const checkpoint = checkpointKey(handle.key)
  const reason = error instanceof Error ? error.message : String(error)
  warn(handle, { code: 'MEMORY_LOG_CHECKPOINT_FAILED', key: handle.key, message: `the checkpoint "${checkpoint}" of the memory log "${handle.key}" could not be written (${reason}); the log is unaffected and the next cold open replays more of it`, details: { checkpoint, reason } })
}

/** Writes a checkpoint of the handle's state (call under the log's lock). See {@link MemoryLog.checkpoint}. */
async function writeCheckpoint(handle: LogHandle, every?: number, forIndexes = false): Promise<boolean> {
  if (!checkpointsOn(handle) || !handle.workspace.writable) return false
  await sync(handle, true)
  // A scheduled checkpoint that another one (compaction, an explicit call) made unnecessary.
  if (every !== undefined && !checkpointDue(handle, every)) return false
  if (forIndexes && handle.checkpointIndexes === handle.indexesBuilt) return false
  const indexesBuilt = handle.indexesBuilt
  if (handle.lines === 0 || handle.lastDigest === null || handle.tail.length > 0 || handle.skipped > 0) return false
  const { offset, lines, lastDigest, lastLineStart, hasV1 } = handle
  const text = await serializeCheckpoint({ offset, lines, lastDigest, lastLineStart, hasV1 }, handle.state, (await sha256HexSync()) ?? sha256Hex)
  // Only while the log is still what the state folds: a writer of another process may have appended meanwhile.
  const written = await handle.workspace.replace(checkpointKey(handle.key), text, { ifSizeOf: { key: handle.key, size: offset } })
  if (written) {
    handle.checkpointLines = lines
    handle.checkpointIndexes = indexesBuilt
  }
  return written
}

/**
 * Loads the checkpoint of the log when its stamp matches the log (the log is at least `offset`
 * bytes long and its line `lines` ends at `offset`, verifies and has the digest `lastDigest`),
 * and returns the log's bytes after it; `undefined` (full replay) when there is none or it does
 * not match (with a `MEMORY_LOG_CHECKPOINT_IGNORED` warning). The lines it covers are trusted,
 * as a database trusts its checkpoint; `verifyLog` checks every line of the log.
 */
async function openFromCheckpoint(handle: LogHandle, size: number): Promise<Uint8Array | undefined> {
  if (!checkpointsOn(handle)) return undefined
  const { workspace, key } = handle
  const checkpoint = checkpointKey(key)
  const ignore = (reason: string): undefined => {
    warn(handle, { code: 'MEMORY_LOG_CHECKPOINT_IGNORED', key, message: `the checkpoint "${checkpoint}" of the memory log "${key}" was ignored (${reason}); the log is replayed in full`, details: { checkpoint, reason } })
    return undefined
  }
  let text: string | undefined
  try {
    text = await workspace.readText(checkpoint)
  }
  catch (error) {
    return ignore(`it could not be read: ${(error as Error).message}`)
  }
  if (text === undefined) return undefined
  const stamp = readCheckpointStamp(text)
  if (typeof stamp === 'string') return ignore(stamp)
  if (stamp.offset > size) return ignore(`it covers ${stamp.offset} bytes and the log has ${size} (the log was truncated or rewritten)`)
  const bytes = (await workspace.readBytes(key, stamp.lastLineStart)) ?? EMPTY
  const lineEnd = stamp.offset - stamp.lastLineStart - 1
  const mismatch = `line ${stamp.lines} of the log is not the line it covers (the log was edited, rewritten or compacted)`
  if (bytes.length <= lineEnd || bytes[lineEnd] !== 10 || bytes.indexOf(10) !== lineEnd) return ignore(mismatch)
  const line = decoder.decode(bytes.subarray(0, lineEnd))
  try {
    const prev = (JSON.parse(line) as { prev?: string | null }).prev ?? null
    const hash = await sha256HexSync()
    const event = hash ? checkLineSync(line, stamp.lines, prev, hash, new Map(), new Map()) : await checkLine(line, stamp.lines, prev)
    if (event.digest !== stamp.lastDigest || event.more) return ignore(mismatch)
  }
  catch {
    return ignore(mismatch)
  }
  let state: MemoryRecordState
  try {
    // Without a synchronous SHA-256 (no node:crypto) the index line is not checked, so not used: indexes are built on first search.
    const digest = await sha256HexSync()
    state = readCheckpointState(text, createSearchIndex, digest ? { restore: restoreSearchIndex, format: searchIndexFormat(), digest } : undefined)
  }
  catch (error) {
    return ignore(`its state is unreadable: ${(error as Error).message}`)
  }
  Object.assign(handle, { state, lines: stamp.lines, lastDigest: stamp.lastDigest, offset: stamp.offset, lastLineStart: stamp.lastLineStart, hasV1: stamp.hasV1, checkpointLines: stamp.lines })
  // The checkpoint's shared (frozen) scopes become the ones later lines and writes share.
  const seen = new Set<MemoryScope>()
  for (const { scope } of state.records.values()) {
    if (seen.has(scope)) continue
    seen.add(scope)
    if (Object.isFrozen(scope) && handle.scopes.size < SCOPE_INTERNER_MAX) handle.scopes.set(canonicalJson(scope), scope)
  }
  return bytes.subarray(lineEnd + 1)
}

function stripPayload(value: Record<string, unknown>): void {
  for (const field of PAYLOAD_FIELDS[value.type as MemoryEvent['type']]) delete value[field]
  value.erased = true
}

function reset(handle: LogHandle): void {
  Object.assign(handle, emptyHandle())
}

function countNewlines(bytes: Uint8Array): number {
  let count = 0
  for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) count++
  return count
}

const nodeBuffer = (globalThis as { Buffer?: { byteLength(text: string, encoding: 'utf8'): number } }).Buffer

/** UTF-8 byte length of `text` without encoding it (lone surrogates count 3, as Node writes U+FFFD). */
export function utf8Length(text: string): number {
  if (nodeBuffer) return nodeBuffer.byteLength(text, 'utf8')
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
