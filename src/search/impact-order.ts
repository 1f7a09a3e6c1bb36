/**
 * Impact-ordered copies of long run posting lists, for the substring rule's top k (substring-index.ts).
 *
 * A run list holds (slot, occurrences) pairs in slot order. Its copy holds the same postings best
 * first: occurrences descending, then creation time, then position descending (the order of
 * `Slots.compare` for a score proportional to the occurrences). Nothing in a copy changes once
 * made: a slot's creation time and position are fixed, a removed record only turns its slot into a
 * tombstone (skipped when read), and a list only grows at its end. So a copy stays exact for the
 * postings it covers, and the postings appended since (its tail) are read from the list itself;
 * a copy whose tail grows past an eighth of it is made again.
 *
 * Copies hold slot numbers and counts only (no text), are made lazily for lists of at least
 * {@link IMPACT_MIN_POSTINGS} postings, and are bounded: at most {@link IMPACT_BUDGET_FACTOR}
 * entries per indexed slot in all, the least recently read dropped first.
 */
import type { PairLists } from './postings.ts'
import type { Slots } from './slots.ts'

/** Lists shorter than this are read whole: sorting them would cost more than it saves. */
export const IMPACT_MIN_POSTINGS = 2048

/** Copies hold at most this many postings per slot of the index, plus one list's worth. */
const IMPACT_BUDGET_FACTOR = 2

/** The impact-ordered copy of one list's first `length` postings. */
export interface ImpactCopy {
  /** Postings of the list covered (the tail starts here). */
  readonly length: number
  /** Slots, best first. */
  readonly slots: Int32Array
  /** Occurrences, aligned with {@link slots}. */
  readonly counts: Int32Array
}

const blockScratch: number[] = []

/** The impact-ordered copies of the lists of one {@link PairLists}. */
export class ImpactOrders {
  private readonly copies = new Map<number, ImpactCopy>()
  private held = 0

  /** @param lists The posting lists the copies are of. */
  constructor(readonly lists: PairLists) {}

  /**
   * The copy of list `id`, made or made again when missing or when its tail is longer than an
   * eighth of it; the list's postings from `copy.length` on are its tail.
   */
  copy(id: number, slots: Slots<unknown>): ImpactCopy {
    const length = this.lists.length(id)
    let copy = this.copies.get(id)
    if (copy !== undefined) {
      // Most recently read last: the map's order is the eviction order.
      this.copies.delete(id)
      if (length - copy.length > copy.length / 8) {
        this.held -= copy.length
        copy = undefined
      }
    }
    if (copy === undefined) {
      copy = impactCopy(this.lists, id, slots)
      this.held += copy.length
      const budget = IMPACT_BUDGET_FACTOR * slots.count + copy.length
      for (const [other, old] of this.copies) {
        if (this.held <= budget) break
        this.copies.delete(other)
        this.held -= old.length
      }
    }
    this.copies.set(id, copy)
    return copy
  }

  /** Postings held by all copies (for tests of the bound). */
  get size(): number {
    return this.held
  }
}

/** The postings of list `id`, best first (see the module comment). */
function impactCopy(lists: PairLists, id: number, slots: Slots<unknown>): ImpactCopy {
  const length = lists.length(id)
  const data = lists.data
  const order = new Array<number>(length)
  const countOf = new Int32Array(slots.count)
  let at = 0
  // Newest slot first: the sort below then mostly meets runs already in order.
  const ranges = lists.blocks(id, blockScratch)
  for (let range = ranges.length - 2; range >= 0; range -= 2) {
    for (let pair = ranges[range + 1]! - 2; pair >= ranges[range]!; pair -= 2) {
      const slot = data[pair]!
      order[at++] = slot
      countOf[slot] = data[pair + 1]!
    }
  }
  const { created, positions } = slots
  order.sort((a, c) => countOf[c]! - countOf[a]! || created[c]! - created[a]! || positions[c]! - positions[a]!)
  const sorted = Int32Array.from(order)
  const counts = new Int32Array(length)
  for (let index = 0; index < length; index++) counts[index] = countOf[sorted[index]!]!
  return { length, slots: sorted, counts }
}
