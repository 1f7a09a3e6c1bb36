/**
 * The memory state in a checkpoint of the log (the log engine writes the stamp line that binds
 * it to the log; format and trust rule: docs/log-format.md, "Checkpoints").
 *
 * Version 2 (version 1 had no index line and still loads). After the stamp, which adds
 * `indexDigest` (the SHA-256 hex of the index line), the **state line**: `values` (per shared
 * field, the distinct values records share), `records` (in the state's order; a shared field
 * holds an index into its `values` list), `partitions` (`[partitionKey, [record index, ...]]` in
 * creation order) and `erased` (ids). Then the **index line**, `{"indexes":[[partitionKey,
 * snapshot], ...]}`: the search index of every partition whose index was built, as a
 * {@link MemorySearchIndexSnapshot} whose record numbers count in the partition's creation order.
 */
import { canonicalJson, type LogCheckpointCodec } from '../log/index.ts'
import { createSearchIndex, restoreSearchIndex, searchIndexFormat, type MemorySearchIndex, type MemorySearchIndexSnapshot } from './search-index.ts'
import { emptyRecordState, type MemoryRecordState } from './records.ts'
import type { MemoryRecord } from './types.ts'

/** Restores a partition's index from its snapshot over the partition's records; throws when it does not fit. */
export type MemorySearchIndexRestore = (snapshot: MemorySearchIndexSnapshot, records: readonly MemoryRecord[]) => MemorySearchIndex

const VERSION = 2
// Fields whose values records share (a scope, an audit block, `[]`, `{}`): stored once each, and
// shared again on load, as a replay shares them (memory per record stays that of a replay).
const SHARED_FIELDS = ['scope', 'audit', 'tags', 'metadata', 'provenance', 'supersedes'] as const
const SHARED_MAX_CHARS = 512

/** The checkpoint codec of the memory state: records, partitions, erased ids and built search indexes. */
export const memoryCheckpointCodec: LogCheckpointCodec<MemoryRecordState> = {
  type: 'memory-log-checkpoint',
  version: VERSION,
  reads: [1, VERSION],
  encode: encodeState,
  checkStamp: stamp => (stamp.v === VERSION && typeof stamp.indexDigest !== 'string' ? 'the checkpoint stamp is malformed' : undefined),
  // Without a synchronous SHA-256 the index line is not checked, so not used: indexes are built on first search.
  decode: (text, start, stamp, digest) => decodeState(text, start, stamp, createSearchIndex, digest ? { restore: restoreSearchIndex, format: searchIndexFormat(), digest } : undefined),
  difference: stateDifference,
}

/** The first difference between two states in their records, partitions or erased ids, or `undefined`. */
function stateDifference(checkpoint: MemoryRecordState, replayed: MemoryRecordState): string | undefined {
  if (checkpoint.records.size !== replayed.records.size) return `it holds ${checkpoint.records.size} records, the lines fold ${replayed.records.size}`
  for (const [id, record] of replayed.records) {
    const kept = checkpoint.records.get(id)
    if (!kept) return `record "${id}" is missing`
    if (canonicalJson(kept) !== canonicalJson(record)) return `record "${id}" differs`
  }
  if (checkpoint.partitions.size !== replayed.partitions.size) return `it holds ${checkpoint.partitions.size} partitions, the lines fold ${replayed.partitions.size}`
  for (const [key, ids] of replayed.partitions) {
    if (checkpoint.partitions.get(key)?.join(',') !== ids.join(',')) return `partition ${key} differs`
  }
  if (checkpoint.erased.size !== replayed.erased.size || [...replayed.erased].some(id => !checkpoint.erased.has(id))) return 'its erased ids differ'
  return undefined
}

/**
 * The state line and index line of `state`, with the search index of every partition whose index
 * is built (pending updates are taken in first; indexes never built are left out, not built).
 * Made in slices with a turn of the event loop between them; only `digest` may take a promise.
 *
 * @throws Error when an index holds a record its partition does not (the checkpoint is not written).
 */
async function encodeState(state: MemoryRecordState, digest: (text: string) => string | Promise<string>): Promise<{ stamp: Record<string, unknown>; body: string }> {
  const turn = turns()
  const values: Record<string, unknown[]> = {}
  const indexes: Record<string, Map<string, number>> = {}
  // Records share their scope, audit and empty values as objects (replay interns them): look an
  // object up before writing its JSON.
  const byObject: Record<string, Map<unknown, number>> = {}
  for (const field of SHARED_FIELDS) {
    values[field] = []
    indexes[field] = new Map()
    byObject[field] = new Map()
  }
  const positions = new Map<string, number>()
  const records: Array<Record<string, unknown>> = []
  for (const record of state.records.values()) {
    if (records.length % 1000 === 999) await turn.maybe()
    positions.set(record.id, records.length)
    const copy: Record<string, unknown> = { ...record }
    for (const field of SHARED_FIELDS) {
      const value = copy[field]
      if (value === undefined) continue
      let at = byObject[field]!.get(value)
      if (at === undefined) {
        const text = JSON.stringify(value)
        if (text.length > SHARED_MAX_CHARS) continue
        at = indexes[field]!.get(text)
        if (at === undefined) {
          indexes[field]!.set(text, at = values[field]!.length)
          values[field]!.push(value)
        }
        if (typeof value === 'object' && value !== null) byObject[field]!.set(value, at)
      }
      copy[field] = at
    }
    records.push(copy)
  }
  const partitions = [...state.partitions].map(([key, ids]) => [key, ids.map(id => positions.get(id)!)])
  const snapshots: Array<[string, MemorySearchIndexSnapshot]> = []
  for (const [key, index] of state.indexes) {
    const ids = state.partitions.get(key)
    // An index that took an erase holds the erased words until it is rebuilt: never persisted.
    if (!ids || !index.snapshot || state.erasedPartitions?.has(key)) continue
    let numbers: Map<string, number> | undefined
    const snapshot = index.snapshot((record) => {
      if (!numbers) {
        numbers = new Map()
        for (let number = 0; number < ids.length; number++) numbers.set(ids[number]!, number)
      }
      const number = numbers.get(record.id)
      if (number === undefined) throw new Error(`the search index of partition ${key} holds record "${record.id}", which the partition does not`)
      return number
    })
    if (snapshot) snapshots.push([key, snapshot])
    await turn.maybe()
  }
  const indexLine = JSON.stringify({ indexes: snapshots })
  // The records array written in slices, a turn of the event loop between them.
  const recordTexts: string[] = []
  for (let start = 0; start < records.length; start += 1000) {
    recordTexts.push(JSON.stringify(records.slice(start, start + 1000)).slice(1, -1))
    await turn.maybe()
  }
  const rest = JSON.stringify({ partitions, erased: [...state.erased] }).slice(1)
  const stateLine = `{"values":${JSON.stringify(values)},"records":[${recordTexts.join(',')}],${rest}`
  return { stamp: { indexDigest: await digest(indexLine) }, body: `${stateLine}\n${indexLine}\n` }
}

/** Longest run of checkpoint work between two turns of the event loop, in ms. */
const TURN_MS = 10

/**
 * Gives the event loop a turn once {@link TURN_MS} of work ran since the last one, so that a
 * checkpoint of a large state does not stall the process (reads and other work run between slices).
 */
function turns() {
  let since = Date.now()
  return {
    async maybe(): Promise<void> {
      if (Date.now() - since < TURN_MS) return
      await new Promise(resolve => (typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0)))
      since = Date.now()
    },
  }
}

/**
 * The state of a checkpoint text (line 2). A partition whose index the checkpoint holds (line 3,
 * version 2) gets it back through `indexes.restore`; the others get an index of `createIndex` that
 * is told every record in creation order (built on its first search, as after a replay). A
 * snapshot of another tokenizer format ({@link MemorySearchIndexSnapshot.format}) is left out.
 * Without `indexes` (or of a version 1 checkpoint) no index is restored.
 *
 * @throws Error when the state line is missing, not JSON or malformed, or (version 2, with
 * `indexes`) when the index line is missing, does not have the stamp's `indexDigest` or a
 * snapshot does not fit its partition: the caller then replays the log instead (never a wrong index).
 */
function decodeState(text: string, start: number, stamp: Record<string, unknown>, createIndex: () => MemorySearchIndex, indexes?: { restore: MemorySearchIndexRestore; format: string; digest: (text: string) => string }): MemoryRecordState {
  const end = text.indexOf('\n', start)
  if (start === 0 || end === -1) throw new Error('the checkpoint has no complete state line')
  const snapshots = indexes && stamp.v !== 1 ? readIndexLine(text, end + 1, stamp.indexDigest as string, indexes.format, indexes.digest) : new Map<string, MemorySearchIndexSnapshot>()
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
    const members: MemoryRecord[] = []
    for (const position of positions) {
      const record = records[position]
      if (!record) throw new Error('the checkpoint state is malformed')
      ids.push(record.id)
      members.push(record)
    }
    const snapshot = snapshots.get(key)
    snapshots.delete(key)
    let index: MemorySearchIndex
    if (snapshot) index = indexes!.restore(snapshot, members)
    else {
      index = createIndex()
      for (const record of members) index.update(record)
    }
    state.partitions.set(key, ids)
    state.indexes.set(key, index)
  }
  if (snapshots.size > 0) throw new Error('the checkpoint holds the search index of a partition it does not hold')
  for (const id of body.erased) state.erased.add(id)
  return state
}

/** The index snapshots of line 3 by partition, checked against the stamp's digest; those of another `format` are left out. */
function readIndexLine(text: string, start: number, indexDigest: string, format: string, digest: (text: string) => string): Map<string, MemorySearchIndexSnapshot> {
  const snapshots = new Map<string, MemorySearchIndexSnapshot>()
  const end = text.indexOf('\n', start)
  if (end === -1) throw new Error('the checkpoint has no complete index line')
  const line = text.slice(start, end)
  if (digest(line) !== indexDigest) throw new Error('the index line of the checkpoint does not have the digest its stamp names')
  const body = JSON.parse(line) as { indexes?: unknown }
  if (!body || !Array.isArray(body.indexes)) throw new Error('the index line of the checkpoint is malformed')
  for (const entry of body.indexes as unknown[]) {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string' || entry[1] === null || typeof entry[1] !== 'object' || snapshots.has(entry[0])) throw new Error('the index line of the checkpoint is malformed')
    const snapshot = entry[1] as MemorySearchIndexSnapshot
    // Written under another tokenization: stale, not corrupt; that index is built again on its first search.
    if (snapshot.format !== format) continue
    snapshots.set(entry[0], snapshot)
  }
  return snapshots
}
