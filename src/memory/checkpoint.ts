/**
 * Checkpoints of the memory log: the materialized state (records, partitions, erased ids) of a
 * log up to a committed line, persisted next to the log so that a cold open replays only the
 * lines after it (format and trust rule: docs/log-format.md, "Checkpoints").
 *
 * Text: two lines. Line 1 is the **stamp**, `{"type":"memory-log-checkpoint","v":1,"offset",
 * "lines","lastDigest","lastLineStart","hasV1"}`: the byte length of the log text it covers, the
 * number of lines, the `digest` of the last covered line and the byte offset where that line
 * starts. Line 2 is the state: `values` (per interned field, the distinct values records share),
 * `records` (in the state's order; an interned field holds an index into its `values` list),
 * `partitions` (`[partitionKey, [record index, ...]]` in creation order) and `erased` (ids).
 */
import { emptyRecordState, type MemoryRecordState } from './records.ts'
import type { MemorySearchIndex } from './search.ts'
import type { MemoryRecord } from './types.ts'

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

const TYPE = 'memory-log-checkpoint'
const VERSION = 1
// Fields whose values records share (a scope, an audit block, `[]`, `{}`): stored once each, and
// shared again on load, as a replay shares them (memory per record stays that of a replay).
const SHARED_FIELDS = ['scope', 'audit', 'tags', 'metadata', 'provenance', 'supersedes'] as const
const SHARED_MAX_CHARS = 512

/** The workspace key of the checkpoint of the log at `logKey`. */
export function checkpointKey(logKey: string): string {
  return `${logKey}.checkpoint`
}

/** The checkpoint text of `state` as folded from the log text `stamp` describes. Synchronous: the state cannot change while it runs. */
export function serializeCheckpoint(stamp: MemoryLogCheckpointStamp, state: MemoryRecordState): string {
  const values: Record<string, unknown[]> = {}
  const indexes: Record<string, Map<string, number>> = {}
  for (const field of SHARED_FIELDS) {
    values[field] = []
    indexes[field] = new Map()
  }
  const positions = new Map<string, number>()
  const records: Array<Record<string, unknown>> = []
  for (const record of state.records.values()) {
    positions.set(record.id, records.length)
    const copy: Record<string, unknown> = { ...record }
    for (const field of SHARED_FIELDS) {
      const value = copy[field]
      if (value === undefined) continue
      const text = JSON.stringify(value)
      if (text.length > SHARED_MAX_CHARS) continue
      let at = indexes[field]!.get(text)
      if (at === undefined) {
        indexes[field]!.set(text, at = values[field]!.length)
        values[field]!.push(value)
      }
      copy[field] = at
    }
    records.push(copy)
  }
  const partitions = [...state.partitions].map(([key, ids]) => [key, ids.map(id => positions.get(id)!)])
  const head = { type: TYPE, v: VERSION, offset: stamp.offset, lines: stamp.lines, lastDigest: stamp.lastDigest, lastLineStart: stamp.lastLineStart, hasV1: stamp.hasV1 }
  return `${JSON.stringify(head)}\n${JSON.stringify({ values, records, partitions, erased: [...state.erased] })}\n`
}

/** The stamp of a checkpoint text, or why it is not a checkpoint this version reads. Parses line 1 only. */
export function readCheckpointStamp(text: string): MemoryLogCheckpointStamp | string {
  const end = text.indexOf('\n')
  if (end === -1) return 'the checkpoint has no stamp line'
  let head: Record<string, unknown>
  try {
    head = JSON.parse(text.slice(0, end)) as Record<string, unknown>
  }
  catch {
    return 'the checkpoint stamp is not valid JSON'
  }
  if (head === null || typeof head !== 'object' || head.type !== TYPE) return 'the value is not a memory log checkpoint'
  if (head.v !== VERSION) return `unsupported checkpoint version ${JSON.stringify(head.v)}`
  const counts = [head.offset, head.lines, head.lastLineStart]
  if (!counts.every(count => Number.isSafeInteger(count) && (count as number) >= 0) || typeof head.lastDigest !== 'string' || typeof head.hasV1 !== 'boolean') return 'the checkpoint stamp is malformed'
  if ((head.lines as number) < 1 || (head.lastLineStart as number) >= (head.offset as number)) return 'the checkpoint stamp is malformed'
  return { offset: head.offset as number, lines: head.lines as number, lastDigest: head.lastDigest, lastLineStart: head.lastLineStart as number, hasV1: head.hasV1 }
}

/**
 * The state of a checkpoint text (line 2), with a search index per partition that is told every
 * record in creation order (indexes are built on their first search, as after a replay).
 *
 * @throws Error when the state line is missing, not JSON or malformed.
 */
export function readCheckpointState(text: string, createIndex: () => MemorySearchIndex): MemoryRecordState {
  const start = text.indexOf('\n') + 1
  const end = text.indexOf('\n', start)
  if (start === 0 || end === -1) throw new Error('the checkpoint has no complete state line')
  const body = JSON.parse(text.slice(start, end)) as { values: Record<string, unknown[]>; records: Array<Record<string, unknown>>; partitions: Array<[string, number[]]>; erased: string[] }
  if (!body || !Array.isArray(body.records) || !Array.isArray(body.partitions) || !Array.isArray(body.erased) || typeof body.values !== 'object') throw new Error('the checkpoint state is malformed')
  for (const field of SHARED_FIELDS) {
    const list = body.values[field]
    if (!Array.isArray(list)) throw new Error('the checkpoint state is malformed')
    // Replay freezes shared scopes (their partition key is cached by object).
    if (field === 'scope') for (const scope of list) Object.freeze(scope)
  }
  const state = emptyRecordState(createIndex)
  const records: MemoryRecord[] = []
  for (const record of body.records) {
    if (record === null || typeof record !== 'object' || typeof record.id !== 'string') throw new Error('the checkpoint state is malformed')
    for (const field of SHARED_FIELDS) {
      const value = record[field]
      if (typeof value === 'number') {
        const shared = body.values[field]![value]
        if (shared === undefined) throw new Error('the checkpoint state is malformed')
        record[field] = shared
      }
    }
    // One string for equal instants, as a replay keeps them.
    if (record.createdAt === record.updatedAt) record.createdAt = record.updatedAt
    records.push(record as unknown as MemoryRecord)
    state.records.set(record.id, record as unknown as MemoryRecord)
  }
  for (const [key, positions] of body.partitions) {
    const ids: string[] = []
    const index = createIndex()
    for (const position of positions) {
      const record = records[position]
      if (!record) throw new Error('the checkpoint state is malformed')
      ids.push(record.id)
      index.update(record)
    }
    state.partitions.set(key, ids)
    state.indexes.set(key, index)
  }
  for (const id of body.erased) state.erased.add(id)
  return state
}
