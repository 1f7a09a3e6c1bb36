/**
 * Per-term bounds of the BM25F points one posting can give, for top-k pruning (max-score.ts).
 *
 * Per term and field the index keeps the greatest count and the least field length among its
 * postings (records where the field holds the term). Both hold whatever the field averages are, so
 * `Σ weight × maxCount / (1 − b + b × minLength / avgLength)` bounds the saturated term frequency
 * of every posting at any time: a tombstone only makes the bound looser. Posting lists only grow at
 * their end, so the statistics are brought up to date lazily, from the postings not seen yet.
 */
import { FIELDS, type Slots } from './slots.ts'
import type { Vocabulary } from './vocabulary.ts'
import { grow } from './arrays.ts'
import type { PairLists } from './postings.ts'

/** The least field length of no posting yet: every real length is below it. */
export const NO_LENGTH = 0x7fffffff

/** Where {@link widenBounds} puts what it reads: per key × field. */
export interface BoundTables {
  /** Greatest count per key × field. */
  readonly maxCounts: Int32Array
  /** Least field length per key × field ({@link NO_LENGTH} for none). */
  readonly minLengths: Int32Array
  /** Postings per key, when counted. */
  readonly population?: Int32Array
  /** The key of a posting (its packed field counts): the term for per-term bounds, the posting's class for per-class ones. */
  keyOf(packed: number): number
}

/**
 * Widens `tables` with the postings of term `id` after its first `skip` (the ones not taken in
 * yet): per field holding the term, the greatest count and the least field length, at
 * `keyOf(posting) × FIELDS + field`. `blocks` is scratch for the list's block ranges.
 */
export function widenBounds(vocabulary: Vocabulary, slots: Slots<unknown>, id: number, skip: number, blocks: number[], tables: BoundTables): void {
  const lists = vocabulary.termPostings
  const data = lists.data
  const lengths = slots.lengths
  const { maxCounts, minLengths, population } = tables
  const ranges = lists.blocksAfter(id, skip, blocks)
  for (let range = 0; range < ranges.length; range += 2) {
    const end = ranges[range + 1]!
    for (let at = ranges[range]!; at < end; at += 2) {
      const slot = data[at]!
      const packed = data[at + 1]!
      const key = tables.keyOf(packed)
      if (population) population[key]!++
      for (let field = 0; field < FIELDS; field++) {
        const count = vocabulary.fieldCount(packed, slot, field)
        if (count === 0) continue
        const cell = key * FIELDS + field
        if (count > maxCounts[cell]!) maxCounts[cell] = count
        const fieldLength = lengths[slot * FIELDS + field]!
        if (fieldLength < minLengths[cell]!) minLengths[cell] = fieldLength
      }
    }
  }
}

/** The bound statistics of the terms of one vocabulary's postings. */
export class TermBounds {
  private lists: PairLists | undefined
  /** Per term: postings taken into the statistics. */
  private seen = new Int32Array(0)
  /** Per term × field: greatest count, least length. */
  private maxCounts = new Int32Array(0)
  private minLengths = new Int32Array(0)
  private readonly blocks: number[] = []

  /**
   * The greatest saturated term frequency `tf'` a live posting of term `id` can have, with field
   * `weights`, `base` = 1 − b and `slope[field]` = b / average length of the field.
   */
  maxTf(vocabulary: Vocabulary, slots: Slots<unknown>, id: number, weights: readonly number[], base: number, slope: readonly number[]): number {
    this.update(vocabulary, slots, id)
    let bound = 0
    for (let field = 0; field < FIELDS; field++) {
      const count = this.maxCounts[id * FIELDS + field]!
      if (count > 0) bound += weights[field]! * count / (base + slope[field]! * this.minLengths[id * FIELDS + field]!)
    }
    return bound
  }

  private update(vocabulary: Vocabulary, slots: Slots<unknown>, id: number): void {
    const lists = vocabulary.termPostings
    if (this.lists !== lists) {
      this.lists = lists
      this.seen = new Int32Array(0)
      this.maxCounts = new Int32Array(0)
      this.minLengths = new Int32Array(0)
    }
    if (id >= this.seen.length) {
      const size = Math.max(lists.count, id + 1)
      const from = this.seen.length
      this.seen = grow(this.seen, size)
      this.maxCounts = grow(this.maxCounts, size * FIELDS)
      this.minLengths = grow(this.minLengths, size * FIELDS)
      this.minLengths.fill(NO_LENGTH, from * FIELDS)
    }
    const length = lists.length(id)
    if (this.seen[id] === length) return
    widenBounds(vocabulary, slots, id, this.seen[id]!, this.blocks, { maxCounts: this.maxCounts, minLengths: this.minLengths, keyOf: () => id })
    this.seen[id] = length
  }
}
