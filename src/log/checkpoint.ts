/**
 * Checkpoints: the folded state of a log up to a committed line, persisted next to the log
 * (`<key>.checkpoint`) so that a cold open replays only the lines after it (format and trust
 * rule: docs/log-format.md, "Checkpoints").
 *
 * Line 1 is the **stamp**, `{"type","v","offset","lines","lastDigest","lastLineStart","hasV1",...}`:
 * the byte length of the log text it covers, the number of lines, the `digest` of the last
 * covered line, the byte offset where that line starts, whether version 1 lines are among them,
 * and members of the fold's codec. The lines after it are the codec's ({@link LogCheckpointCodec}).
 * A checkpoint is loaded only when the log's line `lines` ends at `offset`, verifies and has the
 * digest `lastDigest`; the lines it covers are then trusted, as a database trusts its checkpoint.
 */
import { canonicalJson } from './canonical-json.ts'
import { knownSyncHash, sha256Hex, sha256HexSync } from './digest.ts'
import { foldKept } from './fold-lines.ts'
import { EMPTY, reset, utf8Decoder, warn, type LogHandle } from './handle.ts'
import { checkLine, checkLineSync } from './line-check.ts'
import { INTERNED_MAX } from './line-writer.ts'
import type { LogCheckpointCodec, LogCheckpointSource } from './types.ts'
import { utf8Length } from './utf8.ts'

/** What a checkpoint covers: the log up to `offset` bytes, `lines` lines, the last one with `lastDigest`. */
export interface MemoryLogCheckpointStamp {
  /** Byte length of the committed log text the state folds. */
  offset: number
  /** Lines of that text. */
  lines: number
  /** `digest` of line `lines`. */
  lastDigest: string
  /** Byte offset where line `lines` starts (so the open can read and check that very line). */
  lastLineStart: number
  /** The covered text holds version 1 lines (compaction needs it to erase). */
  hasV1: boolean
}

/** A stamp as read back: the codec's version and members besides the stamp's own. */
export interface MemoryLogCheckpointHead extends MemoryLogCheckpointStamp {
  version: number
  members: Record<string, unknown>
}

/** The workspace key of the checkpoint of the log at `logKey`. */
export function checkpointKey(logKey: string): string {
  return `${logKey}.checkpoint`
}

/**
 * The checkpoint text of `state` as folded from the log text `stamp` describes, and what to call
 * once it is stored (with the byte offset of its body).
 */
export async function serializeCheckpoint<State>(codec: LogCheckpointCodec<State>, stamp: MemoryLogCheckpointStamp, state: State, digest: (text: string) => string | Promise<string>, source: LogCheckpointSource): Promise<{ text: string; stored: () => void }> {
  const { stamp: members, body, stored } = await codec.encode(state, digest, source)
  const head = JSON.stringify({ type: codec.type, v: codec.version, offset: stamp.offset, lines: stamp.lines, lastDigest: stamp.lastDigest, lastLineStart: stamp.lastLineStart, hasV1: stamp.hasV1, ...members })
  return { text: `${head}\n${body}`, stored: () => stored?.(utf8Length(head) + 1) }
}

/** A checkpoint section that could not be loaded (gone, edited, or replaced by another writer's checkpoint). */
export class SectionUnreadable extends Error {}

/** The handle's checkpoint as the source of the sections its state has not loaded yet. */
export function checkpointSource(handle: LogHandle<any, any, any>): LogCheckpointSource {
  const key = checkpointKey(handle.key)
  return {
    async read(start, end) {
      const bytes = await handle.workspace.readBytes(key, start, end)
      if (!bytes || bytes.length !== end - start) throw new Error(`the checkpoint "${key}" is gone or shorter than its directory says`)
      return bytes
    },
    digest: (text) => {
      const hash = knownSyncHash()
      return hash ? hash(text) : sha256Hex(text)
    },
    intern(value) {
      if (!Object.isFrozen(value)) return value
      const text = canonicalJson(value)
      const known = handle.interned.get(text)
      if (known !== undefined) return known
      if (handle.interned.size < INTERNED_MAX) handle.interned.set(text, value)
      return value
    },
  }
}

/**
 * Loads the checkpoint sections of the partitions `keys` (`undefined`: all) that the handle's
 * state has not loaded yet, then folds the events of later lines kept for them (call under the
 * log's lock); for all partitions, then lets the fold settle its order ({@link LogPartitions.settled}).
 *
 * @throws SectionUnreadable when one cannot be loaded (the caller replays the log in full);
 * CorruptLine when a kept event does not apply (the handle is reset).
 */
export async function loadPartitions(handle: LogHandle<any, any, any>, keys: readonly string[] | undefined): Promise<void> {
  const partitions = handle.fold.partitions
  if (!partitions) return
  const missing = partitions.missing(handle.state, keys)
  if (missing.length === 0) {
    settleWhole(handle, keys)
    return
  }
  try {
    await partitions.load(handle.state, missing, checkpointSource(handle))
  }
  catch (error) {
    throw new SectionUnreadable(error instanceof Error ? error.message : String(error))
  }
  if (handle.deferred.size > 0) {
    try {
      foldKept(handle, missing)
    }
    catch (error) {
      // Part of the kept events folded: the next operation reads the log again (and meets the bad line).
      reset(handle)
      throw error
    }
  }
  settleWhole(handle, keys)
}

/**
 * Before a read or write of the whole state (`keys` undefined) whose partitions are all loaded:
 * lets the fold put its state in the order a replay gives ({@link LogPartitions.settled}). Only
 * such a read sees the order across partitions, so one that names its partitions never pays for
 * ordering every loaded record.
 */
export function settleWhole(handle: LogHandle<any, any, any>, keys: readonly string[] | undefined): void {
  if (keys === undefined) handle.fold.partitions?.settled?.(handle.state)
}

/** Reports a checkpoint section that could not be loaded (the caller then replays the log in full). */
export function sectionIgnored(handle: LogHandle<any, any, any>, error: SectionUnreadable): void {
  const checkpoint = checkpointKey(handle.key)
  warn(handle, { code: 'MEMORY_LOG_CHECKPOINT_IGNORED', key: handle.key, message: `the checkpoint "${checkpoint}" of the memory log "${handle.key}" was ignored (a section of it is unreadable: ${error.message}); the log is replayed in full`, details: { checkpoint, reason: error.message } })
}

/** The stamp of a checkpoint text, or why it is not a checkpoint `codec` reads. Parses line 1 only. */
export function readCheckpointStamp(codec: LogCheckpointCodec<unknown>, text: string): MemoryLogCheckpointHead | string {
  const end = text.indexOf('\n')
  if (end === -1) return 'the checkpoint has no stamp line'
  let head: Record<string, unknown>
  try {
    head = JSON.parse(text.slice(0, end)) as Record<string, unknown>
  }
  catch {
    return 'the checkpoint stamp is not valid JSON'
  }
  if (head === null || typeof head !== 'object' || head.type !== codec.type) return 'the value is not a memory log checkpoint'
  if (typeof head.v !== 'number' || !codec.reads.includes(head.v)) return `unsupported checkpoint version ${JSON.stringify(head.v)}`
  const problem = codec.checkStamp(head)
  if (problem) return problem
  const counts = [head.offset, head.lines, head.lastLineStart]
  if (!counts.every(count => Number.isSafeInteger(count) && (count as number) >= 0) || typeof head.lastDigest !== 'string' || typeof head.hasV1 !== 'boolean') return 'the checkpoint stamp is malformed'
  if ((head.lines as number) < 1 || (head.lastLineStart as number) >= (head.offset as number)) return 'the checkpoint stamp is malformed'
  const { type: _type, v, offset, lines, lastDigest, lastLineStart, hasV1, ...members } = head
  return { version: v, offset: offset as number, lines: lines as number, lastDigest: lastDigest as string, lastLineStart: lastLineStart as number, hasV1: hasV1 as boolean, members }
}

/** Whether the handle reads and writes checkpoints (its fold has a codec and `checkpointEvery` is not `false`). */
export function checkpointsOn(handle: LogHandle<any, any, any>): boolean {
  return handle.options.checkpointEvery !== false && handle.fold.checkpoint !== undefined
}

/**
 * Writes a checkpoint of the handle's state as it is (call under the log's lock, after a sync),
 * replacing the old one only while the log is still `offset` bytes long (a writer of another
 * process may have appended meanwhile). Returns whether it was written.
 */
export async function storeCheckpoint(handle: LogHandle<any, any, any>): Promise<boolean> {
  const { offset, lines, lastDigest, lastLineStart, hasV1 } = handle
  return (await storeCheckpointAt(handle, { offset, lines, lastDigest: lastDigest as string, lastLineStart, hasV1 }, offset)) === 'written'
}

/**
 * Writes a checkpoint of the handle's state stamped with `at`, replacing the old one only while
 * the log is `ifLogSize` bytes long; the sections of partitions not loaded are copied from
 * `source` (default: the checkpoint at its key; compaction gives the bytes it read before removing it). `'moved'`: the log's size changed (nothing
 * written); `'not-written'`: no checkpoint of this state can be written (no line, a torn tail,
 * skipped lines, or events kept for partitions not loaded).
 */
export async function storeCheckpointAt(handle: LogHandle<any, any, any>, at: MemoryLogCheckpointStamp, ifLogSize: number, source: LogCheckpointSource = checkpointSource(handle)): Promise<'written' | 'moved' | 'not-written'> {
  const codec = handle.fold.checkpoint
  // Events kept for partitions not loaded would be missing from the sections copied (writeCheckpoint loads those first).
  if (!codec || at.lines === 0 || at.lastDigest === null || handle.tail.length > 0 || handle.skipped > 0 || handle.deferred.size > 0) return 'not-written'
  const indexesBuilt = handle.indexesBuilt
  const { text, stored } = await serializeCheckpoint(codec, at, handle.state, (await sha256HexSync()) ?? sha256Hex, source)
  if (!(await handle.workspace.replace(checkpointKey(handle.key), text, { ifSizeOf: { key: handle.key, size: ifLogSize } }))) return 'moved'
  stored()
  handle.checkpointLines = at.lines
  handle.checkpointIndexes = indexesBuilt
  return 'written'
}

/** First read of a checkpoint: enough for a stamp line and a directory of a few hundred partitions. */
const HEAD_READ_BYTES = 256 * 1024

/**
 * The stamp of the handle's checkpoint and the text its codec decodes: the stamp line and the
 * {@link LogCheckpointCodec.headBytes} after it (the whole checkpoint when the codec reads it all);
 * `undefined` when there is no checkpoint.
 */
async function readCheckpointHead(handle: LogHandle<any, any, any>, codec: LogCheckpointCodec<unknown>): Promise<{ text: string; stamp: MemoryLogCheckpointHead | string } | undefined> {
  const key = checkpointKey(handle.key)
  let bytes = await handle.workspace.readBytes(key, 0, HEAD_READ_BYTES)
  if (bytes === undefined) return undefined
  let stampEnd = bytes.indexOf(10)
  if (stampEnd === -1 && bytes.length === HEAD_READ_BYTES) {
    bytes = (await handle.workspace.readBytes(key, 0)) ?? EMPTY
    stampEnd = bytes.indexOf(10)
  }
  const stamp = readCheckpointStamp(codec, utf8Decoder.decode(stampEnd === -1 ? bytes : bytes.subarray(0, stampEnd + 1)))
  if (typeof stamp === 'string') return { text: '', stamp }
  const after = codec.headBytes?.({ ...stamp.members, v: stamp.version })
  const end = after === undefined ? undefined : stampEnd + 1 + after
  if (end === undefined || end > bytes.length) bytes = (await handle.workspace.readBytes(key, 0, end)) ?? EMPTY
  return { text: utf8Decoder.decode(end === undefined ? bytes : bytes.subarray(0, end)), stamp }
}

/**
 * Loads the checkpoint of the log when its stamp matches the log (the log is at least `offset`
 * bytes long and its line `lines` ends at `offset`, verifies and has the digest `lastDigest`),
 * and returns the log's bytes after it; `undefined` (full replay) when there is none or it does
 * not match (with a `MEMORY_LOG_CHECKPOINT_IGNORED` warning).
 */
export async function loadCheckpoint(handle: LogHandle<any, any, any>, size: number): Promise<Uint8Array | undefined> {
  const codec = handle.fold.checkpoint
  if (!codec || !checkpointsOn(handle)) return undefined
  const { workspace, key, fold } = handle
  const checkpoint = checkpointKey(key)
  const ignore = (reason: string): undefined => {
    warn(handle, { code: 'MEMORY_LOG_CHECKPOINT_IGNORED', key, message: `the checkpoint "${checkpoint}" of the memory log "${key}" was ignored (${reason}); the log is replayed in full`, details: { checkpoint, reason } })
    return undefined
  }
  let head: Awaited<ReturnType<typeof readCheckpointHead>>
  try {
    head = await readCheckpointHead(handle, codec)
  }
  catch (error) {
    return ignore(`it could not be read: ${(error as Error).message}`)
  }
  if (head === undefined) return undefined
  const { text, stamp } = head
  if (typeof stamp === 'string') return ignore(stamp)
  if (stamp.offset > size) return ignore(`it covers ${stamp.offset} bytes and the log has ${size} (the log was truncated or rewritten)`)
  const bytes = (await workspace.readBytes(key, stamp.lastLineStart)) ?? EMPTY
  const lineEnd = stamp.offset - stamp.lastLineStart - 1
  const mismatch = `line ${stamp.lines} of the log is not the line it covers (the log was edited, rewritten or compacted)`
  if (bytes.length <= lineEnd || bytes[lineEnd] !== 10 || bytes.indexOf(10) !== lineEnd) return ignore(mismatch)
  const line = utf8Decoder.decode(bytes.subarray(0, lineEnd))
  const hash = await sha256HexSync()
  try {
    const prev = (JSON.parse(line) as { prev?: string | null }).prev ?? null
    const event = hash ? checkLineSync(fold, line, stamp.lines, prev, hash, new Map(), new Map()) : await checkLine(fold, line, stamp.lines, prev)
    if (event.digest !== stamp.lastDigest || event.more) return ignore(mismatch)
  }
  catch {
    return ignore(mismatch)
  }
  let state: unknown
  try {
    state = codec.decode(text, text.indexOf('\n') + 1, { ...stamp.members, v: stamp.version }, hash)
  }
  catch (error) {
    return ignore(`its state is unreadable: ${(error as Error).message}`)
  }
  Object.assign(handle, { state, lines: stamp.lines, lastDigest: stamp.lastDigest, offset: stamp.offset, lastLineStart: stamp.lastLineStart, hasV1: stamp.hasV1, checkpointLines: stamp.lines })
  // The checkpoint's shared (frozen) values become the ones later lines and writes share.
  const seen = new Set<unknown>()
  for (const value of fold.internedValues(state)) {
    if (seen.has(value)) continue
    seen.add(value)
    if (Object.isFrozen(value) && handle.interned.size < INTERNED_MAX) handle.interned.set(canonicalJson(value), value)
  }
  return bytes.subarray(lineEnd + 1)
}
