/**
 * Per-list bitsets of the keys of a {@link PairLists} (the slots holding a run, for the substring
 * rule's intersections in substring-index.ts): bit `slot & 31` of word `slot >>> 5`. Intersecting
 * the holders of long lists is then one AND per 32 slots and list, instead of a write per posting.
 *
 * Lists only grow at their end (a removed record's postings stay, as a tombstone), so a bitset is
 * brought up to date lazily from the postings not read yet. Bitsets are kept for the
 * {@link MAX_HOLDER_LISTS} lists used last per `PairLists` (slots / 8 bytes a list: 12.5 KB at
 * 100,000 records), and dropped with the lists they were read from (a rebuilt or restored index
 * has new lists).
 */
import type { PairLists } from './postings.ts'

/** Lists whose bitsets a `PairLists` keeps (the least recently used dropped first). */
const MAX_HOLDER_LISTS = 32

interface Entry {
  words: Int32Array
  /** Postings read into the bitset. */
  seen: number
}

const byLists = new WeakMap<PairLists, Map<number, Entry>>()
const blockScratch: number[] = []

/**
 * The bitset of the keys of list `id` of `lists` over the first `count` keys (words past them
 * are 0, tombstones included), up to date with its pairs. Shared: never written by the caller;
 * valid until the next call for the same lists.
 */
export function holderBitset(lists: PairLists, id: number, count: number): Int32Array {
  let kept = byLists.get(lists)
  if (kept === undefined) byLists.set(lists, kept = new Map())
  const words = (count + 31) >>> 5
  let entry = kept.get(id)
  if (entry !== undefined) kept.delete(id)
  if (entry === undefined || entry.seen > lists.length(id)) entry = { words: new Int32Array(words), seen: 0 }
  else if (entry.words.length < words) {
    const grown = new Int32Array(Math.max(words, entry.words.length * 2))
    grown.set(entry.words)
    entry.words = grown
  }
  if (kept.size >= MAX_HOLDER_LISTS) kept.delete(kept.keys().next().value!)
  // Most recently used last: the map's order is the eviction order.
  kept.set(id, entry)
  read(lists, id, entry)
  return entry.words
}

/** Sets the bits of the keys of list `id` after the first `entry.seen`. */
function read(lists: PairLists, id: number, entry: Entry): void {
  const length = lists.length(id)
  if (entry.seen === length) return
  const { words } = entry
  const data = lists.data
  const ranges = lists.blocksAfter(id, entry.seen, blockScratch)
  for (let range = 0; range < ranges.length; range += 2) {
    const end = ranges[range + 1]!
    for (let at = ranges[range]!; at < end; at += 2) {
      const key = data[at]!
      words[key >>> 5]! |= 1 << (key & 31)
    }
  }
  entry.seen = length
}
