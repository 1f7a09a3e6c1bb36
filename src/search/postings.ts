import { grow } from './arrays.ts'
import type { ByteReader, ByteWriter } from './bytes.ts'

/** Lists whose block ranges a {@link PairLists} keeps ({@link PairLists.blockRanges}). */
const KEPT_RANGES = 256

/**
 * Growable lists of (key, value) int32 pairs, one list per id, stored in one shared `Int32Array`
 * as linked blocks (2 header ints, then pairs; block sizes double from 2 to 512 pairs). One
 * posting list costs a few ints instead of a typed array or a `Map` per term: a vocabulary of
 * 100,000 one-record terms stays small.
 */
export class PairLists {
  private arena: Int32Array
  private used = 0
  /** Per list: first block, last block, pairs used in the last block, pairs in all. */
  private heads: Int32Array
  private tails: Int32Array
  private fills: Int32Array
  private lengths: Int32Array
  // blockRanges' arrays by list, with the list's length they were made at. A block's offset in
  // the arena never changes (the arena grows by copying it whole), so only a push stales them.
  private readonly ranges = new Map<number, { length: number; ranges: number[] }>()
  count = 0

  /** Room for `lists` lists and an arena of `ints` ints (the four per-list arrays share one buffer: a restore allocates little). */
  constructor(lists = 16, ints = 1 << 8) {
    this.arena = new Int32Array(ints)
    const buffer = new ArrayBuffer(16 * lists)
    this.heads = new Int32Array(buffer, 0, lists)
    this.tails = new Int32Array(buffer, 4 * lists, lists)
    this.fills = new Int32Array(buffer, 8 * lists, lists)
    this.lengths = new Int32Array(buffer, 12 * lists, lists)
  }

  /** Makes room for `lists` lists holding `pairs` pairs in all (a build of known size grows no array). */
  reserve(lists: number, pairs: number): void {
    if (lists > this.heads.length) {
      this.heads = grow(this.heads, lists)
      this.tails = grow(this.tails, lists)
      this.fills = grow(this.fills, lists)
      this.lengths = grow(this.lengths, lists)
    }
    // A list's first block holds 2 pairs after its 2 header ints.
    const ints = this.used + 6 * lists + 2 * pairs
    if (ints > this.arena.length) this.arena = grow(this.arena.subarray(0, this.used), ints)
  }

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

  /**
   * The {@link blocks} of list `id` in an array kept for it while the list does not grow (shared:
   * never written by the caller), so that readers making cursors for the same lists search after
   * search (the query's terms) allocate nothing. The least recently made are dropped past
   * {@link KEPT_RANGES} lists; a push to a list makes its ranges again on the next call.
   */
  blockRanges(id: number): readonly number[] {
    const kept = this.ranges.get(id)
    if (kept !== undefined && kept.length === this.lengths[id]) return kept.ranges
    if (kept === undefined && this.ranges.size >= KEPT_RANGES) this.ranges.delete(this.ranges.keys().next().value!)
    const ranges = this.blocks(id, [])
    this.ranges.set(id, { length: this.lengths[id]!, ranges })
    return ranges
  }

  /**
   * The ranges of {@link blocks} after the first `skip` pairs of list `id` (the pairs pushed since
   * a reader took in `skip`): whole blocks before them are left out, the first range starts past them.
   */
  blocksAfter(id: number, skip: number, out: number[]): number[] {
    out.length = 0
    const arena = this.arena
    for (let block = this.heads[id]!; block !== -1; block = arena[block]!) {
      const filled = block === this.tails[id] ? this.fills[id]! : arena[block + 1]!
      if (skip >= filled) {
        skip -= filled
        continue
      }
      out.push(block + 2 + skip * 2, block + 2 + filled * 2)
      skip = 0
    }
    return out
  }

  /**
   * The value of the pair of list `id` whose key is `key`, or -1 when it has none. Keys of a list
   * must have been pushed in increasing order (a posting list's slots are): a walk over the
   * blocks, then a binary search in one.
   */
  lookup(id: number, key: number): number {
    const arena = this.arena
    for (let block = this.heads[id]!; block !== -1; block = arena[block]!) {
      const filled = block === this.tails[id] ? this.fills[id]! : arena[block + 1]!
      if (filled === 0 || arena[block + 2 + (filled - 1) * 2]! < key) continue
      let low = 0
      let high = filled - 1
      while (low < high) {
        const middle = (low + high) >> 1
        if (arena[block + 2 + middle * 2]! < key) low = middle + 1
        else high = middle
      }
      return arena[block + 2 + low * 2] === key ? arena[block + 3 + low * 2]! : -1
    }
    return -1
  }

  get data(): Int32Array {
    return this.arena
  }

  /**
   * Writes the pairs of all lists, then every list in id order: its pair count, then per pair the
   * key as a zigzag delta from the previous key and the value, or 0 for the value of the list's
   * previous pair (values must be at least 1: most postings of a list repeat a count of 1 in one field).
   */
  encode(out: ByteWriter): void {
    const arena = this.arena
    let total = 0
    for (let id = 0; id < this.count; id++) total += this.lengths[id]!
    out.uint(total)
    for (let id = 0; id < this.count; id++) {
      out.uint(this.lengths[id]!)
      let previous = 0
      let previousValue = 0
      for (let block = this.heads[id]!; block !== -1; block = arena[block]!) {
        const filled = block === this.tails[id] ? this.fills[id]! : arena[block + 1]!
        for (let at = block + 2, end = block + 2 + filled * 2; at < end; at += 2) {
          out.int(arena[at]! - previous)
          previous = arena[at]!
          const value = arena[at + 1]!
          out.uint(value === previousValue ? 0 : value)
          previousValue = value
        }
      }
    }
  }

  /**
   * `count` lists read back from {@link encode}, one block each, in an arena with an eighth more
   * room (at least 64 ints) for the blocks later pushes add.
   *
   * @throws Error when the bytes end early, a key is outside `[0, keyLimit)`, a value outside
   * `[minValue, maxValue]` (`minValue` at least 1) or a list's first value is that of its previous pair.
   */
  static decode(input: ByteReader, count: number, keyLimit: number, minValue: number, maxValue: number): PairLists {
    const total = input.uint()
    // A pair takes 2 bytes at least: a count the data cannot hold is refused before allocating.
    if (total * 2 > input.remaining()) throw new Error('the posting lists are longer than their data')
    // Room for the blocks later writes add (an eighth more): the first writes after a restore
    // do not copy the whole arena.
    const exact = 2 * count + 2 * total
    const lists = new PairLists(Math.max(16, count), exact + Math.max(64, exact >> 3))
    lists.count = count
    const arena = lists.arena
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
      // 0 (never a value: values are at least 1) stands for the previous pair's value; a list's first pair has none.
      let value = 0
      for (let at = block + 2, end = block + 2 + length * 2; at < end; at += 2) {
        key += input.int()
        const written = input.uint()
        if (written !== 0) value = written
        if (key < 0 || key >= keyLimit || value < minValue || value > maxValue) throw new Error('a posting is out of range')
        arena[at] = key
        arena[at + 1] = value
      }
      used = block + 2 + length * 2
    }
    if (pairs !== total) throw new Error('the posting lists hold fewer pairs than they announce')
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
