/**
 * The memory state in a checkpoint of the log (the log engine writes the stamp line that binds
 * it to the log; format and trust rule: docs/log-format.md, "Checkpoints").
 *
 * Version 6 holds one **section** per partition (store and scope), so that an open reads only the
 * partitions it serves. After the stamp, which adds `directoryDigest` (SHA-256 hex of the
 * directory line) and `directoryBytes` (its UTF-8 length with its `\n`), the **directory line**
 * `{"partitions":[[partitionKey, start, bytes, records, digest, inflated], ...],"erased":[ids]}`:
 * per partition where its section starts (bytes after the directory line), its length without its
 * `\n`, its record count, the SHA-256 hex of its text and the byte length of its payload once
 * inflated. Then one **section line** per partition: base64 of the raw DEFLATE of its payload,
 * a varint length, the UTF-8 JSON `{"values":{field:[...]},"records":{columns},"index":{...}|null}`
 * (records in creation order as columns, src/memory/record-columns.ts; a shared field an index
 * into its `values` list, `updatedAt` 0 when it equals `createdAt`; `index`: the search index snapshot's figures and its distinct words),
 * then varints: per record its creation rank (differences), and with an index the word numbers
 * of its terms and runs, then the snapshot's data bytes ({@link MemorySearchIndexSnapshot}, record
 * numbers in creation order). Compressed, a section takes a quarter to a tenth of its JSON's bytes.
 *
 * Version 5 (read, no longer written): the same with `records` a list of record objects; a
 * version 5 section not loaded is copied into a version 6 checkpoint as it is, so a version 6
 * reader takes both forms. Version 4 (read, no longer written): each section the base64 of the raw DEFLATE of its JSON
 * `{"values","records","order","index":snapshot|null}`. Version 3: the same with directory entries
 * of five members and each section line its JSON. Version 2 (read, no longer written): a state
 * line of every record, partition and erased id, and an index line with the index snapshots
 * (`indexDigest` in the stamp). Version 1: no index line. A checkpoint written while sections of an
 * older one are not loaded packs them as it copies them.
 */
import { canonicalJson, deflateBytesToBase64, inflateBytesFromBase64, inflateFromBase64, utf8Length, type LogCheckpointBody, type LogCheckpointCodec, type LogCheckpointSource, type LogPartitions } from '../log/index.ts'
import { ByteReader, ByteWriter, fromBase64 } from '../search/search.ts'
import { createSearchIndex, restoreSearchIndex, searchIndexFormat, type MemorySearchIndex, type MemorySearchIndexSnapshot } from './search-index.ts'
import { recordColumns, recordsOfColumns } from './record-columns.ts'
import { emptyRecordState, forgetDuplicates, partitionKey, rankCreated, ranksById, type MemoryCheckpointOrder, type MemoryCheckpointSection, type MemoryEventDraft, type MemoryRecordState } from './records.ts'
import type { MemoryRecord } from './types.ts'
import { turns } from '../log/turns.ts'

/** Restores a partition's index from its snapshot over the partition's records; throws when it does not fit. */
export type MemorySearchIndexRestore = (snapshot: MemorySearchIndexSnapshot, records: readonly MemoryRecord[]) => MemorySearchIndex

const VERSION = 6
/** The checkpoint version of packed sections whose records are a list of objects (read, no longer written). */
const PACKED_LIST = 5
/** The checkpoint version of compressed JSON sections (read, no longer written). */
const JSON_SECTIONS = 4
/** The checkpoint version of plain JSON sections (read, no longer written). */
const PLAIN_SECTIONS = 3
/** Versions with a directory and one section per partition. */
const SECTIONED: readonly unknown[] = [PLAIN_SECTIONS, JSON_SECTIONS, PACKED_LIST, VERSION]
// Fields whose values records share (a scope, an audit block, `[]`, `{}`): stored once each, and
// shared again on load, as a replay shares them (memory per record stays that of a replay).
const SHARED_FIELDS = ['scope', 'audit', 'tags', 'metadata', 'provenance', 'supersedes'] as const
const SHARED_MAX_CHARS = 512

/** The checkpoint codec of the memory state: records, partitions, erased ids and built search indexes. */
export const memoryCheckpointCodec: LogCheckpointCodec<MemoryRecordState> = {
  type: 'memory-log-checkpoint',
  version: VERSION,
  reads: [1, 2, PLAIN_SECTIONS, JSON_SECTIONS, PACKED_LIST, VERSION],
  encode: encodeSections,
  checkStamp(stamp) {
    if (stamp.v === 2 && typeof stamp.indexDigest !== 'string') return 'the checkpoint stamp is malformed'
    if (SECTIONED.includes(stamp.v) && (typeof stamp.directoryDigest !== 'string' || !Number.isSafeInteger(stamp.directoryBytes) || (stamp.directoryBytes as number) < 1)) return 'the checkpoint stamp is malformed'
    return undefined
  },
  headBytes: stamp => (SECTIONED.includes(stamp.v) ? stamp.directoryBytes as number : undefined),
  // Without a synchronous SHA-256 a version 2 index line (and a version 3 to 5 directory) is not checked: such an index is built on first search.
  decode: (text, start, stamp, digest) => SECTIONED.includes(stamp.v)
    ? decodeDirectory(text, start, stamp, digest)
    : decodeState(text, start, stamp, createSearchIndex, digest ? { restore: restoreSearchIndex, format: searchIndexFormat(), digest } : undefined),
  difference: stateDifference,
}

/** What `missing` answers once every section is loaded (shared: callers only read it). */
const NONE_MISSING: readonly string[] = Object.freeze([])

/** The partitions of the memory state (one per store and scope), loaded from their checkpoint sections on first use. */
export const memoryPartitions: LogPartitions<MemoryRecordState, MemoryEventDraft> = {
  of: event => partitionKey(event.store, event.scope),
  missing(state, keys) {
    const sections = state.sections
    if (!sections || sections.size === 0) return NONE_MISSING
    if (keys === undefined) return [...sections.keys()]
    // One partition named (every store operation): no array made when it is loaded.
    if (keys.length === 1) return sections.has(keys[0]!) ? keys : NONE_MISSING
    return keys.filter(key => sections.has(key))
  },
  load: loadSections,
  deferred: (state, event) => {
    if (event.type === 'remember') rankCreated(state, event.recordId)
  },
  settled: settleOrder,
  loaded: state => state.partitions,
  evict: evictPartition,
}

/**
 * Drops a clean partition (its state is its section's, see `MemoryRecordState.clean`): its
 * records, ids, ranks, search index and duplicate map; its section is missing again, so the next
 * use loads it as a first use does. Returns whether it was dropped.
 */
function evictPartition(state: MemoryRecordState, key: string): boolean {
  const section = state.clean?.get(key)
  const ids = state.partitions.get(key)
  const order = state.order
  if (!section || !ids || !order?.partitions.has(key)) return false
  for (const id of ids) {
    state.records.delete(id)
    order.records.delete(id)
  }
  order.sections.delete(key)
  state.partitions.delete(key)
  state.indexes.delete(key)
  state.erasedPartitions?.delete(key)
  state.clean!.delete(key)
  forgetDuplicates(state, key)
  ;(state.sections ??= new Map()).set(key, section)
  return true
}

/** The first difference between two states in their records, partitions or erased ids, or `undefined`. */
function stateDifference(checkpoint: MemoryRecordState, replayed: MemoryRecordState): string | undefined {
  if (checkpoint.records.size !== replayed.records.size) return `it holds ${checkpoint.records.size} records, the lines fold ${replayed.records.size}`
  for (const [id, record] of replayed.records) {
    const kept = checkpoint.records.get(id)
    if (!kept) return `record "${id}" is missing`
    if (canonicalJson(kept) !== canonicalJson(record)) return `record "${id}" differs`
  }
  // A partition left without records (its records erased) is no difference: a section loaded
  // before the erase keeps it empty, a replay of the same lines may not.
  const held = (partitions: ReadonlyMap<string, readonly string[]>) => [...partitions].filter(([, ids]) => ids.length > 0)
  const kept = held(checkpoint.partitions)
  const folded = held(replayed.partitions)
  if (kept.length !== folded.length) return `it holds ${kept.length} partitions with records, the lines fold ${folded.length}`
  for (const [key, ids] of folded) {
    if ((checkpoint.partitions.get(key) ?? []).join(',') !== ids.join(',')) return `partition ${key} differs`
  }
  if (checkpoint.erased.size !== replayed.erased.size || [...replayed.erased].some(id => !checkpoint.erased.has(id))) return 'its erased ids differ'
  return undefined
}

/**
 * The directory line and one section line per partition of `state` (see the file comment), with
 * the search index of every partition whose index is built (pending updates are taken in first;
 * indexes never built are left out, not built). The section of a partition not loaded is copied
 * from `source` (its text, checked against its digest), not decoded. Made in slices with a turn
 * of the event loop between them.
 *
 * @throws Error when an index holds a record its partition does not, or a copied section no
 * longer has its digest (the checkpoint is not written).
 */
async function encodeSections(state: MemoryRecordState, digest: (text: string) => string | Promise<string>, source: LogCheckpointSource): Promise<LogCheckpointBody> {
  const turn = turns()
  const { ranks, next, partitionOrder } = creationOrder(state)
  const sections = new Map<string, { text: string; bytes: number; records: number; digest: string; inflated: number }>()
  const compressed = async (payload: Uint8Array, records: number) => {
    const text = await deflateBytesToBase64(payload)
    return { text, bytes: text.length, records, digest: await digest(text), inflated: payload.length }
  }
  for (const [key, ids] of state.partitions) {
    sections.set(key, await compressed(encodeSection(state, key, ids, ranks), ids.length))
    await turn.maybe()
  }
  const unloaded = new Map<MemoryCheckpointSection, string>()
  for (const [key, section] of state.sections ?? []) unloaded.set(section, key)
  for (const run of readRuns([...unloaded.keys()])) {
    const bytes = await source.read(run.start, run.end)
    for (const section of run.sections) {
      const key = unloaded.get(section)!
      const text = textDecoder.decode(bytes.subarray(section.start - run.start, section.end - run.start))
      if ((await digest(text)) !== section.digest) throw new Error(`the section of partition ${key} in the checkpoint no longer has its digest`)
      // A JSON section (of a version 3 or 4 checkpoint) is packed and compressed as it is copied.
      if (section.packed) sections.set(key, { text, bytes: section.end - section.start, records: section.records, digest: section.digest, inflated: section.inflated! })
      else sections.set(key, await compressed(repackedSection(key, section.inflated === undefined ? text : await inflateFromBase64(text, section.inflated)), section.records))
    }
    await turn.maybe()
  }
  let at = 0
  const directory: Array<[string, number, number, number, string, number]> = []
  const texts: string[] = []
  for (const key of partitionOrder) {
    const section = sections.get(key)!
    directory.push([key, at, section.bytes, section.records, section.digest, section.inflated])
    texts.push(section.text)
    at += section.bytes + 1
  }
  const directoryLine = JSON.stringify({ partitions: directory, erased: [...state.erased], next })
  const directoryBytes = utf8Length(directoryLine) + 1
  const body = `${directoryLine}\n${texts.join('\n')}${texts.length > 0 ? '\n' : ''}`
  return {
    stamp: { directoryDigest: await digest(directoryLine), directoryBytes },
    body,
    // The sections still not loaded now live in the new checkpoint, and its ranks are the state's.
    // The sections not loaded now live in the new checkpoint, its ranks are the state's, and every
    // loaded partition is what its new section holds (clean, so it may be dropped and loaded again).
    stored(bodyStart) {
      const order = state.order ??= { records: new Map(), sections: new Map(), partitions: new Map(), next: 0 }
      const clean = state.clean ??= new Map()
      clean.clear()
      order.partitions.clear()
      for (const [index, entry] of directory.entries()) {
        order.partitions.set(entry[0], index)
        const start = bodyStart + directoryBytes + entry[1]
        const at = { start, end: start + entry[2], records: entry[3], digest: entry[4], inflated: entry[5], packed: true }
        const section = state.sections?.get(entry[0])
        if (section) Object.assign(section, at)
        else if (state.partitions.has(entry[0])) clean.set(entry[0], at)
      }
      // `ranks` holds every loaded record's rank: the sections' ranks are in it.
      order.records = ranks
      order.sections.clear()
      order.next = next
    },
  }
}

/**
 * The creation order the checkpoint records: a rank per loaded record (kept from the checkpoint
 * the state was read from; records created since get the next ones), the next free rank, and
 * every partition key in creation order.
 */
function creationOrder(state: MemoryRecordState): { ranks: Map<string, number>; next: number; partitionOrder: string[] } {
  const order = state.order
  // The ranks kept, then the next ones for records that have none.
  const ranks = order ? ranksById(order) : new Map<string, number>()
  let next = order?.next ?? 0
  for (const record of state.records.values()) {
    if (!ranks.has(record.id)) ranks.set(record.id, next++)
  }
  if (!order) return { ranks, next, partitionOrder: [...state.partitions.keys()] }
  const ranked = [...order.partitions.keys()].filter(key => state.partitions.has(key) || state.sections?.has(key)).sort((a, b) => order.partitions.get(a)! - order.partitions.get(b)!)
  const created = [...state.partitions.keys()].filter(key => !order.partitions.has(key))
  return { ranks, next, partitionOrder: [...ranked, ...created] }
}

/**
 * Once every section is loaded, before a read of the whole state: the records and partitions
 * maps put in creation order (the checkpoint's by rank, then those created after it, as they
 * came), as a replay orders them. Done once (until a partition is dropped and loaded again): it
 * visits every loaded record, about 90 ms at 100,000.
 */
function settleOrder(state: MemoryRecordState): void {
  const order = state.order
  if (!order || !state.sections || state.sections.size > 0) return
  // With no section's ranks apart, the records map holds them all: no copy is made.
  const records = byRank(state.records, order.sections.size === 0 ? order.records : ranksById(order))
  state.records.clear()
  for (const [id, record] of records) state.records.set(id, record)
  const partitions = byRank(state.partitions, order.partitions)
  state.partitions.clear()
  for (const [key, ids] of partitions) state.partitions.set(key, ids)
  state.sections = undefined
  // The ranks stay while a partition may still be dropped (its section loaded again needs them).
  if (!state.clean || state.clean.size === 0) state.order = undefined
}

/**
 * The entries of `map` by their rank in `rank` (whole numbers), then those without one in their
 * order: placed at their rank in one pass, or sorted stably by rank when two share one or a rank
 * is negative or far above the entries' count.
 */
function byRank<T>(map: ReadonlyMap<string, T>, rank: ReadonlyMap<string, number>): Array<[string, T]> {
  const placed: Array<[string, T]> = []
  const unranked: Array<[string, T]> = []
  // Ranks far above the entries' count (sparse, or out of range) are sorted instead of placed.
  const bound = 4 * map.size + 1024
  for (const entry of map) {
    const at = rank.get(entry[0])
    if (at === undefined) unranked.push(entry)
    else if (at < 0 || at > bound || placed[at] !== undefined) return sortedByRank(map, rank)
    else placed[at] = entry
  }
  const ordered: Array<[string, T]> = []
  for (const entry of placed) if (entry !== undefined) ordered.push(entry)
  for (const entry of unranked) ordered.push(entry)
  return ordered
}

/** {@link byRank} by a stable sort. */
function sortedByRank<T>(map: ReadonlyMap<string, T>, rank: ReadonlyMap<string, number>): Array<[string, T]> {
  const entries = [...map]
  return [...entries.filter(([key]) => rank.has(key)).sort(([a], [b]) => rank.get(a)! - rank.get(b)!), ...entries.filter(([key]) => !rank.has(key))]
}

/** The section payload of one loaded partition: its records (shared values stored once) and its built index. */
function encodeSection(state: MemoryRecordState, key: string, ids: readonly string[], ranks: ReadonlyMap<string, number>): Uint8Array {
  const records = ids.map(id => state.records.get(id)!)
  const { values, packed } = packRecords(records)
  const index = state.indexes.get(key)
  let snapshot: MemorySearchIndexSnapshot | undefined
  // An index that took an erase holds the erased words until it is rebuilt: never persisted.
  if (index?.snapshot && !state.erasedPartitions?.has(key)) {
    const numbers = new Map<string, number>()
    for (let number = 0; number < ids.length; number++) numbers.set(ids[number]!, number)
    snapshot = index.snapshot((record) => {
      const number = numbers.get(record.id)
      if (number === undefined) throw new Error(`the search index of partition ${key} holds record "${record.id}", which the partition does not`)
      return number
    })
  }
  return packSection(values, packed, ids.map(id => ranks.get(id)!), snapshot ?? null)
}

const utf8Encoder = new TextEncoder()

/**
 * The payload of a section (see the file comment): the JSON of the records and the index's
 * figures and words, then the binary part. A record whose `updatedAt` equals its `createdAt`
 * holds `0` there. `snapshot.data` may be base64 (an index's snapshot) or its bytes.
 */
function packSection(values: Record<string, unknown[]>, records: Array<Record<string, unknown>>, order: readonly number[], snapshot: MemorySearchIndexSnapshot | null): Uint8Array {
  for (const record of records) if (record.updatedAt === record.createdAt) record.updatedAt = 0
  const tail = new ByteWriter(order.length * 3 + 64)
  let previous = 0
  for (const rank of order) {
    tail.wide(rank - previous)
    previous = rank
  }
  let index: Record<string, unknown> | null = null
  let data: Uint8Array = new Uint8Array(0)
  if (snapshot) {
    // Surfaces, then the terms and runs that are not also surfaces: most words are all three.
    const words = snapshot.surfaces.slice()
    const numbers = new Map<string, number>()
    for (let at = words.length - 1; at >= 0; at--) numbers.set(words[at]!, at)
    const numberOf = (word: string) => {
      let number = numbers.get(word)
      if (number === undefined) {
        numbers.set(word, number = words.length)
        words.push(word)
      }
      return number
    }
    for (const term of snapshot.terms) tail.uint(numberOf(term))
    for (const run of snapshot.runs) tail.uint(numberOf(run))
    index = { format: snapshot.format, slots: snapshot.slots, nextPosition: snapshot.nextPosition, words, terms: snapshot.terms.length, runs: snapshot.runs.length, surfaces: snapshot.surfaces.length }
    const raw: unknown = snapshot.data
    data = raw instanceof Uint8Array ? raw : fromBase64(raw as string)
  }
  const json = utf8Encoder.encode(JSON.stringify({ values, records: recordColumns(records), index }))
  const head = new ByteWriter(8)
  head.uint(json.length)
  const parts = [head.written(), json, tail.written(), data]
  const payload = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    payload.set(part, at)
    at += part.length
  }
  return payload
}

/** A section's body as {@link loadSection} reads it: shared values, packed records, ranks and the index snapshot (or `null`). */
export interface SectionBody {
  values: Record<string, unknown[]>
  records: unknown[]
  order: unknown[]
  index: MemorySearchIndexSnapshot | null
}

/**
 * The body of a section payload ({@link packSection}); the snapshot's word lists share the
 * payload's word strings and its `data` is a view of the payload's bytes.
 *
 * @throws Error when the payload is malformed.
 */
export function unpackSection(payload: Uint8Array, key: string, count: number): SectionBody {
  const malformed = () => new Error(`the section of partition ${key} is malformed`)
  try {
    const reader = new ByteReader(payload)
    const length = reader.uint()
    const start = reader.offset
    reader.skip(length)
    const body = JSON.parse(textDecoder.decode(payload.subarray(start, start + length))) as { values: Record<string, unknown[]>; records: unknown; index: Record<string, unknown> | null }
    if (body === null || typeof body !== 'object' || body.records === null || typeof body.records !== 'object') throw malformed()
    // Columns (version 6), or a list of records (a section a version 5 checkpoint wrote, copied as it was).
    const records: unknown[] = Array.isArray(body.records) ? body.records : recordsOfColumns(body.records, count)
    const order: number[] = new Array(records.length)
    let rank = 0
    for (let at = 0; at < order.length; at++) order[at] = rank += reader.wide()
    const index = body.index
    if (index === null) {
      if (reader.remaining() !== 0) throw malformed()
      return { values: body.values, records, order, index: null }
    }
    const words = index?.words
    const counts = [index?.terms, index?.runs, index?.surfaces]
    if (typeof index !== 'object' || !Array.isArray(words) || !counts.every(count => Number.isSafeInteger(count) && (count as number) >= 0) || (index.surfaces as number) > words.length) throw malformed()
    const list = (count: number) => {
      const named = new Array<string>(count)
      for (let at = 0; at < count; at++) {
        const word = words[reader.uint()]
        if (typeof word !== 'string') throw malformed()
        named[at] = word
      }
      return named
    }
    const terms = list(index.terms as number)
    const runs = list(index.runs as number)
    const snapshot = { format: index.format, slots: index.slots, nextPosition: index.nextPosition, terms, runs, surfaces: words.slice(0, index.surfaces as number), data: payload.subarray(reader.offset) }
    return { values: body.values, records, order, index: snapshot as unknown as MemorySearchIndexSnapshot }
  }
  catch (error) {
    if (error instanceof SyntaxError || (error instanceof Error && (error.message.startsWith('the index data') || error.message.startsWith('the record columns')))) throw malformed()
    throw error
  }
}

/** The payload of a JSON section (of a version 3 or 4 checkpoint) copied into a new checkpoint. */
function repackedSection(key: string, json: string): Uint8Array {
  const body = JSON.parse(json) as SectionBody
  if (body === null || typeof body !== 'object' || !Array.isArray(body.records) || !Array.isArray(body.order)) throw new Error(`the section of partition ${key} in the checkpoint is malformed`)
  return packSection(body.values, body.records as Array<Record<string, unknown>>, body.order as number[], body.index)
}

/** Records with their shared fields (scope, audit, `[]`, `{}`) replaced by an index into a list of distinct values. */
function packRecords(records: readonly MemoryRecord[]): { values: Record<string, unknown[]>; packed: Array<Record<string, unknown>> } {
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
  const packed: Array<Record<string, unknown>> = []
  for (const record of records) {
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
    packed.push(copy)
  }
  return { values, packed }
}

/**
 * Records of a packed list with their shared fields resolved (scopes frozen, as replay shares
 * them). `packed`: of a version 5 or 6 section, where `updatedAt` 0 stands for `createdAt`.
 */
function unpackRecords(values: Record<string, unknown[]>, packed: unknown[], intern?: (value: unknown) => unknown, sectionPacked = false): MemoryRecord[] {
  if (values === null || typeof values !== 'object' || !Array.isArray(packed)) throw new Error('the checkpoint state is malformed')
  for (const field of SHARED_FIELDS) {
    const list = values[field]
    if (!Array.isArray(list)) throw new Error('the checkpoint state is malformed')
    // Replay freezes shared scopes (their partition key is cached by object) and shares them with later lines.
    if (field === 'scope') for (const [at, scope] of list.entries()) list[at] = intern ? intern(Object.freeze(scope)) : Object.freeze(scope)
  }
  const records: MemoryRecord[] = []
  for (const item of packed) {
    const record = item as Record<string, unknown>
    if (record === null || typeof record !== 'object' || typeof record.id !== 'string') throw new Error('the checkpoint state is malformed')
    for (const field of SHARED_FIELDS) {
      const value = record[field]
      if (typeof value === 'number') {
        const shared = values[field]![value]
        if (shared === undefined) throw new Error('the checkpoint state is malformed')
        record[field] = shared
      }
    }
    // One string for equal instants, as a replay keeps them.
    if (sectionPacked && record.updatedAt === 0) record.updatedAt = record.createdAt
    else if (record.createdAt === record.updatedAt) record.createdAt = record.updatedAt
    records.push(record as unknown as MemoryRecord)
  }
  return records
}

const textDecoder = new TextDecoder('utf-8')
/** Sections closer than this many bytes are read in one range. */
const READ_GAP_BYTES = 64 * 1024

/** Sections grouped into runs of nearby bytes, each run one read. */
function readRuns(sections: readonly MemoryCheckpointSection[]): Array<{ start: number; end: number; sections: MemoryCheckpointSection[] }> {
  const runs: Array<{ start: number; end: number; sections: MemoryCheckpointSection[] }> = []
  for (const section of [...sections].sort((a, b) => a.start - b.start)) {
    const last = runs.at(-1)
    if (last && section.start - last.end <= READ_GAP_BYTES) {
      last.end = Math.max(last.end, section.end)
      last.sections.push(section)
    }
    else runs.push({ start: section.start, end: section.end, sections: [section] })
  }
  return runs
}

/**
 * Reads the sections of `keys`, checks each against the digest the directory names and folds it
 * into `state` (records, ids in creation order, the index restored from its snapshot or told
 * every record).
 *
 * @throws Error when a section is unreadable, has another digest or is malformed.
 */
async function loadSections(state: MemoryRecordState, keys: readonly string[], source: LogCheckpointSource): Promise<void> {
  const sections = state.sections
  if (!sections) return
  const wanted = new Map<MemoryCheckpointSection, string>()
  for (const key of keys) {
    const section = sections.get(key)
    if (section) wanted.set(section, key)
  }
  const format = searchIndexFormat()
  for (const run of readRuns([...wanted.keys()])) {
    const bytes = await source.read(run.start, run.end)
    for (const section of run.sections) {
      const key = wanted.get(section)!
      const text = textDecoder.decode(bytes.subarray(section.start - run.start, section.end - run.start))
      if ((await source.digest(text)) !== section.digest) throw new Error(`the section of partition ${key} does not have the digest its directory names`)
      let body: SectionBody
      try {
        if (section.packed) {
          const payload = await inflateBytesFromBase64(text, section.inflated!)
          body = unpackSection(payload, key, section.records)
        }
        else body = JSON.parse(section.inflated === undefined ? text : await inflateFromBase64(text, section.inflated)) as SectionBody
      }
      catch (error) {
        if (error instanceof SyntaxError) throw new Error(`the section of partition ${key} is malformed`)
        if ((error as Error).message.startsWith('the section of')) throw error
        throw new Error(`the section of partition ${key} cannot be decompressed: ${(error as Error).message}`)
      }
      loadSection(state, key, body, section.records, format, source.intern, section.packed === true)
      sections.delete(key)
      ;(state.clean ??= new Map()).set(key, section)
    }
  }
}

function loadSection(state: MemoryRecordState, key: string, body: SectionBody, count: number, format: string, intern: ((value: unknown) => unknown) | undefined, packed: boolean): void {
  if (body === null || typeof body !== 'object' || !Array.isArray(body.order) || !body.order.every(rank => Number.isSafeInteger(rank))) throw new Error(`the section of partition ${key} is malformed`)
  const records = unpackRecords(body.values, body.records, intern, packed)
  if (records.length !== count || body.order.length !== count) throw new Error(`the section of partition ${key} holds ${records.length} records, its directory says ${count}`)
  const ids: string[] = []
  // Records share their store string and scope object: the partition key is computed once per pair.
  let store: unknown
  let scope: unknown
  for (const record of records) {
    if (state.records.has(record.id) || state.erased.has(record.id)) throw new Error(`the section of partition ${key} is malformed`)
    if (record.store !== store || record.scope !== scope) {
      if (partitionKey(record.store, record.scope) !== key) throw new Error(`the section of partition ${key} is malformed`)
      store = record.store
      scope = record.scope
    }
    ids.push(record.id)
  }
  // Written under another tokenization: stale, not corrupt; that index is built again on its first search.
  const snapshot = body.index !== null && typeof body.index === 'object' && body.index.format === format ? body.index : undefined
  let index: MemorySearchIndex
  if (snapshot) index = restoreSearchIndex(snapshot, records)
  else {
    index = state.createIndex()
    for (const record of records) index.update(record)
  }
  for (const record of records) state.records.set(record.id, record)
  state.order?.sections.set(key, { ids: ids.slice(), ranks: body.order as number[] })
  state.partitions.set(key, ids)
  state.indexes.set(key, index)
  forgetDuplicates(state, key)
}

/**
 * The state of a version 3, 4 or 5 checkpoint as far as its directory (line 2): the erased ids and, per
 * partition, where its section is; no record is read until its partition is loaded.
 *
 * @throws Error when the directory is missing, not of the stamp's length or digest, or malformed.
 */
function decodeDirectory(text: string, start: number, stamp: Record<string, unknown>, digest: ((text: string) => string) | undefined): MemoryRecordState {
  const end = text.indexOf('\n', start)
  if (start === 0 || end === -1) throw new Error('the checkpoint has no complete directory line')
  const line = text.slice(start, end)
  const directoryBytes = stamp.directoryBytes as number
  if (utf8Length(line) + 1 !== directoryBytes) throw new Error('the directory line of the checkpoint does not have the length its stamp names')
  if (digest && digest(line) !== stamp.directoryDigest) throw new Error('the directory line of the checkpoint does not have the digest its stamp names')
  const body = JSON.parse(line) as { partitions: unknown[]; erased: unknown[]; next: unknown }
  if (body === null || typeof body !== 'object' || !Array.isArray(body.partitions) || !Array.isArray(body.erased) || !Number.isSafeInteger(body.next)) throw new Error('the checkpoint directory is malformed')
  const sectionsStart = utf8Length(text.slice(0, start)) + directoryBytes
  const state = emptyRecordState(createSearchIndex)
  const sections = new Map<string, MemoryCheckpointSection>()
  const compressed = stamp.v !== PLAIN_SECTIONS
  const packed = stamp.v === VERSION || stamp.v === PACKED_LIST
  for (const entry of body.partitions) {
    const [key, at, bytes, records, sectionDigest, inflated] = Array.isArray(entry) && entry.length === (compressed ? 6 : 5) ? entry : []
    if (typeof key !== 'string' || sections.has(key) || ![at, bytes, records, ...(compressed ? [inflated] : [])].every(count => Number.isSafeInteger(count) && count >= 0) || typeof sectionDigest !== 'string') throw new Error('the checkpoint directory is malformed')
    sections.set(key, { start: sectionsStart + at, end: sectionsStart + at + bytes, records, digest: sectionDigest, ...(compressed ? { inflated } : {}), ...(packed ? { packed } : {}) })
  }
  for (const id of body.erased) {
    if (typeof id !== 'string') throw new Error('the checkpoint directory is malformed')
    state.erased.add(id)
  }
  state.sections = sections
  const order: MemoryCheckpointOrder = { records: new Map(), sections: new Map(), partitions: new Map(), next: body.next as number }
  for (const key of sections.keys()) order.partitions.set(key, order.partitions.size)
  state.order = order
  return state
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
  if (!body || !Array.isArray(body.partitions) || !Array.isArray(body.erased)) throw new Error('the checkpoint state is malformed')
  const state = emptyRecordState(createIndex)
  const records = unpackRecords(body.values, body.records)
  for (const record of records) state.records.set(record.id, record)
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
