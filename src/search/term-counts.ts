/**
 * The match-mask pass's first try (match-masks.ts), from per-term bitsets (term-bitsets.ts): only
 * the slots holding at least `c` of the query's terms are given a mask and can be scored.
 *
 * Per 32 slots, the count of terms each holds is added up in three bit planes (a few word
 * operations per term), so the slots holding `c` terms or more are found without a write per
 * posting. `c` is the greatest count that a sample of every eighth word says enough slots hold
 * (twice the heap). Those slots are scored in decreasing order of their mask's bound, as the full
 * pass does, until the next bound is below the heap's floor. A slot holding fewer terms lies in a
 * region (terms held, of them by a rarer class's posting, counted in three more planes) whose
 * masks all have a bound at most the region's greatest: the slots of the regions whose greatest
 * reaches the floor are then given a mask, and those of their masks that reach it are scored; no
 * other slot can enter, so the top is exact. When the slots of `c` terms or more cannot fill the
 * heap, `c` is lowered, and below 2 the try gives way to the full pass.
 */
import { popcount } from './arrays.ts'
import { filtersNothing, passesFilters } from './filters.ts'
import type { RankedSlot, TopKPass } from './max-score.ts'
import type { IndexState } from './state.ts'
import type { TermBitsets } from './term-bitsets.ts'
import { TopK } from './top-k.ts'
import type { SearchDocument } from './types.ts'

/** Every this many words of the bitsets one is counted to choose `c`. */
const SAMPLE_WORDS = 8
/** Slots holding `c` terms or more, in multiples of the heap, that `c` is chosen for. */
const FILL_SHARE = 2
/** The first batch scored: masks of about this many times the heap's slots. */
const FIRST_SHARE = 1.5

/** The result of a try: the top, and the mask of any slot (valid until the next pass). */
export interface CountedTop {
  readonly ranked: RankedSlot[]
  readonly maskOf: (slot: number) => number
  /**
   * The live slots of the bitset `among` holding a term whose region (terms held, of them by a
   * rarer class) has a mask of bound `threshold` or more, in increasing order, with their masks,
   * filters passed (shared scratch, valid until the next call): every such slot whose mask's bound
   * reaches `threshold` is among them.
   */
  readonly reaching: (threshold: number, among: Int32Array) => Candidates
}

let candidateScratch: Int32Array<ArrayBuffer> = new Int32Array(1024)
let candidateMasks: Uint16Array<ArrayBuffer> = new Uint16Array(1024)
const perMask = new Int32Array(1 << 12)
const chosen = new Uint8Array(1 << 12)

/**
 * The best `pass.limit` slots by the terms whose bitsets are `sets` (in the query's order: term
 * `t` sets mask bits 2t and 2t + 1), scored by `score` (slots in increasing order), when the
 * slots holding fewer terms than some count can be left out; `undefined` when they cannot or when
 * more than `most` slots would be scored. `boundOf` gives each mask's bound.
 */
export function topByTermCounts<D extends SearchDocument>(state: IndexState<D>, sets: readonly TermBitsets[], boundOf: Float64Array, pass: TopKPass, score: (slots: ArrayLike<number>, held?: ArrayLike<number>, into?: TopK<RankedSlot>) => RankedSlot[], most: number): CountedTop | undefined {
  const terms = sets.length
  if (terms < 2 || terms > MAX_TERMS) return undefined
  const { slots } = state
  const words = (slots.count + 31) >>> 5
  const size = 1 << (2 * terms)
  // Per number of terms held and of those by a rarer class's posting: the greatest bound of a mask.
  const greatest = new Float64Array((MAX_TERMS + 1) * (MAX_TERMS + 1))
  for (let mask = 1; mask < size; mask++) {
    const cell = termsIn(mask) * (MAX_TERMS + 1) + bitsIn(mask & OTHER_BITS)
    if (boundOf[mask]! > greatest[cell]!) greatest[cell] = boundOf[mask]!
  }
  const planes = countPlanes(sets, words)
  const sampled = sampleCounts(planes, words, terms)
  let least = terms
  while (least > 2 && sampled[least]! * SAMPLE_WORDS < FILL_SHARE * pass.limit) least--
  let scored = 0
  for (; least >= 2; least--) {
    const top = new TopK<RankedSlot>(pass.limit, slots.compare)
    const spent = scoreByBound(candidates(state, sets, planes, words, least, NO_REGIONS, pass), boundOf, top, pass.limit, score, most - scored)
    if (spent < 0) return undefined
    scored += spent
    const floor = top.floor()
    if (floor === undefined) continue
    // The slots of fewer terms whose region (terms held, those by a rarer class) has a mask
    // reaching the floor are scored too, those of their masks that reach it.
    const regions: number[] = []
    for (let held = 1; held < least; held++) {
      for (let rarer = 0; rarer <= held; rarer++) if (greatest[held * (MAX_TERMS + 1) + rarer]! >= floor.score) regions.push(held, rarer)
    }
    if (regions.length > 0) {
      const more = scoreByBound(candidates(state, sets, planes, words, MAX_TERMS + 1, regions, pass), boundOf, top, pass.limit, score, most - scored)
      if (more < 0) return undefined
      scored += more
    }
    return {
      ranked: top.sorted(),
      maskOf: slot => maskOf(sets, slot),
      reaching: (threshold, among) => {
        // Every count from `from` on is taken whole (a few slots more than its regions reaching the
        // threshold: the caller checks each slot's bound), the counts under it by region.
        let from = terms + 1
        while (from > 1 && greatest[(from - 1) * (MAX_TERMS + 1)]! >= threshold) from--
        const wanted: number[] = []
        for (let held = 1; held < from; held++) {
          for (let rarer = 0; rarer <= held; rarer++) if (greatest[held * (MAX_TERMS + 1) + rarer]! >= threshold) wanted.push(held, rarer)
        }
        return candidates(state, sets, planes, words, from, wanted, pass, among)
      },
    }
  }
  return undefined
}

const NO_REGIONS: readonly number[] = []

/** Most terms the planes count (a count of 7 would need a fourth plane). */
const MAX_TERMS = 6

/** Per mask: its terms, bit t for term t (either of its two bits). */
const HELD = new Uint8Array(1 << (2 * MAX_TERMS))
for (let mask = 1; mask < HELD.length; mask++) {
  for (let term = 0; term < MAX_TERMS; term++) if (((mask >>> (2 * term)) & 3) !== 0) HELD[mask]! |= 1 << term
}
/** The bits of a mask for the postings of a term's rarer classes. */
const OTHER_BITS = 0xaaa

function bitsIn(word: number): number {
  let bits = 0
  for (; word !== 0; word &= word - 1) bits++
  return bits
}

/** How many terms a mask holds (two bits a term). */
function termsIn(mask: number): number {
  let pairs = (mask | (mask >>> 1)) & 0x555
  let held = 0
  for (; pairs !== 0; pairs &= pairs - 1) held++
  return held
}

/** The mask of `slot` by the bitsets. */
function maskOf(sets: readonly TermBitsets[], slot: number): number {
  const word = slot >>> 5
  const bit = slot & 31
  let mask = 0
  for (let term = 0; term < sets.length; term++) {
    const { usual, other } = sets[term]!
    mask |= (((usual[word]! >>> bit) & 1) | (((other[word]! >>> bit) & 1) << 1)) << (2 * term)
  }
  return mask
}

/** Per count `c`: the slots of the sampled words holding `c` terms or more, by the count planes. */
function sampleCounts(planes: readonly Int32Array[], words: number, terms: number): Int32Array {
  const out = new Int32Array(MAX_TERMS + 1)
  const [p0, p1, p2] = planes as [Int32Array, Int32Array, Int32Array]
  for (let word = 0; word < words; word += SAMPLE_WORDS) {
    const b0 = p0[word]!
    const b1 = p1[word]!
    const b2 = p2[word]!
    out[1]! += popcount(b0 | b1 | b2)
    out[2]! += popcount(b1 | b2)
    out[3]! += popcount(b2 | (b1 & b0))
    out[4]! += popcount(b2)
    out[5]! += popcount(b2 & (b1 | b0))
    out[6]! += popcount(b2 & b1)
  }
  return out.subarray(0, terms + 1)
}

/** The bitsets in one array: term t's usual bits at 2t, its other bits at 2t + 1. */
function wordLists(sets: readonly TermBitsets[]): Int32Array[] {
  const lists: Int32Array[] = []
  for (const set of sets) lists.push(set.usual, set.other)
  return lists
}

/** The slots of a word holding at least `least` terms, by its count planes. */
function atLeast(least: number, b0: number, b1: number, b2: number): number {
  switch (least) {
    case 1: return b0 | b1 | b2
    case 2: return b1 | b2
    case 3: return b2 | (b1 & b0)
    case 4: return b2
    case 5: return b2 & (b1 | b0)
    default: return b2 & b1
  }
}

/**
 * Per word of the bitsets, the bit planes of each slot's count of the terms it holds (0-2) and of
 * those it holds by a rarer class's posting (3-5), in shared scratch: read once per pass.
 */
let planeScratch: Int32Array[] = Array.from({ length: 6 }, () => new Int32Array(32))

function countPlanes(sets: readonly TermBitsets[], words: number): Int32Array[] {
  if (planeScratch[0]!.length < words) planeScratch = Array.from({ length: 6 }, () => new Int32Array(Math.max(words, planeScratch[0]!.length * 2)))
  const [p0, p1, p2, q0, q1, q2] = planeScratch as [Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array]
  const lists = wordLists(sets)
  const bits = lists.length
  for (let word = 0; word < words; word++) {
    let b0 = 0
    let b1 = 0
    let b2 = 0
    let r0 = 0
    let r1 = 0
    let r2 = 0
    for (let list = 0; list < bits; list += 2) {
      const other = lists[list + 1]![word]!
      const held = lists[list]![word]! | other
      let carry = b0 & held
      b0 ^= held
      b2 |= b1 & carry
      b1 ^= carry
      carry = r0 & other
      r0 ^= other
      r2 |= r1 & carry
      r1 ^= carry
    }
    p0[word] = b0
    p1[word] = b1
    p2[word] = b2
    q0[word] = r0
    q1[word] = r1
    q2[word] = r2
  }
  return planeScratch
}

const wordScratch = new Int32Array(2 * MAX_TERMS)

/**
 * The live slots the pass may keep, in increasing order, and their masks (shared scratch): those
 * holding `least` terms or more, and those of `regions` (pairs: terms held, of them by a rarer
 * class's posting), by the count planes; only those set in the bitset `among`, when given.
 */
function candidates<D extends SearchDocument>(state: IndexState<D>, sets: readonly TermBitsets[], planes: readonly Int32Array[], words: number, least: number, regions: readonly number[], pass: TopKPass, among?: Int32Array): Candidates {
  const { slots } = state
  const { checked, excluded } = pass
  const unfiltered = excluded === undefined && filtersNothing(checked)
  const alive = slots.alive
  const lists = wordLists(sets)
  const bits = lists.length
  const [p0, p1, p2, q0, q1, q2] = planes as [Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array]
  let out = candidateScratch
  let masks = candidateMasks
  let length = 0
  const counted = least <= MAX_TERMS
  const bitsOfWord = wordScratch
  for (let word = 0; word < words; word++) {
    if (among !== undefined && among[word] === 0) continue
    const b0 = p0[word]!
    const b1 = p1[word]!
    const b2 = p2[word]!
    let found = counted ? atLeast(least, b0, b1, b2) : 0
    for (let at = 0; at < regions.length; at += 2) found |= exactly(regions[at]!, b0, b1, b2) & exactly(regions[at + 1]!, q0[word]!, q1[word]!, q2[word]!)
    if (among !== undefined) found &= among[word]!
    if (found === 0) continue
    // The lists' words are read once per word, not once per slot found in it.
    for (let list = 0; list < bits; list++) bitsOfWord[list] = lists[list]![word]!
    for (; found !== 0; found &= found - 1) {
      const bit = 31 - Math.clz32(found & -found)
      const slot = (word << 5) | bit
      if (alive[slot] === 0) continue
      if (!unfiltered && (excluded?.has(slot) === true || !passesFilters(slots.records[slot]!, slots.created[slot]!, checked))) continue
      let mask = 0
      for (let list = 0; list < bits; list++) mask |= ((bitsOfWord[list]! >>> bit) & 1) << list
      if (length === out.length) {
        out = candidateScratch = grownInts(out)
        masks = candidateMasks = grownMasks(masks)
      }
      out[length] = slot
      masks[length++] = mask
    }
  }
  return { slots: out, masks, length }
}

/** The slots of a word whose count is exactly `count`, by its bit planes. */
function exactly(count: number, b0: number, b1: number, b2: number): number {
  return ((count & 1) !== 0 ? b0 : ~b0) & ((count & 2) !== 0 ? b1 : ~b1) & ((count & 4) !== 0 ? b2 : ~b2)
}

/** Slots in increasing order and their masks, the first `length` of the arrays. */
export interface Candidates {
  readonly slots: Int32Array
  readonly masks: Uint16Array
  readonly length: number
}

function grownInts(values: Int32Array): Int32Array<ArrayBuffer> {
  const out = new Int32Array(values.length * 2)
  out.set(values)
  return out
}

function grownMasks(values: Uint16Array): Uint16Array<ArrayBuffer> {
  const out = new Uint16Array(values.length * 2)
  out.set(values)
  return out
}

/**
 * Scores the candidates into `top` in decreasing order of their mask's bound (with the heap not
 * full, batches of about {@link FIRST_SHARE} × `limit` slots; then every mask that can still reach
 * the floor), until the next bound is below the floor. The slots scored, or -1 past `most`.
 */
function scoreByBound(found: Candidates, boundOf: Float64Array, top: TopK<RankedSlot>, limit: number, score: (slots: ArrayLike<number>, held?: ArrayLike<number>, into?: TopK<RankedSlot>) => RankedSlot[], most: number): number {
  const { slots, masks, length } = found
  // The distinct masks, in decreasing order of bound (stable: ties in order of first slot).
  let kinds = 0
  for (let at = 0; at < length; at++) if (perMask[masks[at]!]!++ === 0) presentScratch[kinds++] = masks[at]!
  const present = presentScratch
  if (kinds > INSERTION_MOST) present.subarray(0, kinds).sort((a, c) => boundOf[c]! - boundOf[a]!)
  else {
    // A stable insertion sort: a few dozen masks as a rule, and no comparator returning doubles.
    for (let at = 1; at < kinds; at++) {
      const mask = present[at]!
      const bound = boundOf[mask]!
      let to = at
      for (; to > 0 && boundOf[present[to - 1]!]! < bound; to--) present[to] = present[to - 1]!
      present[to] = mask
    }
  }
  if (batchScratch.length < length) {
    batchScratch = new Int32Array(Math.max(length, 2 * batchScratch.length))
    heldScratch = new Uint8Array(batchScratch.length)
  }
  const batch = batchScratch
  const held = heldScratch
  let scored = 0
  let next = 0
  try {
    while (next < kinds) {
      const floor = top.floor()
      if (floor !== undefined && boundOf[present[next]!]! < floor.score) break
      let taken = 0
      const from = next
      while (next < kinds && (floor === undefined ? taken < FIRST_SHARE * limit : boundOf[present[next]!]! >= floor.score)) {
        chosen[present[next]!] = 1
        taken += perMask[present[next++]!]!
      }
      if (scored + taken > most) return -1
      scored += taken
      let size = 0
      for (let at = 0; at < length; at++) {
        if (chosen[masks[at]!] !== 1) continue
        batch[size] = slots[at]!
        held[size++] = HELD[masks[at]!]!
      }
      for (let at = from; at < next; at++) chosen[present[at]!] = 0
      score(batch.subarray(0, size), held.subarray(0, size), top)
    }
    return scored
  }
  finally {
    for (let at = 0; at < kinds; at++) perMask[present[at]!] = 0
  }
}

/** Most distinct masks sorted by insertion (more by the built-in sort). */
const INSERTION_MOST = 64

// Per scoreByBound (searches are synchronous): its distinct masks, and a batch's slots and their held terms.
const presentScratch = new Uint16Array(1 << (2 * MAX_TERMS))
let batchScratch = new Int32Array(1024)
let heldScratch = new Uint8Array(1024)
