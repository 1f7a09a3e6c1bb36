/**
 * Compaction and erasure: the log rewritten atomically (a new value swapped in with
 * `workspace.replace`, guarded by the size it was read at). Every event is kept; the payload
 * members of the lines of erased records are removed (each line keeps its header and
 * `payloadDigest`, so the chain verifies); a torn tail is dropped (moved aside first); version 1
 * lines are rewritten as version 3 when any record was erased (a version 1 digest covers the
 * content, so its chain is recomputed from line 1). A log with no line to change is not rewritten.
 *
 * The work is one pass over the log's text: only lines that name an erased record are parsed,
 * and the state is kept (compaction changes no event; `LogFold.compacted` makes what still
 * differs from a replay of the new value, or asks for that replay). The old checkpoint, which may
 * hold records erased since, is removed before the swap; the new one is written from the kept
 * state right after it (sections of partitions not loaded copied from the old one's bytes), so a
 * process opening the log soon after finds a checkpoint that matches instead of replaying it all.
 */
import { agentError } from '../errors.ts'
import { canonicalJson } from './canonical-json.ts'
import { checkpointKey, checkpointSource, checkpointsOn, storeCheckpointAt } from './checkpoint.ts'
import { checkpointFailed } from './checkpoint-schedule.ts'
import { lineHasher } from './digest.ts'
import { headKey, writeHead } from './head.ts'
import { EMPTY, MAX_WRITE_ATTEMPTS, requireWritable, reset, utf8Decoder, type LogHandle } from './handle.ts'
import { payloadOf } from './line-check.ts'
import { serializeEvent } from './line-writer.ts'
import { preparePartitions, sync } from './replay.ts'
import { quarantineTail } from './torn-tail.ts'
import { utf8Length } from './utf8.ts'
import type { LogEvent, LogEventDraft, LogEventSchema, MemoryLogCompaction } from './types.ts'

/** The rewritten log: its text, and the position of its last line. */
interface Rewrite { text: string; erasedLines: number; changed: boolean; lastDigest: string | null; lastLineStart: number }

/**
 * Rewrites the handle's log (see the module comment).
 *
 * @throws AgentError `MEMORY_LOG_CORRUPT` when the log does not verify (nothing is rewritten);
 * `MEMORY_WORKSPACE_READ_ONLY`; `MEMORY_LOG_BUSY` when other writers kept appending; write errors of the workspace.
 */
export async function compactHandle<State, Draft extends LogEventDraft>(handle: LogHandle<State, Draft, any>): Promise<MemoryLogCompaction> {
  requireWritable(handle)
  const { workspace, key, fold } = handle
  return workspace.withLock(handle.lockKey, async () => {
    const hash = await lineHasher()
    // The rewrite of the last attempt: when other writers appended meanwhile, only their lines are added to it.
    let previous: { id: string | undefined; bytesBefore: number; rewrite: Rewrite } | undefined
    let oldCheckpoint: Uint8Array | undefined
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      await sync(handle, true)
      if (handle.tail.length > 0) {
        await quarantineTail(handle)
        previous = undefined
        continue
      }
      // Partitions with events kept since the checkpoint (erase events among them): their
      // sections of the old checkpoint may hold records erased since, so they are loaded.
      if (handle.deferred.size > 0) await preparePartitions(handle, [...handle.deferred.keys()], true)
      const bytesBefore = handle.offset
      const caughtUp = previous && previous.id === handle.seen?.id && bytesBefore >= previous.bytesBefore ? await catchUp(handle, previous.bytesBefore, previous.rewrite, hash) : undefined
      let rewrite: Rewrite
      let rechain = false
      if (caughtUp === 'moved') continue
      if (caughtUp) rewrite = caughtUp
      else {
        const bytes = (await workspace.readBytes(key, 0)) ?? EMPTY
        if (bytes.length !== bytesBefore) continue
        const source = utf8Decoder.decode(bytes)
        const strippedOnly = await stripped(handle, source, hash)
        rechain = strippedOnly === 'rechain'
        rewrite = strippedOnly === 'rechain' ? await rechained(handle, source, hash) : strippedOnly
      }
      if (!rewrite.changed) return { lines: handle.lines, bytesBefore, bytesAfter: bytesBefore, erasedLines: 0, rechained: false }
      previous = rechain ? undefined : { id: handle.seen?.id, bytesBefore, rewrite }
      // The old checkpoint goes first: it may hold records erased since, and a crash between the
      // swap and the new checkpoint must not leave their content in storage. Its sections of
      // partitions not loaded (none of them holds an erased record: the partitions with kept
      // events were loaded above) are kept in memory to copy into the new one.
      if (checkpointsOn(handle) && oldCheckpoint === undefined) {
        oldCheckpoint = (await workspace.readBytes(checkpointKey(key), 0)) ?? EMPTY
        await workspace.remove(checkpointKey(key))
      }
      // Re-chained lines get new digests: the old head would name a digest no line has.
      if (rechain) await workspace.remove(headKey(key))
      if (!(await workspace.replace(key, rewrite.text, { ifSize: bytesBefore, ...(handle.options.fsync ? { fsync: true } : {}) }))) continue
      const offset = utf8Length(rewrite.text)
      const stat = await workspace.stat(key)
      handle.offset = offset
      handle.lastDigest = rewrite.lastDigest
      handle.lastLineStart = rewrite.lastLineStart
      if (rechain) handle.hasV1 = false
      handle.tail = EMPTY
      handle.seen = { size: offset, id: stat?.id }
      if (fold.compacted?.(handle.state) === 'replay') {
        reset(handle)
        await sync(handle, true, false)
      }
      await writeHead(handle)
      if (oldCheckpoint !== undefined) await checkpointAfter(handle, oldCheckpoint)
      return { lines: handle.lines, bytesBefore, bytesAfter: offset, erasedLines: rewrite.erasedLines, rechained: rechain }
    }
    throw agentError('MEMORY_LOG_BUSY', `other writers kept appending to the memory log "${key}" while it was compacted`, 'retry the compaction later', { key })
  })
}

/** Attempts at the checkpoint after a compaction before it is left to the next write's schedule (other writers kept appending). */
const CHECKPOINT_ATTEMPTS = 3

/**
 * The checkpoint of the compacted log, from the kept state (sections of partitions not loaded
 * copied from `old`, the removed checkpoint's bytes); a failure is only a lost checkpoint.
 */
async function checkpointAfter(handle: LogHandle<any, any, any>, old: Uint8Array): Promise<void> {
  const source = { ...checkpointSource(handle), read: async (start: number, end: number) => {
    if (end > old.length) throw new Error('the checkpoint read before the compaction is shorter than its directory says')
    return old.subarray(start, end)
  } }
  try {
    for (let attempt = 0; attempt < CHECKPOINT_ATTEMPTS; attempt++) {
      if (attempt > 0) await sync(handle, true)
      if (handle.lastDigest === null) return
      const { offset, lines, lastDigest, lastLineStart, hasV1 } = handle
      if ((await storeCheckpointAt(handle, { offset, lines, lastDigest, lastLineStart, hasV1 }, offset, source)) !== 'moved') return
    }
  }
  catch (error) {
    checkpointFailed(handle, error)
  }
}

/**
 * The rewrite of the log as it was at `from` bytes, with the lines other writers appended since
 * (up to the handle's offset) added, stripped like the rest; `undefined` (rewrite it all) when
 * those lines hold an erase event (a line already copied may name its record), `'moved'` when the
 * log is no longer the handle's size.
 */
async function catchUp(handle: LogHandle<any, any, any>, from: number, rewrite: Rewrite, hash: (text: string) => string | Promise<string>): Promise<Rewrite | 'moved' | undefined> {
  const bytes = (await handle.workspace.readBytes(handle.key, from)) ?? EMPTY
  if (from + bytes.length !== handle.offset) return 'moved'
  const added = utf8Decoder.decode(bytes)
  if (added.includes(`"type":"${handle.fold.schema.eraseType}"`)) return undefined
  const more = await stripped(handle, added, hash)
  if (more === 'rechain') return undefined
  const base = utf8Length(rewrite.text)
  return {
    text: rewrite.text + more.text,
    erasedLines: rewrite.erasedLines + more.erasedLines,
    changed: rewrite.changed || more.changed,
    lastDigest: handle.lastDigest,
    lastLineStart: added.length > 0 ? base + more.lastLineStart : rewrite.lastLineStart,
  }
}

/** Whether the record a line is about is erased (erase events kept for partitions not loaded count: their records' lines are stripped too). */
function erasedTest<State>(handle: LogHandle<State, any, any>): (id: string) => boolean {
  return id => handle.fold.isErased(handle.state, id) || handle.deferredErases.has(id)
}

const RECORD_ID = '"recordId":"'

/** Whether a line's text names an erased record as `"recordId":"..."` (its event's own, or one in its payload): a line that names none is kept as it is, unparsed. */
function namesErased(text: string, isErased: (id: string) => boolean): boolean {
  for (let at = text.indexOf(RECORD_ID); at !== -1; at = text.indexOf(RECORD_ID, at + RECORD_ID.length)) {
    const start = at + RECORD_ID.length
    const end = text.indexOf('"', start)
    if (end !== -1 && isErased(text.slice(start, end))) return true
  }
  return false
}

/** Whether the line's event is one whose payload compaction removes: every line of an erased record, its erase event's among them (its reason may quote the record). */
function toStrip(event: LogEvent<any> & Record<string, unknown>, isErased: (id: string) => boolean): boolean {
  return isErased(event.recordId) && !event.erased
}

/**
 * Whether a line of an erased record (stripped now, or before) asks for the log to be re-chained:
 * the log holds version 1 lines (their digests cover the payload) and the line loses its payload,
 * or its header holds free text the schema now writes in the payload
 * ({@link LogEventSchema.lineDraft}: a line written before the move).
 */
function needsRechain(handle: LogHandle<any, any, any>, event: LogEvent<any> & Record<string, unknown>, isErased: (id: string) => boolean): boolean {
  if (handle.hasV1 && toStrip(event, isErased)) return true
  const lineDraft = handle.fold.schema.lineDraft
  return isErased(event.recordId) && lineDraft !== undefined && lineDraft(event) !== event
}

/**
 * The log (or lines of it) with the lines of erased records stripped, every other line kept byte
 * for byte; `'rechain'` when one of those lines asks for the log to be re-chained ({@link needsRechain}).
 */
async function stripped(handle: LogHandle<any, any, any>, source: string, hash: (text: string) => string | Promise<string>): Promise<Rewrite | 'rechain'> {
  const { fold } = handle
  const isErased = erasedTest(handle)
  const parts: string[] = []
  let erasedLines = 0
  let kept = 0
  let start = 0
  let last = ''
  for (let end = source.indexOf('\n'); end !== -1; start = end + 1, end = source.indexOf('\n', start)) {
    let text = source.slice(start, end)
    if (namesErased(text, isErased)) {
      const event = JSON.parse(text) as LogEvent<any> & Record<string, unknown>
      if (needsRechain(handle, event, isErased)) return 'rechain'
      if (toStrip(event, isErased)) {
        // Runs of unchanged lines are copied as one slice of the source.
        if (start > kept) parts.push(source.slice(kept, start))
        const value = { ...event } as Record<string, unknown>
        stripPayload(fold.schema, value, await payloadDigestOf(fold.schema, value, hash))
        text = canonicalJson(value)
        parts.push(`${text}\n`)
        kept = end + 1
        erasedLines++
      }
    }
    last = text
  }
  if (erasedLines === 0) return { text: source, erasedLines, changed: false, lastDigest: handle.lastDigest, lastLineStart: utf8Length(source) - utf8Length(last) - 1 }
  if (kept < source.length) parts.push(source.slice(kept))
  const text = parts.join('')
  return { text, erasedLines, changed: true, lastDigest: handle.lastDigest, lastLineStart: utf8Length(text) - utf8Length(last) - 1 }
}

/** The log re-chained as version 3 from line 1 (version 1 digests cover the payload), with the lines of erased records stripped. */
async function rechained(handle: LogHandle<any, any, any>, source: string, hash: (text: string) => string | Promise<string>): Promise<Rewrite> {
  const { fold } = handle
  const isErased = erasedTest(handle)
  const lines: string[] = []
  let erasedLines = 0
  let prev: string | null = null
  for (const [index, text] of source.split('\n').slice(0, -1).entries()) {
    const event = JSON.parse(text) as LogEvent<any> & Record<string, unknown>
    const strip = toStrip(event, isErased)
    const { v: _v, seq: _seq, prev: _prev, digest: _digest, more, payloadDigest: _payloadDigest, erased: wasErased, ...draft } = event
    const rebuilt: { line: string; digest: string } = await serializeEvent(fold.schema, draft as unknown as LogEventDraft, index + 1, prev, more === true, hash)
    const value = JSON.parse(rebuilt.line) as Record<string, unknown>
    if (strip || wasErased) stripPayload(fold.schema, value, await payloadDigestOf(fold.schema, value, hash))
    if (strip) erasedLines++
    lines.push(canonicalJson(value))
    prev = rebuilt.digest
  }
  const text = lines.length > 0 ? `${lines.join('\n')}\n` : ''
  const lastLineStart = lines.length > 0 ? utf8Length(text) - utf8Length(lines[lines.length - 1]!) - 1 : 0
  return { text, erasedLines, changed: true, lastDigest: prev, lastLineStart }
}

/**
 * Removes the payload members of a line's value and marks it `erased` (header and digests stay,
 * so the chain verifies). A version 3 line gets its `payloadDigest` written (`payloadDigest`:
 * of its payload as the line holds it, {@link payloadDigestOf}), since no payload is left to compute it from.
 *
 * @throws TypeError when a version 3 line has no `payloadDigest` and none is given.
 */
export function stripPayload(schema: LogEventSchema, value: Record<string, unknown>, payloadDigest?: string): void {
  if (value.v === 3 && value.payloadDigest === undefined) {
    if (payloadDigest === undefined) throw new TypeError('stripPayload needs the payload digest of a version 3 line')
    value.payloadDigest = payloadDigest
  }
  for (const field of schema.payloadFields[value.type as string] ?? []) delete value[field]
  value.erased = true
}

/** The `payloadDigest` of a line's value (its payload members as the line holds them); `undefined` unless it is a version 3 line without one. */
export function payloadDigestOf(schema: LogEventSchema, value: Record<string, unknown>, hash: (text: string) => string | Promise<string>): string | Promise<string> | undefined {
  if (value.v !== 3 || value.payloadDigest !== undefined) return undefined
  return hash(canonicalJson(payloadOf(schema, value)))
}
