/**
 * Per-class bounds of the BM25F points of a term's postings, for the match-mask pass (match-masks.ts).
 *
 * A posting's class is its count per field capped at 3 (title, content, tags: 4 × 4 × 4 = 64
 * classes). Per term and class the statistics hold how many postings it has, and per field the
 * greatest count and the least field length among them: `Σ weight × maxCount / (1 − b + b ×
 * minLength / avgLength)` bounds the saturated term frequency of every posting of the class at any
 * time (term-bounds.ts gives the same bound over all of a term's postings). In a list whose
 * postings are mostly alike (one occurrence in the content of records of a usual length), the
 * class of most of them has a bound close to their points, far under the list's greatest.
 *
 * Posting lists only grow at their end, so statistics are brought up to date lazily, from the
 * postings not seen yet; a tombstone only makes a bound looser. Statistics are kept for the
 * {@link MAX_CLASSED_TERMS} terms used last (no text, counts and lengths only).
 */
import type { PairLists } from './postings.ts'
import { FIELDS, type Slots } from './slots.ts'
import { TF_BITS, TF_INLINE_MAX, type Vocabulary } from './vocabulary.ts'
import { NO_LENGTH, widenBounds } from './term-bounds.ts'

/**
 * Posting classes: counts 0, 1, 2 and 3+ in each of the title, content and tags. The dates field
 * does not split classes (its counts still bound each class: `maxCounts` has every field).
 */
export const CLASSES = 64

/** Terms whose class statistics are kept (the least recently used dropped first). */
const MAX_CLASSED_TERMS = 256

/** The class of a posting's packed field counts (vocabulary.ts: {@link TF_BITS} bits per field). */
export function postingClass(packed: number): number {
  const title = packed & TF_INLINE_MAX
  const content = (packed >>> TF_BITS) & TF_INLINE_MAX
  const tags = (packed >>> (2 * TF_BITS)) & TF_INLINE_MAX
  return (title > 3 ? 3 : title) | ((content > 3 ? 3 : content) << 2) | ((tags > 3 ? 3 : tags) << 4)
}

/** The class statistics of one term. */
export interface ClassStats {
  /** Postings taken into the statistics. */
  seen: number
  /** Per class: postings. */
  readonly population: Int32Array
  /** Per class × field: greatest count. */
  readonly maxCounts: Int32Array
  /** Per class × field: least field length. */
  readonly minLengths: Int32Array
}

const blockScratch: number[] = []

/** The class statistics of the terms of one vocabulary's postings. */
export class PostingClasses {
  private lists: PairLists | undefined
  private readonly stats = new Map<number, ClassStats>()

  /** The statistics of term `id`, up to date with its postings. */
  of(vocabulary: Vocabulary, slots: Slots<unknown>, id: number): ClassStats {
    const lists = vocabulary.termPostings
    if (this.lists !== lists) {
      this.lists = lists
      this.stats.clear()
    }
    let stats = this.stats.get(id)
    if (stats === undefined) {
      stats = { seen: 0, population: new Int32Array(CLASSES), maxCounts: new Int32Array(CLASSES * FIELDS), minLengths: new Int32Array(CLASSES * FIELDS).fill(NO_LENGTH) }
      if (this.stats.size >= MAX_CLASSED_TERMS) this.stats.delete(this.stats.keys().next().value!)
    }
    else this.stats.delete(id)
    // Most recently used last: the map's order is the eviction order.
    this.stats.set(id, stats)
    update(stats, vocabulary, lists, slots, id)
    return stats
  }
}

function update(stats: ClassStats, vocabulary: Vocabulary, lists: PairLists, slots: Slots<unknown>, id: number): void {
  const length = lists.length(id)
  if (stats.seen === length) return
  widenBounds(vocabulary, slots, id, stats.seen, blockScratch, { maxCounts: stats.maxCounts, minLengths: stats.minLengths, population: stats.population, keyOf: postingClass })
  stats.seen = length
}
