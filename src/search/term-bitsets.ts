/**
 * Per-term bitsets of a vocabulary's postings, for the match-mask pass (match-masks.ts): per term,
 * one bit per slot for the postings its usual mask bit stands for and one for those of its other
 * bit (which bit a posting class takes is given by the pass: `kinds`). Counting how many of a
 * query's terms each slot holds is then a few word operations per 32 slots, instead of a write per
 * posting.
 *
 * Posting lists only grow at their end (a removed record's postings stay, as a tombstone), so a
 * term's bitsets are brought up to date lazily, from the postings not read yet; they are read
 * again from the start when the pass maps a class to the other bit than when they were made (the
 * field averages moved). Bitsets are kept for the {@link MAX_BITSET_TERMS} terms used last per
 * vocabulary (slots / 4 bytes a term: 25 KB at 100,000 records), and dropped with the postings
 * they were read from (a rebuilt or restored index has new lists).
 */
import { postingClass } from './posting-classes.ts'
import type { PairLists } from './postings.ts'

/** Terms whose bitsets a vocabulary keeps (the least recently used dropped first). */
const MAX_BITSET_TERMS = 32

/** Which mask bit a posting class takes: none (no posting of the class), the usual bit, the other. */
export const NO_BIT = 0
export const USUAL_BIT = 1
export const OTHER_BIT = 2

/** One term's bitsets over slots: bit `slot & 31` of word `slot >>> 5`. */
export interface TermBitsets {
  /** Slots holding a posting of the term whose class takes the usual bit. */
  readonly usual: Int32Array
  /** Slots holding a posting of the term whose class takes the other bit. */
  readonly other: Int32Array
}

interface Entry extends TermBitsets {
  usual: Int32Array
  other: Int32Array
  /** Postings read into the bitsets. */
  seen: number
  /** Per posting class: the bit it was read into. */
  readonly kinds: Uint8Array
}

const byLists = new WeakMap<PairLists, Map<number, Entry>>()
const blockScratch: number[] = []

/**
 * The bitsets of term `id` of `lists` over the first `count` slots (words past them are 0), up
 * to date with its postings, for `kinds` (per posting class: {@link NO_BIT}, {@link USUAL_BIT},
 * {@link OTHER_BIT}). Valid until the next call for the same lists.
 */
export function termBitsets(lists: PairLists, id: number, kinds: Uint8Array, count: number): TermBitsets {
  let terms = byLists.get(lists)
  if (terms === undefined) byLists.set(lists, terms = new Map())
  const words = (count + 31) >>> 5
  let entry = terms.get(id)
  if (entry !== undefined) terms.delete(id)
  if (entry === undefined || !sameKinds(entry.kinds, kinds)) {
    entry = { usual: new Int32Array(words), other: new Int32Array(words), seen: 0, kinds: Uint8Array.from(kinds) }
  }
  else if (entry.usual.length < words) {
    const size = Math.max(words, entry.usual.length * 2)
    entry.usual = widened(entry.usual, size)
    entry.other = widened(entry.other, size)
  }
  if (terms.size >= MAX_BITSET_TERMS) terms.delete(terms.keys().next().value!)
  // Most recently used last: the map's order is the eviction order.
  terms.set(id, entry)
  read(lists, id, entry)
  return entry
}

/** Sets the bits of the postings of term `id` after the first `entry.seen`. */
function read(lists: PairLists, id: number, entry: Entry): void {
  const length = lists.length(id)
  if (entry.seen === length) return
  const { usual, other, kinds } = entry
  const data = lists.data
  const ranges = lists.blocksAfter(id, entry.seen, blockScratch)
  for (let range = 0; range < ranges.length; range += 2) {
    const end = ranges[range + 1]!
    for (let at = ranges[range]!; at < end; at += 2) {
      const slot = data[at]!
      const kind = kinds[postingClass(data[at + 1]!)]
      if (kind === USUAL_BIT) usual[slot >>> 5]! |= 1 << (slot & 31)
      else if (kind === OTHER_BIT) other[slot >>> 5]! |= 1 << (slot & 31)
    }
  }
  entry.seen = length
}

function sameKinds(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let at = 0; at < a.length; at++) if (a[at] !== b[at]) return false
  return true
}

function widened(words: Int32Array, size: number): Int32Array {
  const out = new Int32Array(size)
  out.set(words)
  return out
}
