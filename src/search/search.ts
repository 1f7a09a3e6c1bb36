/**
 * Memory search: the documented substring rule ({@link searchRecords}) and the ranked index that
 * serves every store's search by default ({@link createSearchIndex}, issue 7).
 *
 * Source: capability document, "Search counts case-insensitive matches of `query` in the title,
 * content, and tags, and returns 10 results by default"; issue 7, "Ranked full-text search per
 * scope ... Every record that the documented rule returns must still be returned".
 */
import { agentError } from '../errors.ts'
import { hash53 } from '../memory/dedupe.ts'
import { isInstant, parseInstant } from '../memory/records.ts'
import { MEMORY_LIMITS } from '../memory/schemas.ts'
import { ENGLISH_STOP_WORDS, editDistance, foldText, forEachTokenAndRun, stemWord, tokenizeWords } from './text.ts'
import type { TokenAndRunVisitor } from './text.ts'
import { searchableContent, searchableTags } from '../memory/kinds.ts'
import type { MemoryRecord, MemorySearchHit, MemorySearchQuery } from '../memory/types.ts'

/** Results returned when a query gives no `limit` (source: capability document). */
export const DEFAULT_SEARCH_LIMIT = 10

/** Most results one search returns (`limit` above it is an input error): `MEMORY_LIMITS.searchLimit`, 100. */
export const MAX_SEARCH_LIMIT: number = MEMORY_LIMITS.searchLimit

/**
 * Searches `records` (one store and scope, in creation order) with the documented rule:
 *
 * - score = number of case-insensitive, non-overlapping occurrences of the whole `query` string
 *   in the title, plus in the content, plus in each tag (counted per field, never across fields);
 * - only `active` records with score > 0 are hits;
 * - filters apply before the limit: `kinds` (the record's kind is one of them; an empty list
 *   matches nothing), `tags` (the record carries every listed tag, compared case-insensitively;
 *   an empty list adds no condition), `after` (created at or after), `before` (created strictly
 *   before); instants are compared as `Date` values;
 * - order: score descending, then newest first (`createdAt`, then position in `records`);
 * - at most `limit` hits, default {@link DEFAULT_SEARCH_LIMIT}.
 *
 * @throws AgentError `MEMORY_QUERY_INVALID` when `query` is empty or blank, `after`/`before` is
 * not a parsable instant, or `limit` is not an integer from 1 to {@link MAX_SEARCH_LIMIT} (fault class 2: an empty query must
 * not return everything, a bad date must not silently return nothing, `limit: 0` must not become 10).
 */
export function searchRecords(records: readonly MemoryRecord[], query: MemorySearchQuery): MemorySearchHit[] {
  const checked = checkQuery(query)
  const { needle, limit } = checked
  const hits: Array<MemorySearchHit & { position: number; created: number }> = []
  records.forEach((record, position) => {
    if (record.status !== 'active') return
    const created = parseInstant(record.createdAt) ?? Number.NaN
    if (!passesFilters(record, created, checked)) return
    // Issue 5: the episode is read with the content; keywords and topics with the tags.
    let score = countOccurrences(record.title ?? '', needle) + countOccurrences(searchableContent(record), needle)
    for (const tag of searchableTags(record)) score += countOccurrences(tag, needle)
    if (score > 0) hits.push({ record, score, position, created })
  })
  hits.sort((a, b) => b.score - a.score || b.created - a.created || b.position - a.position)
  return hits.slice(0, limit).map(({ record, score }) => ({ record, score }))
}

/** Non-overlapping occurrences of `needle` (already lower case) in `text`, ignoring case. */
export function countOccurrences(text: string, needle: string): number {
  if (needle === '' || text.length === 0) return 0
  const haystack = text.toLowerCase()
  let count = 0
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count++
  return count
}

type CheckedQuery = ReturnType<typeof checkQuery>

/**
 * Whether an active `record` passes the `kinds`, `tags`, `after` and `before` filters of `query`
 * (the same rule every search applies before its limit). Validates `query` like {@link searchRecords}.
 */
export function recordMatchesFilters(record: MemoryRecord, query: MemorySearchQuery): boolean {
  return record.status === 'active' && passesFilters(record, parseInstant(record.createdAt) ?? Number.NaN, checkQuery(query))
}

/** The `kinds`, `tags`, `after` and `before` conditions (applied before any limit). */
function passesFilters(record: MemoryRecord, created: number, { kinds, tags, after, before, keywords, topics }: CheckedQuery): boolean {
  if (kinds && !kinds.has(record.kind)) return false
  // Issue 5: keywords all-of (like tags), topics any-of (like kinds), both case-insensitive.
  if (keywords.length > 0 && !keywords.every(keyword => record.keywords?.some(own => own.toLowerCase() === keyword))) return false
  if (topics && !record.topics?.some(topic => topics.has(topic.toLowerCase()))) return false
  if (after !== undefined && !(created >= after)) return false
  if (before !== undefined && !(created < before)) return false
  if (tags.length > 0) {
    const carried = new Set(record.tags.map(tag => tag.toLowerCase()))
    if (!tags.every(tag => carried.has(tag))) return false
  }
  return true
}

function checkQuery(query: MemorySearchQuery) {
  if (typeof query.query !== 'string' || query.query.trim() === '') {
    throw agentError('MEMORY_QUERY_INVALID', 'the search query is empty', 'pass the words to look for in `query`, for example "favorite color"')
  }
  for (const field of ['after', 'before'] as const) {
    const value = query[field]
    if (value !== undefined && !isInstant(value)) {
      throw agentError('MEMORY_QUERY_INVALID', `\`${field}\` is not a date: ${JSON.stringify(value)}`, `pass an ISO 8601 instant with a zone such as "2024-05-01T09:00:00Z" or a date such as "2024-05-01", or leave \`${field}\` out`, { field })
    }
  }
  const limit = query.limit ?? DEFAULT_SEARCH_LIMIT
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
    throw agentError('MEMORY_QUERY_INVALID', `\`limit\` must be a whole number from 1 to ${MAX_SEARCH_LIMIT}, got ${JSON.stringify(query.limit)}`, `pass a limit such as 5, or leave it out for ${DEFAULT_SEARCH_LIMIT}`, { field: 'limit' })
  }
  if (query.mode !== undefined && query.mode !== 'ranked' && query.mode !== 'substring') {
    throw agentError('MEMORY_QUERY_INVALID', `\`mode\` must be "ranked" or "substring", got ${JSON.stringify(query.mode)}`, 'leave `mode` out for ranked search, or pass "substring" for the documented rule', { field: 'mode' })
  }
  return {
    needle: query.query.toLowerCase(),
    kinds: query.kinds ? new Set<string>(query.kinds) : undefined,
    tags: (query.tags ?? []).map(tag => tag.toLowerCase()),
    keywords: (query.keywords ?? []).map(keyword => keyword.toLowerCase()),
    topics: query.topics ? new Set(query.topics.map(topic => topic.toLowerCase())) : undefined,
    after: parseInstant(query.after),
    before: parseInstant(query.before),
    limit,
  }
}


// ---------------------------------------------------------------------------------------------
// Ranked index
// ---------------------------------------------------------------------------------------------

/** The fields ranked search reads, in the order of {@link MemorySearchIndexOptions.fieldWeights}. */
export const SEARCH_FIELDS = ['title', 'content', 'tags'] as const
type SearchField = (typeof SEARCH_FIELDS)[number]

/**
 * Options of {@link createSearchIndex}. Every field is optional; the defaults are the store
 * defaults (the log engine creates indexes without options).
 */
export interface MemorySearchIndexOptions {
  /**
   * Weight of a term occurrence per field (BM25F). Default `{ title: 2, content: 1, tags: 2 }`:
   * title and tags above content (issue 7, "field weights (title and tags above content)").
   */
  fieldWeights?: Partial<Record<SearchField, number>>
  /** BM25 term-frequency saturation, default 1.2. */
  k1?: number
  /** BM25 length normalization in [0, 1], default 0.75. */
  b?: number
  /**
   * Pseudo-relevance feedback: terms of the best `records` results (default 0: off) are added to the
   * query, the `terms` (default 10) most telling ones at up to `weight` (default 0.3) of a query
   * term. `{ records: 0 }` turns it off.
   */
  feedback?: { records?: number; terms?: number; weight?: number }
}

/** Default {@link MemorySearchIndexOptions}. */
export const DEFAULT_SEARCH_INDEX_OPTIONS: {
  readonly fieldWeights: Readonly<Record<SearchField, number>>
  readonly k1: number
  readonly b: number
  readonly feedback: Readonly<{ records: number; terms: number; weight: number }>
} = {
  fieldWeights: { title: 2, content: 1, tags: 2 },
  k1: 1.2,
  b: 0.75,
  feedback: { records: 0, terms: 10, weight: 0.3 },
}

/**
 * A search index over the records of one store and scope (one partition), kept current by the
 * log's materialized state: `update` is called with the record after every event on it, in log
 * order (a superseded or deleted record must disappear from results).
 */
export interface MemorySearchIndex {
  /** Takes in the latest state of a record (any status). Cost: the record's own length. */
  update(record: MemoryRecord): void
  /**
   * Active records matching `query`, best first, filters before the limit. `mode: 'substring'`
   * gives exactly {@link searchRecords}; the default ranked mode is described at {@link createSearchIndex}.
   *
   * @throws AgentError `MEMORY_QUERY_INVALID` as {@link searchRecords}.
   */
  search(query: MemorySearchQuery): MemorySearchHit[]
  /** Number of active records indexed. */
  readonly size: number
  /** True once the index is built (by a search, `size` or a restore); updates before that are only noted. */
  readonly built?: boolean
  /**
   * The persisted form of the index with every update taken in, or `undefined` when it was never
   * built (no search yet; see {@link restoreSearchIndex}). `recordNumber(record)` is the number a
   * checkpoint stores for an indexed record: its place in the partition's creation order.
   */
  snapshot?(recordNumber: (record: MemoryRecord) => number): MemorySearchIndexSnapshot | undefined
}

/**
 * A built index of {@link createSearchIndex} as JSON values, for checkpoints (checkpoint.ts,
 * docs/log-format.md "Checkpoints"): the vocabularies as strings in id order, and every number
 * list in `data` as unsigned LEB128 varints (zigzag deltas for slot keys, record numbers and
 * positions), in base64. Tombstoned slots are kept as they are (they go at the next rebuild).
 */
export interface MemorySearchIndexSnapshot {
  /** {@link searchIndexFormat} of the code that wrote it: another format is not restored (the index is rebuilt). */
  format: string
  /** Slots used, live and tombstoned. */
  slots: number
  /** The position the next new record gets (ties in ranking go to the greater position). */
  nextPosition: number
  /** Terms (stems) by id. */
  terms: string[]
  /** Runs (maximal letter/digit/mark sequences, lower case) by id. */
  runs: string[]
  /** Trigrams of the runs by id. */
  trigrams: string[]
  /** Surface words (folded tokens as written) by id. */
  surfaces: string[]
  /**
   * Base64 of, in order: per slot its record number + 1 (0 for a tombstone), per slot its
   * position, per slot its 3 field lengths, then 1 and per slot its creation time in ms (0 instead,
   * and no times, when a live record's time is not a number: times are then parsed again on
   * restore), the term, run and trigram posting lists (per list:
   * pair count, then key delta and value per pair), per surface its term id, per surface its live
   * record count, and the field counts above the inline maximum (count, then slot × 3 + field and
   * count per entry).
   */
  data: string
}

const LATIN_SURFACE = /^[a-z]+$/

/**
 * Growable lists of (key, value) int32 pairs, one list per id, stored in one shared `Int32Array`
 * as linked blocks (2 header ints, then pairs; block sizes double from 2 to 512 pairs). One
 * posting list costs a few ints instead of a typed array or a `Map` per term: a vocabulary of
 * 100,000 one-record terms stays small.
 */
class PairLists {
  private arena = new Int32Array(1 << 8)
  private used = 0
  /** Per list: first block, last block, pairs used in the last block, pairs in all. */
  private heads = new Int32Array(16)
  private tails = new Int32Array(16)
  private fills = new Int32Array(16)
  private lengths = new Int32Array(16)
  count = 0

  /** A new empty list; returns its id. */
  create(): number {
    const id = this.count++
    if (id >= this.heads.length) {
      this.heads = grow(this.heads, id + 1)
      this.tails = grow(this.tails, id + 1)
      this.fills = grow(this.fills, id + 1)
      this.lengths = grow(this.lengths, id + 1)
    }
    this.heads[id] = -1
    this.tails[id] = -1
    this.fills[id] = 0
    this.lengths[id] = 0
    return id
  }

  length(id: number): number {
    return this.lengths[id]!
  }

  push(id: number, key: number, value: number): void {
    let tail = this.tails[id]!
    let fill = this.fills[id]!
    if (tail === -1 || fill === this.arena[tail + 1]!) {
      const capacity = tail === -1 ? 2 : Math.min(512, this.arena[tail + 1]! * 2)
      const block = this.allocate(2 + capacity * 2)
      this.arena[block] = -1
      this.arena[block + 1] = capacity
      if (tail === -1) this.heads[id] = block
      else this.arena[tail] = block
      this.tails[id] = tail = block
      fill = 0
    }
    const at = tail + 2 + fill * 2
    this.arena[at] = key
    this.arena[at + 1] = value
    this.fills[id] = fill + 1
    this.lengths[id]!++
  }

  /** Calls `visit(key, value)` for every pair of list `id`, in push order. */
  forEach(id: number, visit: (key: number, value: number) => void): void {
    const arena = this.arena
    for (let block = this.heads[id]!; block !== -1; block = arena[block]!) {
      const filled = block === this.tails[id] ? this.fills[id]! : arena[block + 1]!
      const end = block + 2 + filled * 2
      for (let at = block + 2; at < end; at += 2) visit(arena[at]!, arena[at + 1]!)
    }
  }

  /** The blocks of list `id` as [start, end) ranges of pair offsets in {@link data} (for tight loops). */
  blocks(id: number, out: number[]): number[] {
    out.length = 0
    const arena = this.arena
    for (let block = this.heads[id]!; block !== -1; block = arena[block]!) {
      const filled = block === this.tails[id] ? this.fills[id]! : arena[block + 1]!
      out.push(block + 2, block + 2 + filled * 2)
    }
    return out
  }

  get data(): Int32Array {
    return this.arena
  }

  /** Writes the pairs of all lists, then every list in id order: its pair count, then per pair the key as a zigzag delta from the previous key and the value. */
  encode(out: ByteWriter): void {
    const arena = this.arena
    let total = 0
    for (let id = 0; id < this.count; id++) total += this.lengths[id]!
    out.uint(total)
    for (let id = 0; id < this.count; id++) {
      out.uint(this.lengths[id]!)
      let previous = 0
      for (let block = this.heads[id]!; block !== -1; block = arena[block]!) {
        const filled = block === this.tails[id] ? this.fills[id]! : arena[block + 1]!
        for (let at = block + 2, end = block + 2 + filled * 2; at < end; at += 2) {
          out.int(arena[at]! - previous)
          previous = arena[at]!
          out.uint(arena[at + 1]!)
        }
      }
    }
  }

  /**
   * `count` lists read back from {@link encode}, one block each.
   *
   * @throws Error when the bytes end early or a key is outside `[0, keyLimit)` or a value outside `[minValue, maxValue]`.
   */
  static decode(input: ByteReader, count: number, keyLimit: number, minValue: number, maxValue: number): PairLists {
    const lists = new PairLists()
    const size = Math.max(16, count)
    lists.heads = new Int32Array(size)
    lists.tails = new Int32Array(size)
    lists.fills = new Int32Array(size)
    lists.lengths = new Int32Array(size)
    lists.count = count
    const total = input.uint()
    // A pair takes 2 bytes at least: a count the data cannot hold is refused before allocating.
    if (total * 2 > input.remaining()) throw new Error('the posting lists are longer than their data')
    const arena = new Int32Array(Math.max(256, 2 * count + 2 * total))
    let used = 0
    let pairs = 0
    for (let id = 0; id < count; id++) {
      const length = input.uint()
      lists.lengths[id] = length
      lists.fills[id] = length
      if (length === 0) {
        lists.heads[id] = lists.tails[id] = -1
        continue
      }
      pairs += length
      if (pairs > total) throw new Error('the posting lists hold more pairs than they announce')
      const block = used
      arena[block] = -1
      arena[block + 1] = length
      lists.heads[id] = lists.tails[id] = block
      let key = 0
      for (let at = block + 2, end = block + 2 + length * 2; at < end; at += 2) {
        key += input.int()
        const value = input.uint()
        if (key < 0 || key >= keyLimit || value < minValue || value > maxValue) throw new Error('a posting is out of range')
        arena[at] = key
        arena[at + 1] = value
      }
      used = block + 2 + length * 2
    }
    if (pairs !== total) throw new Error('the posting lists hold fewer pairs than they announce')
    lists.arena = arena
    lists.used = used
    return lists
  }

  private allocate(size: number): number {
    if (this.used + size > this.arena.length) {
      const next = new Int32Array(Math.max(this.arena.length * 2, this.used + size))
      next.set(this.arena.subarray(0, this.used))
      this.arena = next
    }
    const at = this.used
    this.used += size
    return at
  }
}

/** Unsigned LEB128 varints (and zigzag signed ones) into a growing byte buffer. */
class ByteWriter {
  private bytes: Uint8Array
  length = 0
  constructor(capacity: number) {
    this.bytes = new Uint8Array(Math.max(64, capacity))
  }

  /** An integer from 0 to 2^32 - 1. */
  uint(value: number): void {
    if (this.length + 5 > this.bytes.length) this.bytes = grow(this.bytes, this.length + 5)
    const bytes = this.bytes
    while (value >= 0x80) {
      bytes[this.length++] = (value & 0x7f) | 0x80
      value >>>= 7
    }
    bytes[this.length++] = value
  }

  /** A 32-bit signed integer (zigzag: small magnitudes take one byte). */
  int(value: number): void {
    this.uint(((value << 1) ^ (value >> 31)) >>> 0)
  }

  /** A safe integer of any sign (zigzag, by arithmetic: millisecond times and their differences). */
  wide(value: number): void {
    let zigzag = value >= 0 ? value * 2 : -value * 2 - 1
    if (this.length + 9 > this.bytes.length) this.bytes = grow(this.bytes, this.length + 9)
    while (zigzag >= 0x80) {
      this.bytes[this.length++] = (zigzag % 0x80) | 0x80
      zigzag = Math.floor(zigzag / 0x80)
    }
    this.bytes[this.length++] = zigzag
  }

  base64(): string {
    return toBase64(this.bytes.subarray(0, this.length))
  }
}

/** Reads what {@link ByteWriter} wrote; every read past the end or of an over-long varint throws. */
class ByteReader {
  private at = 0
  constructor(private readonly bytes: Uint8Array) {}

  uint(): number {
    const bytes = this.bytes
    if (this.at >= bytes.length) throw new Error('the index data ends early')
    let byte = bytes[this.at++]!
    if (byte < 0x80) return byte
    let value = byte & 0x7f
    let scale = 0x80
    for (;;) {
      if (this.at >= bytes.length) throw new Error('the index data ends early')
      byte = bytes[this.at++]!
      value += (byte & 0x7f) * scale
      if (byte < 0x80) break
      scale *= 0x80
      if (scale > 0x10000000) throw new Error('the index data holds an over-long number')
    }
    if (value > 0xffffffff) throw new Error('the index data holds an over-long number')
    return value
  }

  int(): number {
    const zigzag = this.uint()
    return (zigzag >>> 1) ^ -(zigzag & 1)
  }

  wide(): number {
    let zigzag = 0
    let scale = 1
    for (;;) {
      if (this.at >= this.bytes.length) throw new Error('the index data ends early')
      const byte = this.bytes[this.at++]!
      zigzag += (byte & 0x7f) * scale
      if (byte < 0x80) break
      scale *= 0x80
      if (scale > 2 ** 56) throw new Error('the index data holds an over-long number')
    }
    if (zigzag > Number.MAX_SAFE_INTEGER) throw new Error('the index data holds an over-long number')
    return zigzag % 2 === 0 ? zigzag / 2 : -(zigzag + 1) / 2
  }

  remaining(): number {
    return this.bytes.length - this.at
  }
}

const NodeBuffer = (globalThis as { Buffer?: { from(data: ArrayBufferLike | string, offsetOrEncoding?: number | 'base64', length?: number): Uint8Array & { toString(encoding: 'base64'): string } } }).Buffer

function toBase64(bytes: Uint8Array): string {
  if (NodeBuffer) return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64')
  let binary = ''
  for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000))
  return btoa(binary)
}

function fromBase64(text: string): Uint8Array {
  if (NodeBuffer) return NodeBuffer.from(text, 'base64')
  const binary = atob(text)
  const bytes = new Uint8Array(binary.length)
  for (let at = 0; at < binary.length; at++) bytes[at] = binary.charCodeAt(at)
  return bytes
}

function grow<T extends Int32Array | Uint32Array | Float64Array | Uint8Array>(array: T, minimum: number): T {
  const next = new (array.constructor as new (length: number) => T)(Math.max(minimum, array.length * 2))
  next.set(array)
  return next
}

// Letters, digits and marks: the characters of a "run" (text.ts's forEachTokenAndRun gives a
// text's runs). An occurrence of a query made only of them lies inside one run of the lower-cased
// text, so the substring rule can be answered from the runs alone.
const RUN = /[\p{L}\p{N}\p{M}]+/gu
const ONLY_RUN = /^[\p{L}\p{N}\p{M}]+$/u

// Scratch shared by every index (searches are synchronous): per-slot scores and stamps.
let scratchScores = new Float64Array(1024)
let scratchStamps = new Int32Array(1024)
let scratchStamp = 0
function scratchFor(slots: number): number {
  if (slots > scratchScores.length) {
    scratchScores = new Float64Array(Math.max(slots, scratchScores.length * 2))
    scratchStamps = new Int32Array(scratchScores.length)
    scratchStamp = 0
  }
  if (++scratchStamp >= 0x7fffffff) {
    scratchStamps.fill(0)
    scratchStamp = 1
  }
  return scratchStamp
}

// Recent runs of any index -> run id, direct-mapped (searches and updates are synchronous, so
// indexes can share it: each entry carries the tag of the index that wrote it).
const HOT_RUN_MASK = 4095
const hotRunTexts: Array<string | undefined> = new Array<string | undefined>(HOT_RUN_MASK + 1).fill(undefined)
const hotRunIds = new Int32Array(HOT_RUN_MASK + 1)
const hotRunTags = new Float64Array(HOT_RUN_MASK + 1)
let hotRunOwners = 0

/** Highest term frequency a posting stores inline; larger counts live in a side map. */
const TF_INLINE_MAX = 0x3ff

/**
 * Creates an empty {@link MemorySearchIndex} with ranked search (issue 7).
 *
 * Ranked mode (the default):
 * - terms come from {@link tokenize} (stemmed, accent-folded, stop-words dropped, CJK bigrams) of
 *   the title, content and tags; a query is tokenized the same way;
 * - score = BM25F: per query term, `idf × tf' × (k1 + 1) / (tf' + k1)` with
 *   `tf' = Σ weight(field) × tf(field) / (1 − b + b × len(field) / avgLen(field))` and
 *   `idf = ln(1 + (N − n + 0.5) / (n + 0.5))` over the partition's active records (`avgLen` over
 *   the records where the field is not empty);
 * - every record the substring rule ({@link searchRecords}) returns for the same query and
 *   filters is returned too (ranking adds recall, never removes it): the substring rule's top
 *   `limit` are kept and the remaining places go to the best-ranked other records; a record found
 *   only by the substring rule scores 0 and comes after ranked ones;
 * - filters (`kinds`, `tags`, `after`, `before`) apply before the limit; ties go to the newest;
 *   only active records are indexed, so superseded and deleted records never appear;
 * - each hit has a `snippet` around its best match.
 *
 * Layout (issue 3, "Benchmark": search and memory targets): records are numbered slots; term
 * postings and "run" postings (runs = maximal letter/digit/mark sequences of the lower-cased
 * fields, with their occurrence counts) are int32 pairs in shared arenas; a removed record's slot
 * is a tombstone skipped by searches and dropped when the index is rebuilt (once tombstones
 * outnumber live records). No per-record term maps and no lower-case copies of text are kept: a
 * removal tokenizes the old record again. The substring rule is answered exactly from the runs: a
 * query of letters and digits only is found in the runs that contain it (a trigram index over the
 * run vocabulary finds them), its score per record is the sum over those runs of occurrences ×
 * run count; any other query is verified against the text of the records holding its rarest run.
 *
 * Cost: `update` is lazy (a replay only notes the latest state; the partition is indexed on its
 * first search); indexing a record is proportional to its length; a search visits the postings
 * of the query's terms and of the runs containing the query, and keeps the top `limit` with a
 * bounded heap (candidates below the heap's floor are dropped before the filters run).
 */
export function createSearchIndex(options: MemorySearchIndexOptions = {}): MemorySearchIndex {
  return searchIndex(options)
}

/**
 * The index a {@link MemorySearchIndexSnapshot} was taken of (`snapshot()` of a
 * {@link createSearchIndex} index), over `records`: the partition's records in creation order,
 * any status (the snapshot's record numbers point into it). It answers every search as the index
 * it was taken of, and takes later updates the same way; `options` must be the ones that index had.
 * Cost: proportional to the snapshot's size (nothing is tokenized).
 *
 * @throws Error when the snapshot is malformed, of another {@link searchIndexFormat}, or does not
 * index exactly the active records of `records`.
 */
export function restoreSearchIndex(snapshot: unknown, records: readonly MemoryRecord[], options: MemorySearchIndexOptions = {}): MemorySearchIndex {
  return searchIndex(options, { snapshot, records })
}

const SNAPSHOT_VERSION = 1
// Text that exercises every tokenizer rule: a snapshot taken under other tokenization is not restored.
const TOKENIZER_PROBE = "Caroline's PAINTINGS, café Naïve ｆｕｌｌ-width 東京都 iPhone用 カタカナー 한국어 3.5 2023 running hopped generously relational roadtrip don't we've O'Neil ß ﬁ Ωmega"
let snapshotFormat: string | undefined

/**
 * The format of index snapshots this code writes and restores: a version and a checksum of how the
 * tokenizer (text.ts) and the run rule split a probe text and which words are stop-words, so that
 * a change of tokenization makes old snapshots stale instead of wrong.
 */
export function searchIndexFormat(): string {
  if (snapshotFormat === undefined) {
    const parts: string[] = [[...ENGLISH_STOP_WORDS].sort().join(' ')]
    for (const { surface, term } of tokenizeWords(TOKENIZER_PROBE)) parts.push(`${surface}>${term}`)
    forEachTokenAndRun(TOKENIZER_PROBE, { word: run => parts.push(`w:${run}`), run: run => parts.push(`r:${run}`), surface: surface => parts.push(`s:${surface}`) })
    snapshotFormat = `${SNAPSHOT_VERSION}:${hash53(parts.join('\n'))}`
  }
  return snapshotFormat
}


function searchIndex(options: MemorySearchIndexOptions, restoreFrom?: { snapshot: unknown; records: readonly MemoryRecord[] }): MemorySearchIndex {
  const weights = [
    options.fieldWeights?.title ?? DEFAULT_SEARCH_INDEX_OPTIONS.fieldWeights.title,
    options.fieldWeights?.content ?? DEFAULT_SEARCH_INDEX_OPTIONS.fieldWeights.content,
    options.fieldWeights?.tags ?? DEFAULT_SEARCH_INDEX_OPTIONS.fieldWeights.tags,
  ] as const
  const feedback = { ...DEFAULT_SEARCH_INDEX_OPTIONS.feedback, ...options.feedback }
  const k1 = options.k1 ?? DEFAULT_SEARCH_INDEX_OPTIONS.k1
  const b = options.b ?? DEFAULT_SEARCH_INDEX_OPTIONS.b

  // Slots: one per indexed record state, in indexing order.
  let slotRecords: Array<MemoryRecord | undefined> = []
  let slotPositions = new Int32Array(256)
  let slotCreated = new Float64Array(256)
  let slotLengths = new Uint32Array(256 * 3)
  let slotAlive = new Uint8Array(256)
  let slots = 0
  let live = 0
  let nextPosition = 0
  const slotOf = new Map<string, number>()
  const lengthSums = [0, 0, 0]
  // Records with a non-empty field: average lengths are over these (a missing title is no short title).
  const fieldCounts = [0, 0, 0]

  // Terms: id by text, live document frequency, postings of (slot, packed field counts).
  let termIds = new Map<string, number>()
  let termNames: string[] = []
  let termFrequency = new Int32Array(256)
  let termPostings = new PairLists()
  // Field counts above TF_INLINE_MAX: slot * 3 + field -> count (inline value is the maximum).
  let bigCounts = new Map<number, number>()
  // Runs: id by text, the texts, postings of (slot, occurrences), and a trigram index over them.
  let runIds = new Map<string, number>()
  let runTexts: string[] = []
  let runPostings = new PairLists()
  let trigramIds = new Map<string, number>()
  let trigramRuns = new PairLists()

  function resetAll(): void {
    slotRecords = []
    slotPositions = new Int32Array(256)
    slotCreated = new Float64Array(256)
    slotLengths = new Uint32Array(256 * 3)
    slotAlive = new Uint8Array(256)
    slots = 0
    live = 0
    slotOf.clear()
    lengthSums.fill(0)
    fieldCounts.fill(0)
    termIds = new Map()
    termNames = []
    termFrequency = new Int32Array(256)
    termPostings = new PairLists()
    bigCounts = new Map()
    runIds = new Map()
    runTexts = []
    runPostings = new PairLists()
    trigramIds = new Map()
    trigramRuns = new PairLists()
    surfaceIds = new Map()
    surfaceTerms = new Int32Array(256)
    surfaceLatin = new Uint8Array(256)
    surfaceCounts = new Int32Array(256)
    surfaceMarks = new Int32Array(256)
    surfaceMark = 0
  }

  // Per-record scratch, marked with `tokenMark` (no map per record): the record's distinct term
  // ids in first-use order with their slot in `recordTermCounts` (3 field counts each), and its
  // distinct run ids in first-use order with their occurrences.
  const recordTermIds: number[] = []
  const recordTermCounts: number[] = []
  let termMarks = new Int32Array(16)
  let termLocals = new Int32Array(16)
  const recordRunIds: number[] = []
  let runMarks = new Int32Array(16)
  // One mark per tokenized record, never reset with the index (marks of older records stay below it).
  let tokenMark = 0
  let runCounts = new Int32Array(16)
  // Run id -> what the run is as a token: 0 not known yet, 1 a stop-word, else surface id + 2.
  // Valid for the runIds/surfaceIds maps it was filled from (reset when either is replaced).
  let runSurfaces = new Int32Array(16)
  // This index's tag in the shared cache of recent runs (a new one whenever runIds is replaced).
  let hotRunOwner = ++hotRunOwners

  // Surface words (tokens as written, folded) -> id, with their term id, whether they are plain
  // Latin words, and for those how many live records hold them (the fuzzy-match vocabulary).
  let surfaceIds = new Map<string, number>()
  let surfaceTerms = new Int32Array(256)
  let surfaceLatin = new Uint8Array(256)
  let surfaceCounts = new Int32Array(256)
  let surfaceMarks = new Int32Array(256)
  let surfaceMark = 0
  let runSurfacesOf: [Map<string, number>, Map<string, number>] = [runIds, surfaceIds]
  const recordSurfaces: number[] = []
  const tokenLengths: [number, number, number] = [0, 0, 0]
  let tokenField = 0
  let tokenCreates = true
  let tokenRuns = true

  /** The id of `surface` (a token's folded word, not a stop-word), made when `tokenCreates`; -1 when unknown. */
  function surfaceIdOf(surface: string): number {
    let sid = surfaceIds.get(surface)
    if (sid === undefined) {
      if (!tokenCreates) return -1
      const term = stemWord(surface)
      let id = termIds.get(term)
      if (id === undefined) {
        id = termIds.size
        termIds.set(term, id)
        termNames.push(term)
        termPostings.create()
        if (id >= termFrequency.length) termFrequency = grow(termFrequency, id + 1)
      }
      sid = surfaceIds.size
      surfaceIds.set(surface, sid)
      if (sid >= surfaceTerms.length) {
        surfaceTerms = grow(surfaceTerms, sid + 1)
        surfaceLatin = grow(surfaceLatin, sid + 1)
        surfaceCounts = grow(surfaceCounts, sid + 1)
        surfaceMarks = grow(surfaceMarks, sid + 1)
      }
      surfaceTerms[sid] = id
      surfaceLatin[sid] = LATIN_SURFACE.test(surface) ? 1 : 0
    }
    return sid
  }

  /** Counts one token of surface `sid` in the current field of the record being tokenized. */
  function countSurface(sid: number): void {
    const id = surfaceTerms[sid]!
    if (id >= termMarks.length) {
      termMarks = grow(termMarks, id + 1)
      termLocals = grow(termLocals, id + 1)
    }
    let local: number
    if (termMarks[id] !== tokenMark) {
      termMarks[id] = tokenMark
      termLocals[id] = local = recordTermCounts.length
      recordTermIds.push(id)
      recordTermCounts.push(0, 0, 0)
    }
    else local = termLocals[id]!
    recordTermCounts[local + tokenField]!++
    tokenLengths[tokenField]!++
    if (surfaceLatin[sid] === 1 && surfaceMarks[sid] !== surfaceMark) {
      surfaceMarks[sid] = surfaceMark
      recordSurfaces.push(sid)
    }
  }

  /** Counts one occurrence of run `id` in the record being tokenized. */
  function countRun(id: number): void {
    if (id >= runMarks.length) {
      runMarks = grow(runMarks, id + 1)
      runCounts = grow(runCounts, id + 1)
    }
    if (runMarks[id] !== tokenMark) {
      runMarks[id] = tokenMark
      runCounts[id] = 1
      recordRunIds.push(id)
    }
    else runCounts[id]!++
  }

  /** A surface word that is not a whole run (or any word without runs): looked up by itself. */
  function visitSurface(surface: string): void {
    const sid = surfaceIdOf(surface)
    if (sid !== -1) countSurface(sid)
  }

  // One visitor for every record and field (no closure per record or field).
  const tokenVisitor: TokenAndRunVisitor = {
    word(run) {
      // A whole run that is a token: one lookup of the run gives both (most words of ASCII text).
      const id = tokenRuns ? runId(run) : knownRunId(run)
      if (id === undefined) {
        if (!ENGLISH_STOP_WORDS.has(run)) visitSurface(run)
        return
      }
      if (tokenRuns) countRun(id)
      if (id >= runSurfaces.length) runSurfaces = grow(runSurfaces, id + 1)
      let known = runSurfaces[id]!
      if (known === 0) {
        if (ENGLISH_STOP_WORDS.has(run)) known = 1
        else {
          const sid = surfaceIdOf(run)
          if (sid === -1) return
          known = sid + 2
        }
        runSurfaces[id] = known
      }
      if (known !== 1) countSurface(known - 2)
    },
    run(run) {
      if (tokenRuns) countRun(runId(run))
    },
    surface: visitSurface,
  }

  /**
   * Tokenizes `record` into the scratch (`recordTermIds`/`recordTermCounts`, `recordRunIds`/`runCounts`
   * when `withRuns`, `recordSurfaces`); returns its field lengths. `createTerms: false` for a record
   * already indexed (every word is known).
   */
  function tokenizeRecord(record: MemoryRecord, withRuns: boolean, createTerms: boolean): [number, number, number] {
    recordTermIds.length = 0
    recordTermCounts.length = 0
    recordRunIds.length = 0
    recordSurfaces.length = 0
    if (++surfaceMark >= 0x7fffffff) {
      surfaceMarks.fill(0)
      surfaceMark = 1
    }
    if (++tokenMark >= 0x7fffffff) {
      termMarks.fill(0)
      runMarks.fill(0)
      tokenMark = 1
    }
    if (runSurfacesOf[0] !== runIds || runSurfacesOf[1] !== surfaceIds) {
      runSurfaces = new Int32Array(16)
      hotRunOwner = ++hotRunOwners
      runSurfacesOf = [runIds, surfaceIds]
    }
    tokenLengths[0] = tokenLengths[1] = tokenLengths[2] = 0
    tokenCreates = createTerms
    tokenRuns = withRuns
    const tags = searchableTags(record)
    for (let field = 0; field < 3; field++) {
      const text = field === 0 ? record.title ?? '' : field === 1 ? searchableContent(record) : tags.length === 0 ? '' : tags.join(' \n ')
      if (text === '') continue
      tokenField = field
      forEachTokenAndRun(text, tokenVisitor)
    }
    return [tokenLengths[0], tokenLengths[1], tokenLengths[2]]
  }

  /** The slot of term `id` in `recordTermCounts` for the record last tokenized, else `undefined`. */
  function recordTermLocal(id: number): number | undefined {
    return termMarks[id] === tokenMark ? termLocals[id] : undefined
  }

  /** The term of an indexed plain Latin surface word held by a live record, else `undefined`. */
  function latinSurface(word: string): string | undefined {
    const sid = surfaceIds.get(word)
    return sid === undefined || surfaceLatin[sid] === 0 || surfaceCounts[sid] === 0 ? undefined : termNames[surfaceTerms[sid]!]
  }

  /** The id of an indexed run, else `undefined` (a small direct-mapped cache before the map: words repeat). */
  function knownRunId(run: string): number | undefined {
    const length = run.length
    const hot = (length * 40503 + run.charCodeAt(0) * 31 + run.charCodeAt(length - 1) * 977 + run.charCodeAt(length >> 1) * 7919) & HOT_RUN_MASK
    if (hotRunTags[hot] === hotRunOwner && hotRunTexts[hot] === run) return hotRunIds[hot]
    const id = runIds.get(run)
    if (id !== undefined) {
      hotRunTags[hot] = hotRunOwner
      hotRunTexts[hot] = run
      hotRunIds[hot] = id
    }
    return id
  }

  function runId(run: string): number {
    let id = knownRunId(run)
    if (id === undefined) {
      id = runTexts.length
      runIds.set(run, id)
      runTexts.push(run)
      runPostings.create()
      // Each distinct trigram of the run once (short runs: an earlier occurrence is found by indexOf).
      const seen = run.length > 64 ? new Set<string>() : undefined
      for (let at = 0; at + 3 <= run.length; at++) {
        const gram = run.slice(at, at + 3)
        if (seen) {
          if (seen.has(gram)) continue
          seen.add(gram)
        }
        else if (at > 0 && run.indexOf(gram) < at) continue
        let gramId = trigramIds.get(gram)
        if (gramId === undefined) {
          trigramIds.set(gram, gramId = trigramIds.size)
          trigramRuns.create()
        }
        trigramRuns.push(gramId, id, 0)
      }
    }
    return id
  }

  function add(record: MemoryRecord, position: number): void {
    const lengths = tokenizeRecord(record, true, true)
    const slot = slots++
    if (slot >= slotAlive.length) {
      slotPositions = grow(slotPositions, slot + 1)
      slotCreated = grow(slotCreated, slot + 1)
      slotLengths = grow(slotLengths, (slot + 1) * 3)
      slotAlive = grow(slotAlive, slot + 1)
    }
    slotRecords[slot] = record
    slotPositions[slot] = position
    slotCreated[slot] = parseInstant(record.createdAt) ?? Number.NaN
    slotAlive[slot] = 1
    slotOf.set(record.id, slot)
    live++
    for (let field = 0; field < 3; field++) {
      const length = lengths[field]!
      slotLengths[slot * 3 + field] = length
      lengthSums[field]! += length
      if (length > 0) fieldCounts[field]!++
    }
    for (const term of recordTermIds) {
      const local = termLocals[term]!
      let packed = 0
      for (let field = 0; field < 3; field++) {
        let count = recordTermCounts[local + field]!
        if (count >= TF_INLINE_MAX) {
          bigCounts.set(slot * 3 + field, count)
          count = TF_INLINE_MAX
        }
        packed |= count << (field * 10)
      }
      termPostings.push(term, slot, packed)
      termFrequency[term]!++
    }
    for (const run of recordRunIds) runPostings.push(run, slot, runCounts[run]!)
    for (const sid of recordSurfaces) surfaceCounts[sid]!++
  }

  /** Tombstones the slot of record `id` (its statistics are taken back by tokenizing it again). */
  function remove(id: string): number | undefined {
    const slot = slotOf.get(id)
    if (slot === undefined) return undefined
    slotOf.delete(id)
    const record = slotRecords[slot]!
    tokenizeRecord(record, false, false)
    for (const term of recordTermIds) termFrequency[term]!--
    for (let field = 0; field < 3; field++) {
      const length = slotLengths[slot * 3 + field]!
      lengthSums[field]! -= length
      if (length > 0) fieldCounts[field]!--
    }
    for (const sid of recordSurfaces) surfaceCounts[sid]!--
    slotAlive[slot] = 0
    slotRecords[slot] = undefined
    live--
    return slotPositions[slot]
  }

  /** Drops tombstones: indexes the live records again, in slot order, keeping their positions. */
  function rebuild(): void {
    const kept: Array<[MemoryRecord, number]> = []
    for (let slot = 0; slot < slots; slot++) if (slotAlive[slot]) kept.push([slotRecords[slot]!, slotPositions[slot]!])
    resetAll()
    for (const [record, position] of kept) add(record, position)
  }

  function fieldCount(packed: number, slot: number, field: number): number {
    const count = (packed >>> (field * 10)) & TF_INLINE_MAX
    return count === TF_INLINE_MAX ? bigCounts.get(slot * 3 + field)! : count
  }

  const blockScratch: number[] = []

  /**
   * The substring rule over the index: the top `limit` of {@link searchRecords} on the active
   * records (same scores, filters and order).
   */
  function substringSearch(checked: CheckedQuery): Array<{ slot: number; score: number }> {
    const needle = checked.needle
    const top = new TopK<{ slot: number; score: number }>(checked.limit, compareSlots)
    const stamp = scratchFor(slots)
    const scores = scratchScores
    const stamps = scratchStamps
    const touched: number[] = []
    if (ONLY_RUN.test(needle)) {
      // Every occurrence lies inside one run: score = Σ over runs containing the needle of
      // (occurrences in the run × the run's count in the record).
      forEachRunContaining(needle, (run, occurrences) => {
        const data = runPostings.data
        const ranges = runPostings.blocks(run, blockScratch)
        for (let range = 0; range < ranges.length; range += 2) {
          for (let at = ranges[range]!, end = ranges[range + 1]!; at < end; at += 2) {
            const slot = data[at]!
            if (slotAlive[slot] === 0) continue
            const points = occurrences * data[at + 1]!
            if (stamps[slot] !== stamp) {
              stamps[slot] = stamp
              scores[slot] = points
              touched.push(slot)
            }
            else scores[slot]! += points
          }
        }
      })
      // Newest first: ties go to the newer record, so older equal scores then fail the floor check
      // instead of each entering the heap (a common word has thousands of equal-score holders).
      for (let index = touched.length - 1; index >= 0; index--) offer(top, touched[index]!, scores[touched[index]!]!, checked)
      return top.sorted()
    }
    // Other queries: verify against the text of the records holding the needle's rarest run (or
    // of every record when the needle has no letter or digit).
    const pieces = [...needle.matchAll(RUN)].map(match => match[0])
    let candidates: number[] | undefined
    for (const piece of pieces) {
      const holders: number[] = []
      const pieceStamp = scratchFor(slots)
      forEachRunContaining(piece, (run) => {
        runPostings.forEach(run, (slot) => {
          if (slotAlive[slot] !== 0 && scratchStamps[slot] !== pieceStamp) {
            scratchStamps[slot] = pieceStamp
            holders.push(slot)
          }
        })
      })
      if (!candidates || holders.length < candidates.length) candidates = holders
      if (candidates.length === 0) break
    }
    const visit = (slot: number) => {
      const record = slotRecords[slot]!
      const score = substringScore(record, needle)
      if (score > 0) offer(top, slot, score, checked)
    }
    if (candidates) for (let index = candidates.length - 1; index >= 0; index--) visit(candidates[index]!)
    else for (let slot = slots - 1; slot >= 0; slot--) if (slotAlive[slot] !== 0) visit(slot)
    return top.sorted()
  }

  function offer(top: TopK<{ slot: number; score: number }>, slot: number, score: number, checked: CheckedQuery): void {
    // The heap's floor first: most candidates of a common word never reach the filters.
    if (top.capacity <= 0) return
    const floor = top.floor()
    if (floor && !(score > floor.score || (score === floor.score && (slotCreated[slot]! - slotCreated[floor.slot]! || slotPositions[slot]! - slotPositions[floor.slot]!) > 0))) return
    if (passesFilters(slotRecords[slot]!, slotCreated[slot]!, checked)) top.push({ slot, score })
  }

  function compareSlots(a: { slot: number; score: number }, c: { slot: number; score: number }): number {
    return a.score - c.score || slotCreated[a.slot]! - slotCreated[c.slot]! || slotPositions[a.slot]! - slotPositions[c.slot]!
  }

  /** Calls `visit(run, occurrences)` for every indexed run that contains `piece` (lower case, non-empty). */
  function forEachRunContaining(piece: string, visit: (run: number, occurrences: number) => void): void {
    const check = (run: number) => {
      const occurrences = countLower(runTexts[run]!, piece)
      if (occurrences > 0) visit(run, occurrences)
    }
    if (piece.length < 3) {
      for (let run = 0; run < runTexts.length; run++) check(run)
      return
    }
    // The rarest trigram of the piece: every run holding the piece holds it.
    let rarest = -1
    for (let at = 0; at + 3 <= piece.length; at++) {
      const gram = trigramIds.get(piece.slice(at, at + 3))
      if (gram === undefined) return
      if (rarest === -1 || trigramRuns.length(gram) < trigramRuns.length(rarest)) rarest = gram
    }
    trigramRuns.forEach(rarest, check)
  }

  function substringScore(record: MemoryRecord, needle: string): number {
    let score = countLower((record.title ?? '').toLowerCase(), needle) + countLower(searchableContent(record).toLowerCase(), needle)
    for (const tag of searchableTags(record)) score += countLower(tag.toLowerCase(), needle)
    return score
  }

  /**
   * Query terms with weights: each known term once (weight 1); a word the partition never uses is
   * matched to indexed words one edit away (two for words of 8+ letters), or split into two
   * indexed words when it was written together ("roadtrip" -> "road", "trip").
   */
  function queryTerms(text: string): Map<string, number> {
    const weighted = new Map<string, number>()
    const add = (term: string, weight: number) => weighted.set(term, Math.max(weighted.get(term) ?? 0, weight))
    for (const { surface, term } of tokenizeWords(text)) {
      const id = termIds.get(term)
      if ((id !== undefined && termFrequency[id]! > 0) || !LATIN_SURFACE.test(surface) || surface.length < 4) {
        add(term, 1)
        continue
      }
      let found = false
      for (let cut = 3; cut <= surface.length - 3; cut++) {
        const left = latinSurface(surface.slice(0, cut))
        const right = left === undefined ? undefined : latinSurface(surface.slice(cut))
        if (left !== undefined && right !== undefined) {
          add(left, 1)
          add(right, 1)
          found = true
          break
        }
      }
      if (found) continue
      const max = surface.length >= 8 ? 2 : 1
      let best = max + 1
      let matches: string[] = []
      for (const [word, sid] of surfaceIds) {
        if (surfaceLatin[sid] === 0 || surfaceCounts[sid] === 0) continue
        const term = termNames[surfaceTerms[sid]!]!
        const distance = editDistance(surface, word, Math.min(max, best))
        if (distance > max) continue
        if (distance < best) {
          best = distance
          matches = [term]
        }
        else if (distance === best) matches.push(term)
      }
      for (const match of matches) add(match, FUZZY_WEIGHT)
    }
    return weighted
  }

  /** BM25F over the live slots; scores land in the shared scratch under the returned stamp. */
  function rank(terms: ReadonlyMap<string, number>): { stamp: number; touched: number[] } {
    const stamp = scratchFor(slots)
    const touched: number[] = []
    if (live === 0) return { stamp, touched }
    const scores = scratchScores
    const stamps = scratchStamps
    const average = lengthSums.map((sum, field) => Math.max(sum / Math.max(fieldCounts[field]!, 1), 1e-9))
    const [w0, w1, w2] = weights
    const [a0, a1, a2] = [b / average[0]!, b / average[1]!, b / average[2]!]
    const base = 1 - b
    const lengths = slotLengths
    for (const [term, weight] of terms) {
      const id = termIds.get(term)
      if (id === undefined) continue
      const frequency = termFrequency[id]!
      if (frequency === 0) continue
      const idf = weight * Math.log(1 + (live - frequency + 0.5) / (frequency + 0.5))
      const data = termPostings.data
      const ranges = termPostings.blocks(id, blockScratch)
      for (let range = 0; range < ranges.length; range += 2) {
        for (let at = ranges[range]!, end = ranges[range + 1]!; at < end; at += 2) {
          const slot = data[at]!
          if (slotAlive[slot] === 0) continue
          const packed = data[at + 1]!
          const c0 = packed & TF_INLINE_MAX
          const c1 = (packed >>> 10) & TF_INLINE_MAX
          const c2 = (packed >>> 20) & TF_INLINE_MAX
          let tf: number
          if (c0 === TF_INLINE_MAX || c1 === TF_INLINE_MAX || c2 === TF_INLINE_MAX) {
            const f0 = fieldCount(packed, slot, 0)
            const f1 = fieldCount(packed, slot, 1)
            const f2 = fieldCount(packed, slot, 2)
            tf = (f0 === 0 ? 0 : w0 * f0 / (base + a0 * lengths[slot * 3]!))
              + (f1 === 0 ? 0 : w1 * f1 / (base + a1 * lengths[slot * 3 + 1]!))
              + (f2 === 0 ? 0 : w2 * f2 / (base + a2 * lengths[slot * 3 + 2]!))
          }
          else {
            tf = (c0 === 0 ? 0 : w0 * c0 / (base + a0 * lengths[slot * 3]!))
              + (c1 === 0 ? 0 : w1 * c1 / (base + a1 * lengths[slot * 3 + 1]!))
              + (c2 === 0 ? 0 : w2 * c2 / (base + a2 * lengths[slot * 3 + 2]!))
          }
          const points = idf * tf * (k1 + 1) / (tf + k1)
          if (stamps[slot] !== stamp) {
            stamps[slot] = stamp
            scores[slot] = points
            touched.push(slot)
          }
          else scores[slot]! += points
        }
      }
    }
    return { stamp, touched }
  }

  /** The BM25F score {@link rank} gives `slot` (same terms, same order of additions), from the record's own tokens. */
  function scoreSlot(terms: ReadonlyMap<string, number>, slot: number): number {
    if (live === 0) return 0
    tokenizeRecord(slotRecords[slot]!, false, false)
    const average = lengthSums.map((sum, field) => Math.max(sum / Math.max(fieldCounts[field]!, 1), 1e-9))
    const [w0, w1, w2] = weights
    const [a0, a1, a2] = [b / average[0]!, b / average[1]!, b / average[2]!]
    const base = 1 - b
    const lengths = slotLengths
    let score = 0
    let scored = false
    for (const [term, weight] of terms) {
      const id = termIds.get(term)
      if (id === undefined) continue
      const frequency = termFrequency[id]!
      if (frequency === 0) continue
      const local = recordTermLocal(id)
      if (local === undefined) continue
      const idf = weight * Math.log(1 + (live - frequency + 0.5) / (frequency + 0.5))
      const f0 = recordTermCounts[local]!
      const f1 = recordTermCounts[local + 1]!
      const f2 = recordTermCounts[local + 2]!
      const tf = (f0 === 0 ? 0 : w0 * f0 / (base + a0 * lengths[slot * 3]!))
        + (f1 === 0 ? 0 : w1 * f1 / (base + a1 * lengths[slot * 3 + 1]!))
        + (f2 === 0 ? 0 : w2 * f2 / (base + a2 * lengths[slot * 3 + 2]!))
      const points = idf * tf * (k1 + 1) / (tf + k1)
      if (!scored) {
        score = points
        scored = true
      }
      else score += points
    }
    return score
  }

  /**
   * Pseudo-relevance feedback (RM3-style): the best `feedback.records` filtered records lend their
   * `feedback.terms` most telling terms (term share in the record × record score × idf) to a
   * second ranking, at `feedback.weight` of an original query term.
   */
  function withFeedback(terms: ReadonlyMap<string, number>, ranked: { stamp: number; touched: number[] }, checked: CheckedQuery): { stamp: number; touched: number[] } {
    const best = new TopK<[number, number]>(feedback.records, (a, c) => a[1] - c[1])
    for (const slot of ranked.touched) if (passesFilters(slotRecords[slot]!, slotCreated[slot]!, checked)) best.push([slot, scratchScores[slot]!])
    const top = best.sorted()
    if (top.length === 0) return ranked
    const maxScore = top[0]![1]
    const lent = new Map<string, number>()
    const names = termNames
    for (const [slot, score] of top) {
      const length = slotLengths[slot * 3]! + slotLengths[slot * 3 + 1]! + slotLengths[slot * 3 + 2]!
      tokenizeRecord(slotRecords[slot]!, false, false)
      for (const id of recordTermIds) {
        const local = termLocals[id]!
        const term = names[id]!
        if (terms.has(term)) continue
        const df = termFrequency[id]!
        if (df < 2) continue // a term of one record only brings back that record
        const idf = Math.log(1 + (live - df + 0.5) / (df + 0.5))
        const count = recordTermCounts[local]! + recordTermCounts[local + 1]! + recordTermCounts[local + 2]!
        lent.set(term, (lent.get(term) ?? 0) + count / length * score / maxScore * idf)
      }
    }
    const chosen = [...lent].sort((a, c) => c[1] - a[1]).slice(0, feedback.terms)
    if (chosen.length === 0) return ranked
    const strongest = chosen[0]![1]
    const expanded = new Map(terms)
    for (const [term, value] of chosen) expanded.set(term, feedback.weight * value / strongest)
    return rank(expanded)
  }

  // Updates are taken in lazily: a replay only notes each record's latest state here, and the
  // partition is indexed (in first-update order, so positions are the same) on its first search.
  let pending = new Map<string, MemoryRecord>()
  // Built: searched (flushed) once, or restored. Only a built index is worth a snapshot.
  let built = false
  function flush(): void {
    built = true
    if (pending.size === 0) return
    const batch = pending
    pending = new Map()
    for (const record of batch.values()) {
      const kept = remove(record.id)
      if (record.status === 'active') add(record, kept ?? nextPosition++)
    }
    if (slots - live > Math.max(1024, live)) rebuild()
  }

  function snapshot(recordNumber: (record: MemoryRecord) => number): MemorySearchIndexSnapshot | undefined {
    if (!built) return undefined
    flush()
    const out = new ByteWriter(slots * 32 + 1024)
    let previous = 0
    for (let slot = 0; slot < slots; slot++) {
      const number = slotAlive[slot] === 1 ? recordNumber(slotRecords[slot]!) + 1 : 0
      out.int(number - previous)
      previous = number
    }
    previous = 0
    for (let slot = 0; slot < slots; slot++) {
      out.int(slotPositions[slot]! - previous)
      previous = slotPositions[slot]!
    }
    for (let at = 0; at < slots * 3; at++) out.uint(slotLengths[at]!)
    // Creation times, as differences: parsing them again is most of a restore when scopes interleave.
    let timed = true
    for (let slot = 0; slot < slots && timed; slot++) timed = slotAlive[slot] === 0 || Number.isSafeInteger(slotCreated[slot]!)
    out.uint(timed ? 1 : 0)
    previous = 0
    for (let slot = 0; timed && slot < slots; slot++) {
      if (slotAlive[slot] === 0) {
        out.uint(0)
        continue
      }
      out.wide(slotCreated[slot]! - previous)
      previous = slotCreated[slot]!
    }
    termPostings.encode(out)
    runPostings.encode(out)
    trigramRuns.encode(out)
    const surfaceCount = surfaceIds.size
    for (let sid = 0; sid < surfaceCount; sid++) out.uint(surfaceTerms[sid]!)
    for (let sid = 0; sid < surfaceCount; sid++) out.uint(surfaceCounts[sid]!)
    out.uint(bigCounts.size)
    for (const [key, count] of bigCounts) {
      out.uint(key)
      out.uint(count)
    }
    return { format: searchIndexFormat(), slots, nextPosition, terms: termNames.slice(), runs: runTexts.slice(), trigrams: [...trigramIds.keys()], surfaces: [...surfaceIds.keys()], data: out.base64() }
  }

  /** Sets every structure from a snapshot (see {@link restoreSearchIndex}); derived figures are recomputed. */
  function restore(value: unknown, records: readonly MemoryRecord[]): void {
    const fail = (why: string): never => {
      throw new Error(`the search index snapshot ${why}`)
    }
    if (value === null || typeof value !== 'object') fail('is not an object')
    const snapshot = value as Partial<MemorySearchIndexSnapshot>
    if (snapshot.format !== searchIndexFormat()) fail(`has format ${JSON.stringify(snapshot.format)}, not ${searchIndexFormat()}`)
    const isCount = (count: unknown) => Number.isSafeInteger(count) && (count as number) >= 0 && (count as number) < 0x7fffffff
    if (!isCount(snapshot.slots) || !isCount(snapshot.nextPosition) || typeof snapshot.data !== 'string') fail('is malformed')
    const vocabulary = (list: unknown, name: string): { names: string[]; ids: Map<string, number> } => {
      if (!Array.isArray(list) || !list.every(item => typeof item === 'string')) return fail(`has no ${name} list`)
      const ids = new Map<string, number>()
      for (let id = 0; id < list.length; id++) ids.set(list[id] as string, id)
      if (ids.size !== list.length) fail(`repeats a ${name}`)
      return { names: list as string[], ids }
    }
    const terms = vocabulary(snapshot.terms, 'term')
    const runs = vocabulary(snapshot.runs, 'run')
    const trigrams = vocabulary(snapshot.trigrams, 'trigram')
    const surfaces = vocabulary(snapshot.surfaces, 'surface')
    const count = snapshot.slots!
    const input = new ByteReader(fromBase64(snapshot.data!))
    const capacity = Math.max(256, count)
    slotRecords = new Array<MemoryRecord | undefined>(count).fill(undefined)
    slotPositions = new Int32Array(capacity)
    slotCreated = new Float64Array(capacity)
    slotLengths = new Uint32Array(capacity * 3)
    slotAlive = new Uint8Array(capacity)
    slots = count
    live = 0
    nextPosition = snapshot.nextPosition!
    slotOf.clear()
    lengthSums.fill(0)
    fieldCounts.fill(0)
    let number = 0
    for (let slot = 0; slot < count; slot++) {
      number += input.int()
      if (number === 0) continue
      const record = number > 0 ? records[number - 1] : undefined
      if (record?.status !== 'active' || slotOf.has(record.id)) fail('does not match the records of its partition')
      slotRecords[slot] = record
      slotAlive[slot] = 1
      slotOf.set(record!.id, slot)
      live++
    }
    let active = 0
    for (const record of records) if (record.status === 'active') active++
    if (active !== live) fail('does not index every active record of its partition')
    let position = 0
    for (let slot = 0; slot < count; slot++) {
      position += input.int()
      if (slotAlive[slot] === 1 && !(position >= 0 && position < nextPosition)) fail('has a position out of range')
      slotPositions[slot] = position
    }
    for (let at = 0; at < count * 3; at++) {
      const length = input.uint()
      slotLengths[at] = length
      if (slotAlive[(at / 3) | 0] === 0) continue
      lengthSums[at % 3]! += length
      if (length > 0) fieldCounts[at % 3]!++
    }
    const timed = input.uint()
    if (timed > 1) fail('is malformed')
    let created = 0
    for (let slot = 0; slot < count; slot++) {
      if (timed === 1) {
        const difference = input.wide()
        if (slotAlive[slot] === 0) continue
        created += difference
      }
      else if (slotAlive[slot] === 0) continue
      slotCreated[slot] = timed === 1 ? created : parseInstant(slotRecords[slot]!.createdAt) ?? Number.NaN
    }
    termNames = terms.names
    termIds = terms.ids
    termPostings = PairLists.decode(input, termNames.length, count, 1, (1 << 30) - 1)
    runTexts = runs.names
    runIds = runs.ids
    runPostings = PairLists.decode(input, runTexts.length, count, 1, 0x7fffffff)
    trigramIds = trigrams.ids
    trigramRuns = PairLists.decode(input, trigramIds.size, runTexts.length, 0, 0)
    surfaceIds = surfaces.ids
    const surfaceCount = surfaces.names.length
    surfaceTerms = new Int32Array(Math.max(256, surfaceCount))
    surfaceLatin = new Uint8Array(surfaceTerms.length)
    surfaceCounts = new Int32Array(surfaceTerms.length)
    surfaceMarks = new Int32Array(surfaceTerms.length)
    surfaceMark = 0
    for (let sid = 0; sid < surfaceCount; sid++) {
      const term = input.uint()
      if (term >= termNames.length) fail('has a surface word of an unknown term')
      surfaceTerms[sid] = term
      surfaceLatin[sid] = LATIN_SURFACE.test(surfaces.names[sid]!) ? 1 : 0
    }
    for (let sid = 0; sid < surfaceCount; sid++) {
      const holders = input.uint()
      if (holders > live) fail('has a surface word held by more records than it indexes')
      surfaceCounts[sid] = holders
    }
    bigCounts = new Map()
    for (let entries = input.uint(); entries > 0; entries--) {
      const key = input.uint()
      const big = input.uint()
      if (key >= count * 3 || big < TF_INLINE_MAX) fail('has a field count out of range')
      bigCounts.set(key, big)
    }
    if (input.remaining() !== 0) fail('has data left over')
    // Live document frequency per term, from the postings of live slots.
    termFrequency = new Int32Array(Math.max(256, termNames.length))
    const data = termPostings.data
    for (let term = 0; term < termNames.length; term++) {
      let frequency = 0
      const ranges = termPostings.blocks(term, blockScratch)
      for (let range = 0; range < ranges.length; range += 2) {
        for (let at = ranges[range]!, end = ranges[range + 1]!; at < end; at += 2) {
          const slot = data[at]!
          if (slotAlive[slot] === 0) continue
          frequency++
          const packed = data[at + 1]!
          for (let field = 0; field < 3; field++) {
            if (((packed >>> (field * 10)) & TF_INLINE_MAX) === TF_INLINE_MAX && !bigCounts.has(slot * 3 + field)) fail('lacks a large field count')
          }
        }
      }
      termFrequency[term] = frequency
    }
    built = true
  }

  if (restoreFrom) restore(restoreFrom.snapshot, restoreFrom.records)

  return {
    snapshot,
    get size() {
      flush()
      return live
    },
    get built() {
      return built
    },
    update(record) {
      pending.set(record.id, record)
    },
    search(query) {
      const checked = checkQuery(query)
      flush()
      if (query.mode === 'substring') return substringSearch(checked).map(({ slot, score }) => ({ record: slotRecords[slot]!, score }))
      // The substring rule's top `limit` first (it uses the score scratch), then the ranking.
      const guaranteed = substringSearch(checked)
      const kept = new Set(guaranteed.map(hit => hit.slot))
      const terms = queryTerms(query.query)
      const scoreOf = new Map<number, number>()
      const top = new TopK<{ slot: number; score: number }>(checked.limit - kept.size, compareSlots)
      if (kept.size >= checked.limit && !(feedback.records > 0 && feedback.terms > 0 && feedback.weight > 0)) {
        // No place left for ranked-only records: score just the kept ones.
        for (const slot of kept) scoreOf.set(slot, scoreSlot(terms, slot))
      }
      else {
        let ranked = rank(terms)
        if (feedback.records > 0 && feedback.terms > 0 && feedback.weight > 0) ranked = withFeedback(terms, ranked, checked)
        const scores = scratchScores
        // Newest first, as in substringSearch: equal scores then stop at the heap's floor.
        for (let index = ranked.touched.length - 1; index >= 0; index--) {
          const slot = ranked.touched[index]!
          const score = scores[slot]!
          if (kept.has(slot)) {
            scoreOf.set(slot, score)
            continue
          }
          offer(top, slot, score, checked)
        }
      }
      const merged = [...top.sorted(), ...guaranteed.map(({ slot }) => ({ slot, score: scoreOf.get(slot) ?? 0 }))]
      merged.sort((a, c) => compareSlots(c, a))
      const wanted = new Set(terms.keys())
      return merged.map(({ slot, score }) => ({ record: slotRecords[slot]!, score: Math.round(score * 1e4) / 1e4, snippet: snippetOf(slotRecords[slot]!.content, wanted, checked.needle) }))
    },
  }
}

/** Weight of a query term reached through a corrected spelling. */
const FUZZY_WEIGHT = 0.8

function countLower(haystack: string, needle: string): number {
  if (haystack.length === 0) return 0
  let count = 0
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count++
  return count
}

/** Keeps the `capacity` greatest items under `compare` (a min-heap); `sorted()` gives them greatest first. */
class TopK<T> {
  private readonly heap: T[] = []
  constructor(readonly capacity: number, private readonly compare: (a: T, b: T) => number) {}

  push(item: T): void {
    if (this.capacity <= 0) return
    const heap = this.heap
    if (heap.length < this.capacity) {
      heap.push(item)
      let at = heap.length - 1
      while (at > 0) {
        const parent = (at - 1) >> 1
        if (this.compare(heap[at]!, heap[parent]!) >= 0) break
        const swap = heap[at]!
        heap[at] = heap[parent]!
        heap[parent] = swap
        at = parent
      }
      return
    }
    if (this.compare(item, heap[0]!) <= 0) return
    heap[0] = item
    let at = 0
    for (;;) {
      const left = 2 * at + 1
      const right = left + 1
      let least = at
      if (left < heap.length && this.compare(heap[left]!, heap[least]!) < 0) least = left
      if (right < heap.length && this.compare(heap[right]!, heap[least]!) < 0) least = right
      if (least === at) break
      const swap = heap[at]!
      heap[at] = heap[least]!
      heap[least] = swap
      at = least
    }
  }

  /** The least kept item once the heap is full (an item must beat it to enter), else `undefined`. */
  floor(): T | undefined {
    return this.heap.length >= this.capacity ? this.heap[0] : undefined
  }

  sorted(): T[] {
    return [...this.heap].sort((a, b) => this.compare(b, a))
  }
}

/** Longest snippet, in code points. */
export const SNIPPET_CODE_POINTS = 160

const SNIPPET_WORD = /[\p{L}\p{N}\p{M}]+/gu

/**
 * Up to {@link SNIPPET_CODE_POINTS} code points of `content` around the first word whose term is
 * in `terms` (or the first occurrence of `needle`), cut on code point boundaries, with `…` where
 * text was left out. Content that fits is returned whole.
 */
export function snippetOf(content: string, terms: ReadonlySet<string>, needle = ''): string {
  const points = Array.from(content)
  if (points.length <= SNIPPET_CODE_POINTS) return content
  let unitAt = -1
  for (const match of content.matchAll(SNIPPET_WORD)) {
    const folded = foldText(match[0])
    if (terms.has(stemWord(folded)) || [...terms].some(term => term.length > 1 && folded.includes(term) && /[^\p{Script=Latin}\p{N}]/u.test(term))) {
      unitAt = match.index
      break
    }
  }
  if (unitAt === -1 && needle !== '') unitAt = content.toLowerCase().indexOf(needle)
  // Code point index of the match, then a window that starts a little before it.
  const pointAt = unitAt <= 0 ? 0 : Array.from(content.slice(0, unitAt)).length
  const start = Math.max(0, Math.min(pointAt - 40, points.length - SNIPPET_CODE_POINTS))
  const end = Math.min(points.length, start + SNIPPET_CODE_POINTS)
  return `${start > 0 ? '…' : ''}${points.slice(start, end).join('').trim()}${end < points.length ? '…' : ''}`
}
