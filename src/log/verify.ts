/**
 * Verification: the whole value read and every line checked (JSON, shape, `seq`, `prev`,
 * `digest`, `payloadDigest`, and each event's effect on the fold) without touching any open
 * log's state or the value, versions 1 and 2 alike; then the values that vouch for the log: its
 * head anchor must be reached (no line cut from the end) and a checkpoint that an open would
 * load must hold exactly the state its lines fold (no edited checkpoint). Used by `agent memory verify`.
 */
import type { Workspace } from '../workspace/types.ts'
import { checkpointKey, readCheckpointStamp } from './checkpoint.ts'
import { sha256Hex, sha256HexSync } from './digest.ts'
import { EMPTY, scratchHandle, utf8Decoder, type LogHandle } from './handle.ts'
import { headProblem, readHead, type LogHead } from './head.ts'
import { CorruptLine, digestOf } from './line-check.ts'
import { scanBytes } from './replay.ts'
import type { LogEventDraft, LogFold, MemoryLogVerification } from './types.ts'
import { countNewlines } from './utf8.ts'

/**
 * Reads the whole log at `key` and checks every line with `fold`, then its head anchor and checkpoint.
 *
 * @throws only read errors of the workspace (a missing value is an empty, valid log).
 */
export async function verifyEventLog<State, Draft extends LogEventDraft>(workspace: Workspace, key: string, fold: LogFold<State, Draft, unknown>): Promise<MemoryLogVerification> {
  const scratch = scratchHandle(fold, workspace, key, {})
  // The head first: one written after the log is read could name lines the read misses.
  const head = await readHead(scratch)
  const bytes = (await workspace.readBytes(key, 0)) ?? EMPTY
  const lines = countNewlines(bytes)
  const torn = (tail: Uint8Array) => (tail.length > 0 ? { torn: { line: scratch.lines + 1, bytes: tail.length } } : {})
  try {
    await scanBytes(scratch, bytes)
  }
  catch (error) {
    if (error instanceof CorruptLine) return { ok: false, lines, firstBad: { line: error.line, reason: error.reason } }
    throw error
  }
  const bad = headAnchorProblem(scratch, head, bytes) ?? (await checkpointProblem(scratch, bytes))
  return bad ? { ok: false, lines, firstBad: bad, ...torn(scratch.tail) } : { ok: true, lines, ...torn(scratch.tail) }
}

/** The log against its head anchor: it must have the head's lines, and line `head.lines` the head's digest. */
function headAnchorProblem(scratch: LogHandle<any, any, any>, head: LogHead | string | undefined, bytes: Uint8Array): { line: number; reason: string } | undefined {
  if (head === undefined) return undefined
  if (typeof head === 'string') return { line: scratch.lines, reason: `${head} ("${scratch.key}.head"); remove it if nothing else is wrong` }
  const digest = head.lines < scratch.lines ? digestOf(lineText(bytes, head.lines)) : head.lines === scratch.lines ? scratch.lastDigest : undefined
  const problem = headProblem(head, scratch.lines, digest, scratch.key)
  return problem ? { line: Math.min(head.lines, scratch.lines + 1), reason: problem } : undefined
}

/**
 * The checkpoint against the lines it covers: when an open would load it (its stamp matches the
 * log), its state must be the one those lines fold. A checkpoint that does not match the log is
 * ignored by every open, so it vouches for nothing and is not reported.
 */
async function checkpointProblem(scratch: LogHandle<any, any, any>, bytes: Uint8Array): Promise<{ line: number; reason: string } | undefined> {
  const codec = scratch.fold.checkpoint
  if (!codec) return undefined
  const key = checkpointKey(scratch.key)
  const checkpoint = await scratch.workspace.readBytes(key, 0)
  if (checkpoint === undefined) return undefined
  const text = utf8Decoder.decode(checkpoint)
  const stamp = readCheckpointStamp(codec, text)
  if (typeof stamp === 'string') return undefined
  if (stamp.offset > scratch.offset) return { line: scratch.lines + 1, reason: `the log ends at line ${scratch.lines}, but its checkpoint "${key}" covers ${stamp.lines} lines: lines were removed from its end` }
  if (bytes[stamp.offset - 1] !== 10 || digestOf(lineText(bytes, stamp.lines)) !== stamp.lastDigest || countNewlines(bytes.subarray(0, stamp.offset)) !== stamp.lines) return undefined
  const covered = scratchHandle(scratch.fold, scratch.workspace, scratch.key, {})
  await scanBytes(covered, bytes.subarray(0, stamp.offset))
  let difference: string | undefined
  try {
    const hash = await sha256HexSync()
    const state = codec.decode(text, text.indexOf('\n') + 1, { ...stamp.members, v: stamp.version }, hash)
    // Every section, read from the bytes already in hand: the whole state is compared.
    const partitions = scratch.fold.partitions
    if (partitions) {
      await partitions.load(state, partitions.missing(state, undefined), { read: async (start, end) => checkpoint.subarray(start, end), digest: hash ?? sha256Hex })
      partitions.settled?.(state)
    }
    difference = codec.difference(state, covered.state)
  }
  catch (error) {
    difference = `its state is unreadable: ${(error as Error).message}`
  }
  return difference ? { line: stamp.lines, reason: `the checkpoint "${key}" does not hold the state of the ${stamp.lines} lines it covers (${difference}): it was changed after it was written; remove it (it is a cache) and verify again` } : undefined
}

/** The text of line `line` (1-based) of `bytes`. */
function lineText(bytes: Uint8Array, line: number): string {
  let start = 0
  for (let count = 1; count < line; count++) start = bytes.indexOf(10, start) + 1
  const end = bytes.indexOf(10, start)
  return utf8Decoder.decode(bytes.subarray(start, end === -1 ? bytes.length : end))
}
