/**
 * The snapshot codec: an index's structures to and from a {@link SearchIndexSnapshot} (layout at
 * its `data` field). Restoring tokenizes nothing; derived figures (document frequencies, field
 * statistics) are recomputed from the decoded structures.
 */
import { parseInstant } from '../instant.ts'
import { withRoom } from './arrays.ts'
import { ByteReader, ByteWriter, fromBase64 } from './bytes.ts'
import { searchIndexFormat } from './format.ts'
import { PairLists } from './postings.ts'
import { RunIndex } from './runs.ts'
import { FIELDS, Slots } from './slots.ts'
import { IndexState } from './state.ts'
import type { SearchDocument, SearchIndexSnapshot, SearchText } from './types.ts'
import { LATIN_SURFACE, TF_BITS, TF_INLINE_MAX, Vocabulary } from './vocabulary.ts'

/** The snapshot of `state`; `recordNumber(record)` is the number stored for a live record. */
export function encodeSnapshot<D extends SearchDocument>(state: IndexState<D>, recordNumber: (record: D) => number): SearchIndexSnapshot {
  const { slots, vocabulary, runs } = state
  const count = slots.count
  const out = new ByteWriter(count * 32 + 1024)
  let previous = 0
  for (let slot = 0; slot < count; slot++) {
    const number = slots.alive[slot] === 1 ? recordNumber(slots.records[slot]!) + 1 : 0
    out.int(number - previous)
    previous = number
  }
  previous = 0
  for (let slot = 0; slot < count; slot++) {
    out.int(slots.positions[slot]! - previous)
    previous = slots.positions[slot]!
  }
  for (let at = 0; at < count * FIELDS; at++) out.uint(slots.lengths[at]!)
  // Creation times, as differences: parsing them again is most of a restore when scopes interleave.
  let timed = true
  for (let slot = 0; slot < count && timed; slot++) timed = slots.alive[slot] === 0 || Number.isSafeInteger(slots.created[slot]!)
  out.uint(timed ? 1 : 0)
  previous = 0
  for (let slot = 0; timed && slot < count; slot++) {
    if (slots.alive[slot] === 0) {
      out.uint(0)
      continue
    }
    out.wide(slots.created[slot]! - previous)
    previous = slots.created[slot]!
  }
  vocabulary.termPostings.encode(out)
  runs.postings.encode(out)
  const surfaceCount = vocabulary.surfaceNames.length
  for (let sid = 0; sid < surfaceCount; sid++) out.uint(vocabulary.surfaceTerms[sid]!)
  for (let sid = 0; sid < surfaceCount; sid++) out.uint(vocabulary.surfaceCounts[sid]!)
  out.uint(vocabulary.largeCounts.size)
  for (const [key, large] of vocabulary.largeCounts) {
    out.uint(key)
    out.uint(large)
  }
  return {
    format: searchIndexFormat(),
    slots: count,
    nextPosition: state.nextPosition,
    terms: vocabulary.termNames.slice(),
    runs: runs.texts.slice(),
    surfaces: vocabulary.surfaceNames.slice(),
    data: out.base64(),
  }
}

/**
 * The index state a snapshot was taken of, over `records` (the partition's records in creation
 * order, any status; the snapshot's record numbers point into it). Its `data` may also be the
 * decoded bytes of the base64 (a container that stores them as bytes saves the base64 step).
 *
 * @throws Error when the snapshot is malformed, of another format, or does not index exactly the
 * active records of `records`.
 */
export function decodeSnapshot<D extends SearchDocument>(value: unknown, records: readonly D[], text: SearchText<D>, irregular: boolean): IndexState<D> {
  const fail = (why: string): never => {
    throw new Error(`the search index snapshot ${why}`)
  }
  if (value === null || typeof value !== 'object') fail('is not an object')
  const snapshot = value as Partial<SearchIndexSnapshot>
  if (snapshot.format !== searchIndexFormat()) fail(`has format ${JSON.stringify(snapshot.format)}, not ${searchIndexFormat()}`)
  const isCount = (count: unknown) => Number.isSafeInteger(count) && (count as number) >= 0 && (count as number) < 0x7fffffff
  const data: unknown = snapshot.data
  if (!isCount(snapshot.slots) || !isCount(snapshot.nextPosition) || (typeof data !== 'string' && !(data instanceof Uint8Array))) fail('is malformed')
  const textList = (list: unknown, name: string): string[] => {
    if (!Array.isArray(list) || !list.every(item => typeof item === 'string')) return fail(`has no ${name} list`)
    return list as string[]
  }
  // The term map is the one a first search reads; the maps of runs and surfaces are made on first
  // use (a search scans the runs; only an update looks a word up), from lists the encoder wrote distinct.
  const termNames = textList(snapshot.terms, 'term')
  const termIds = new Map<string, number>()
  for (let id = 0; id < termNames.length; id++) termIds.set(termNames[id]!, id)
  if (termIds.size !== termNames.length) fail('repeats a term')
  const terms = { names: termNames, ids: termIds }
  const runNames = textList(snapshot.runs, 'run')
  const surfaceNames = textList(snapshot.surfaces, 'surface')
  const count = snapshot.slots!
  const input = new ByteReader(typeof data === 'string' ? fromBase64(data) : data as Uint8Array)
  // Room for an eighth more records (at least 16): a restored scope of 10 records holds 26 slots, not 256.
  const slots = new Slots<D>(withRoom(count))
  slots.records = new Array<D | undefined>(count).fill(undefined)
  slots.count = count
  const nextPosition = snapshot.nextPosition!
  // Record numbers taken by a slot: two slots of one record do not match the partition (its ids are distinct).
  const taken = takenMarks(records.length)
  let number = 0
  for (let slot = 0; slot < count; slot++) {
    number += input.int()
    if (number === 0) continue
    const record = number > 0 ? records[number - 1] : undefined
    if (record?.status !== 'active' || taken.marks[number - 1] === taken.mark) fail('does not match the records of its partition')
    taken.marks[number - 1] = taken.mark
    slots.records[slot] = record
    slots.alive[slot] = 1
    slots.live++
  }
  let active = 0
  for (const record of records) if (record.status === 'active') active++
  if (active !== slots.live) fail('does not index every active record of its partition')
  let position = 0
  for (let slot = 0; slot < count; slot++) {
    position += input.int()
    if (slots.alive[slot] === 1 && !(position >= 0 && position < nextPosition)) fail('has a position out of range')
    slots.positions[slot] = position
  }
  for (let at = 0; at < count * FIELDS; at++) {
    const length = input.uint()
    slots.lengths[at] = length
    if (slots.alive[(at / FIELDS) | 0] === 0) continue
    slots.countField(at % FIELDS, length, 1)
  }
  const timed = input.uint()
  if (timed > 1) fail('is malformed')
  let created = 0
  for (let slot = 0; slot < count; slot++) {
    if (timed === 1) {
      const difference = input.wide()
      if (slots.alive[slot] === 0) continue
      created += difference
    }
    else if (slots.alive[slot] === 0) continue
    slots.created[slot] = timed === 1 ? created : parseInstant(slots.records[slot]!.createdAt) ?? Number.NaN
  }
  const termPostings = PairLists.decode(input, terms.names.length, count, 1, (1 << (FIELDS * TF_BITS)) - 1)
  const surfaceCount = surfaceNames.length
  const vocabulary = new Vocabulary(irregular, { terms: terms.names.length, surfaces: surfaceCount, termPostings })
  vocabulary.termNames = terms.names
  vocabulary.termIds = terms.ids
  const runs = new RunIndex(PairLists.decode(input, runNames.length, count, 1, 0x7fffffff))
  runs.restore(runNames)
  vocabulary.restoreSurfaces(surfaceNames)
  for (let sid = 0; sid < surfaceCount; sid++) {
    const term = input.uint()
    if (term >= terms.names.length) fail('has a surface word of an unknown term')
    vocabulary.surfaceTerms[sid] = term
    vocabulary.surfaceLatin[sid] = LATIN_SURFACE.test(surfaceNames[sid]!) ? 1 : 0
  }
  vocabulary.keyLatinSurfaces()
  for (let sid = 0; sid < surfaceCount; sid++) {
    const holders = input.uint()
    if (holders > slots.live) fail('has a surface word held by more records than it indexes')
    vocabulary.surfaceCounts[sid] = holders
  }
  for (let entries = input.uint(); entries > 0; entries--) {
    const key = input.uint()
    const large = input.uint()
    if (key >= count * FIELDS || large < TF_INLINE_MAX) fail('has a field count out of range')
    vocabulary.largeCounts.set(key, large)
  }
  if (input.remaining() !== 0) fail('has data left over')
  liveFrequencies(vocabulary, slots, fail)
  const state = new IndexState<D>(text, irregular, { slots, vocabulary, runs })
  state.nextPosition = nextPosition
  return state
}

const blockScratch: number[] = []

// Per record number, the mark of the last decode that gave it a slot (decodes are synchronous: one scratch for all).
let recordMarks = new Int32Array(256)
let recordMark = 0

/** The record marks, at least `records` long, and a mark no record number holds yet. */
function takenMarks(records: number): { marks: Int32Array; mark: number } {
  if (records > recordMarks.length) recordMarks = new Int32Array(Math.max(records, 2 * recordMarks.length))
  if (++recordMark >= 0x7fffffff) {
    recordMarks.fill(0)
    recordMark = 1
  }
  return { marks: recordMarks, mark: recordMark }
}

/** Sets the live document frequency of every term, from the postings of live slots (checking every large count is present). */
function liveFrequencies<D>(vocabulary: Vocabulary, slots: Slots<D>, fail: (why: string) => never): void {
  const frequencies = vocabulary.termFrequency
  const postings = vocabulary.termPostings
  const data = postings.data
  for (let term = 0; term < vocabulary.termNames.length; term++) {
    let frequency = 0
    const ranges = postings.blocks(term, blockScratch)
    for (let range = 0; range < ranges.length; range += 2) {
      for (let at = ranges[range]!, end = ranges[range + 1]!; at < end; at += 2) {
        const slot = data[at]!
        if (slots.alive[slot] === 0) continue
        frequency++
        const packed = data[at + 1]!
        if (!mayHoldLargeCount(packed)) continue
        for (let field = 0; field < FIELDS; field++) {
          if (((packed >>> (field * TF_BITS)) & TF_INLINE_MAX) === TF_INLINE_MAX && !vocabulary.largeCounts.has(slot * FIELDS + field)) fail('lacks a large field count')
        }
      }
    }
    frequencies[term] = frequency
  }
}

/** The lowest bit of each {@link TF_BITS}-bit count of a packed posting value, and the highest. */
const LOW_BITS = 0x204081
const HIGH_BITS = 0x8102040

/**
 * Whether a count of packed posting value `packed` may be {@link TF_INLINE_MAX} (false: none is):
 * a field equal to it is a zero field of the value's complement, found for all four fields at once
 * (the "has a zero byte" test, for 7-bit fields; it may say yes for a field above a zero one, never no for a zero one).
 */
function mayHoldLargeCount(packed: number): boolean {
  const complement = ~packed & 0x0fffffff
  return ((complement - LOW_BITS) & ~complement & HIGH_BITS) !== 0
}
