/**
 * Top-k BM25F by match masks: for queries of a few terms whose posting lists are long and alike,
 * where MaxScore cannot leave a list out (every list's bound is about the same, so every list stays
 * essential) and an exhaustive pass scores every posting.
 *
 * 1. Each posting sets a bit in its slot's mask: per term one bit for the postings of the term's
 *    usual classes (posting-classes.ts: the classes whose bound is at most that of the class most
 *    postings are in) and one for the others. A slot's mask bounds its score: the sum of the bounds
 *    of its bits. Setting bits in a 16-bit array costs a fraction of scoring a posting.
 * 2. The masks are taken in decreasing order of bound, in tiers sized from a sample of every
 *    eighth slot's mask: a tier's slots are scored in full (`slotScorer`: the same additions as an
 *    exhaustive pass) and offered to the heap, until the heap is full and the next mask's bound is
 *    below its floor. A slot whose bound is below the floor cannot enter, so the top `limit` is
 *    exact. When bounds tie (records holding two of the words each, the best ones too), more slots
 *    would be scored than scoring every posting costs: the pass then gives way to that one.
 *
 * A slot of a query of six common words usually holds one or two of them: its bound is below the
 * score of the records holding four, and it is never scored.
 *
 * Before step 1 the pass tries term-counts.ts: the query's terms counted per slot over per-term
 * bitsets (term-bitsets.ts), so that only the slots holding the most terms, and those of fewer
 * whose mask can still reach the floor, get a mask at all. Step 1 runs when that try cannot fill
 * the heap above every slot it left out.
 */
import { fieldNorms, idf, termPoints, type Bm25fParams, type FieldNorms } from './bm25f.ts'
import { filtersNothing, passesFilters } from './filters.ts'
import { slotScorer, type RankedSlot, type TopKPass } from './max-score.ts'
import { CLASSES, postingClass, type ClassStats } from './posting-classes.ts'
import { FIELDS } from './slots.ts'
import type { IndexState } from './state.ts'
import { NO_BIT, OTHER_BIT, termBitsets, USUAL_BIT } from './term-bitsets.ts'
import { topByTermCounts, type Candidates } from './term-counts.ts'
import { TopK } from './top-k.ts'
import type { SearchDocument } from './types.ts'
import type { Vocabulary } from './vocabulary.ts'

/** Most known terms of a query the pass takes (two bits each in a 16-bit mask, 4,096 masks). */
export const MAX_MASKED_TERMS = 6

// Bounds are raised by this share so that rounding in their sums never prunes a record that
// reaches the floor exactly.
const BOUND_SLACK = 1 + 1e-9

/** Postings read term at a time cost about as much as one term's seek for a scored slot. */
const SCORED_POSTINGS = 4

/** Every this many slots one is read to estimate how many slots each mask has. */
const SAMPLE_STEP = 8
/** The tiers of a first read of the masks: masks of about this many times the slots wanted, each tier scored only while it can reach the floor. */
const TIER_SHARES = [1.5, 8, 32]

/** Per slot: the mask of the last pass (shared by every index: searches are synchronous). */
let masks = new Uint16Array(1024)
const blockScratch: number[] = []
// Per mask (at most 4,096): its bound, its estimated slots, its tier in the current read. Shared
// like `masks`: a pass's `bound` reads `boundScratch` until the next pass.
const boundScratch = new Float64Array(1 << (2 * MAX_MASKED_TERMS))
const estimateScratch = new Int32Array(1 << (2 * MAX_MASKED_TERMS))
const chosenScratch = new Uint8Array(1 << (2 * MAX_MASKED_TERMS))

/** The result of a mask pass: its top `limit`, and a bound of any slot's score by the same terms. */
export interface MaskedTop {
  readonly ranked: RankedSlot[]
  /** The bound of `slot`'s score (0 for a slot no term holds); valid until the next mask pass. */
  readonly bound: (slot: number) => number
  /** When the pass took the term counts (term-counts.ts): the slots holding a term that can reach a bound, and the bound of each mask. */
  readonly reaching?: { readonly slots: (threshold: number, among: Int32Array) => Candidates; readonly boundOf: Float64Array }
}

/**
 * The best `pass.limit` live slots by BM25F of `terms` (term -> weight, at most
 * {@link MAX_MASKED_TERMS} known terms), filtered and not excluded, best first under
 * `slots.compare`: the same slots and scores as `topByMaxScore`. `undefined` when more than
 * `budget` slots would have to be scored (default: the postings / ({@link SCORED_POSTINGS} × the
 * terms), what scoring every posting costs): masks cannot part records whose bounds tie, as when
 * thousands of records hold two of the words and the best ones hold two too. `byCounts` false
 * skips the term-count try (term-counts.ts) and reads every posting's mask (tests hold one to the
 * other).
 */
export function topByMatchMasks<D extends SearchDocument>(state: IndexState<D>, params: Bm25fParams, terms: ReadonlyMap<string, number>, pass: TopKPass, budget?: number, byCounts = true): MaskedTop | undefined {
  const { slots, vocabulary } = state
  const none: MaskedTop = { ranked: [], bound: () => 0 }
  if (slots.live === 0 || pass.limit <= 0) return none
  const norms = fieldNorms(state, params)
  const ids: number[] = []
  const bitsOf: Uint16Array[] = []
  const bitBounds: number[] = []
  for (const [term, weight] of terms) {
    const id = vocabulary.termIds.get(term)
    if (id === undefined || vocabulary.termFrequency[id] === 0) continue
    if (ids.length === MAX_MASKED_TERMS) throw new Error(`a mask pass takes at most ${MAX_MASKED_TERMS} terms`)
    const termIdf = weight * idf(slots.live, vocabulary.termFrequency[id]!)
    const { bits, low, high } = termBits(state.classes.of(vocabulary, slots, id), norms, termIdf, ids.length)
    ids.push(id)
    bitsOf.push(bits)
    bitBounds.push(low, high)
  }
  if (ids.length === 0) return none
  let postings = 0
  for (const id of ids) postings += vocabulary.termPostings.length(id)
  const most = budget ?? postings / (SCORED_POSTINGS * ids.length)
  let scored = 0
  const size = 1 << (2 * ids.length)
  const boundOf = boundScratch
  for (let mask = 1; mask < size; mask++) {
    const lowest = mask & -mask
    boundOf[mask] = boundOf[mask ^ lowest]! + bitBounds[31 - Math.clz32(lowest)]!
  }
  const count = slots.count
  const score = slotScorer(state, params, terms, pass.counted)
  if (byCounts) {
    const sets = ids.map((id, place) => termBitsets(vocabulary.termPostings, id, kindsOf(bitsOf[place]!, place), count))
    const counted = topByTermCounts(state, sets, boundOf, pass, score, most)
    if (counted !== undefined) return { ranked: counted.ranked, bound: slot => boundOf[counted.maskOf(slot)]!, reaching: { slots: counted.reaching, boundOf } }
  }
  const own = readMasks(vocabulary, ids, bitsOf, count)
  const several = severalScratch
  const alive = slots.alive
  // Slots per mask, estimated from every SAMPLE_STEP-th slot: the batch sizes depend on it, the result does not.
  // One slot of each SAMPLE_STEP, at a hashed offset: records written in a cycle (every sixteenth
  // holds the same words) would alias with a fixed stride.
  const estimate = estimateScratch.fill(0, 0, size)
  for (let base = 0; base < count; base += SAMPLE_STEP) {
    const slot = base + (Math.imul(base, 0x9e3779b1) >>> 29)
    if (slot < count) estimate[own[slot]!]! += SAMPLE_STEP
  }
  const sampled: number[] = []
  for (let mask = 1; mask < size; mask++) if (estimate[mask]! > 0) sampled.push(mask)
  sampled.sort((a, c) => boundOf[c]! - boundOf[a]!)
  // Estimated slots of the masks with a bound in [low, high).
  const tierEstimate = (low: number, high: number): number => {
    let total = 0
    for (const mask of sampled) if (boundOf[mask]! >= low && boundOf[mask]! < high) total += estimate[mask]!
    return total
  }
  const top = new TopK<RankedSlot>(pass.limit, slots.compare)
  const { checked, excluded } = pass
  // No filter and nothing excluded: a slot's record is not read to keep it.
  const unfiltered = excluded === undefined && filtersNothing(checked)
  const chosen = chosenScratch
  chosen[0] = 0
  // Every slot whose mask's bound is at least `upper` has been scored.
  let upper = Number.POSITIVE_INFINITY
  let next = 0
  while (upper > Number.NEGATIVE_INFINITY) {
    const floor = top.floor()
    if (floor !== undefined && upper <= floor.score) break
    // A read of the masks: with a full heap, every mask that can still reach its floor; else tiers
    // of masks holding about TIER_SHARES × `limit` slots each, the first scored in full and each
    // next one only where its bound reaches the floor the ones before gave, so that one read of
    // the masks mostly does. The slots a read would store and score, estimated, stay within the
    // budget (twice it for the later tiers, which are only stored): past it the pass gives way.
    const lows: number[] = []
    let expected = 0
    if (floor !== undefined) {
      lows.push(floor.score)
      for (let mask = 1; mask < size; mask++) if (boundOf[mask]! >= floor.score && boundOf[mask]! < upper) expected += estimate[mask]!
      if (scored + expected > most) return undefined
    }
    else {
      while (next < sampled.length && boundOf[sampled[next]!]! >= upper) next++
      for (const share of TIER_SHARES) {
        let low = Number.NEGATIVE_INFINITY
        for (let taken = 0; next < sampled.length && taken < share * pass.limit; next++) {
          taken += estimate[sampled[next]!]!
          low = boundOf[sampled[next]!]!
        }
        expected += tierEstimate(low, lows.length === 0 ? upper : lows[lows.length - 1]!)
        if (lows.length === 0 && scored + expected > most) return undefined
        lows.push(next === sampled.length ? Number.NEGATIVE_INFINITY : low)
        if (next === sampled.length || expected > 2 * most) break
      }
    }
    // Whether no mask of one term's usual bit alone is read: then only the slots listed by readMasks are visited.
    let onlySeveral = true
    for (let mask = 1; mask < size; mask++) {
      const bound = boundOf[mask]!
      let tier = 0
      if (bound < upper) while (tier < lows.length && bound < lows[tier]!) tier++
      chosen[mask] = bound < upper && tier < lows.length ? tier + 1 : 0
      if (chosen[mask] !== 0 && ONE_TERM[mask] === 1 && (mask & HIGH_BITS) === 0) onlySeveral = false
    }
    // The read's slots, in a shared buffer (no array per tier); a slot's tier is its mask's.
    const read = readBuffer(count)
    let taken = 0
    let first = 0
    const visited = onlySeveral ? several.length + several.highLength : count
    for (let at = 0; at < visited; at++) {
      const slot = onlySeveral ? several.slots[at < several.length ? at : several.slots.length - 1 - (at - several.length)]! : at
      // A slot listed for its first term's other bit that came to hold more terms is listed again among those.
      if (onlySeveral && at >= several.length && ONE_TERM[own[slot]!] !== 1) continue
      const mark = chosen[own[slot]!]!
      if (mark === 0 || alive[slot] === 0) continue
      if (unfiltered || (excluded?.has(slot) !== true && passesFilters(slots.records[slot]!, slots.created[slot]!, checked))) {
        read[taken++] = slot
        // The first tier is scored in full: past the budget the read stops (the sample missed it).
        if (mark === 1 && scored + ++first > most) return undefined
      }
    }
    for (let tier = 1; tier <= lows.length; tier++) {
      const reach = top.floor()?.score ?? Number.NEGATIVE_INFINITY
      const reaching: number[] = []
      for (let at = 0; at < taken; at++) {
        const mask = own[read[at]!]!
        if (chosen[mask] === tier && boundOf[mask]! >= reach) reaching.push(read[at]!)
      }
      scored += reaching.length
      if (scored > most) return undefined
      // Slots in increasing order, as the scorer takes them (the slots holding several terms are listed as found).
      if (onlySeveral) reaching.sort(increasing)
      score(reaching, undefined, top)
    }
    upper = lows[lows.length - 1]!
  }
  return { ranked: top.sorted(), bound: slot => boundOf[own[slot]!]! }
}

/**
 * The mask bits of the term at `place` (bits 2 × place and 2 × place + 1) per posting class, and
 * the bounds of the two: the usual classes' (at most the bound of the class most postings are in)
 * and the others'.
 */
function termBits(stats: ClassStats, norms: FieldNorms, termIdf: number, place: number): { bits: Uint16Array; low: number; high: number } {
  const { weights, slope } = norms
  const bounds = new Float64Array(CLASSES)
  let usual = -1
  for (let kind = 0; kind < CLASSES; kind++) {
    if (stats.population[kind] === 0) continue
    let tf = 0
    for (let field = 0; field < FIELDS; field++) {
      const count = stats.maxCounts[kind * FIELDS + field]!
      if (count > 0) tf += weights[field]! * count / (norms.base + slope[field]! * stats.minLengths[kind * FIELDS + field]!)
    }
    bounds[kind] = termPoints(termIdf, tf, norms.k1) * BOUND_SLACK
    if (usual === -1 || stats.population[kind]! > stats.population[usual]!) usual = kind
  }
  const lowBit = 1 << (2 * place)
  const bits = new Uint16Array(CLASSES)
  let high = 0
  for (let kind = 0; kind < CLASSES; kind++) {
    if (stats.population[kind] === 0) continue
    if (bounds[kind]! <= bounds[usual]!) bits[kind] = lowBit
    else {
      bits[kind] = lowBit << 1
      if (bounds[kind]! > high) high = bounds[kind]!
    }
  }
  return { bits, low: bounds[usual]!, high }
}

/** Per posting class, the mask bit `bits` (of the term at `place`) gives it, as a term-bitsets.ts kind. */
function kindsOf(bits: Uint16Array, place: number): Uint8Array {
  const kinds = new Uint8Array(CLASSES)
  const lowBit = 1 << (2 * place)
  for (let kind = 0; kind < CLASSES; kind++) kinds[kind] = bits[kind] === 0 ? NO_BIT : bits[kind] === lowBit ? USUAL_BIT : OTHER_BIT
  return kinds
}

let readScratch = new Int32Array(1024)

/** A buffer of at least `count` slots for one read of the masks. */
function readBuffer(count: number): Int32Array {
  if (readScratch.length < count) readScratch = new Int32Array(Math.max(count, readScratch.length * 2))
  return readScratch
}

const increasing = (a: number, c: number) => a - c

/** The bits for the postings of a term's other classes (the higher bound). */
const HIGH_BITS = 0xaaaa

/** Per mask: 1 when its bits are those of exactly one term. */
const ONE_TERM = new Uint8Array(1 << (2 * MAX_MASKED_TERMS))
for (let place = 0; place < MAX_MASKED_TERMS; place++) for (const bits of [1, 2, 3]) ONE_TERM[bits << (2 * place)] = 1

/**
 * Slots of the last mask pass, in the order they were found (shared like `masks`): from the start,
 * the `length` that came to hold two terms or more; from the end, the `highLength` whose first
 * term set its other classes' bit.
 */
const severalScratch = { slots: new Int32Array(1024), length: 0, highLength: 0 }

/**
 * The masks of the first `count` slots: each posting of list `ids[i]` sets the bit `bitsOf[i]`
 * gives its class. The slots that come to hold a second term, and those whose first term set its
 * other classes' bit, are listed in `severalScratch` (each at most once of each kind: 2 × `count`
 * places hold both).
 */
function readMasks(vocabulary: Vocabulary, ids: readonly number[], bitsOf: readonly Uint16Array[], count: number): Uint16Array {
  if (masks.length < count) masks = new Uint16Array(Math.max(count, masks.length * 2))
  if (severalScratch.slots.length < 2 * count) severalScratch.slots = new Int32Array(Math.max(2 * count, severalScratch.slots.length * 2))
  const own = masks
  own.fill(0, 0, count)
  const several = severalScratch.slots
  let listed = 0
  let high = several.length
  const data = vocabulary.termPostings.data
  for (let list = 0; list < ids.length; list++) {
    const bits = bitsOf[list]!
    const ranges = vocabulary.termPostings.blocks(ids[list]!, blockScratch)
    for (let range = 0; range < ranges.length; range += 2) {
      for (let at = ranges[range]!, end = ranges[range + 1]!; at < end; at += 2) {
        const slot = data[at]!
        const before = own[slot]!
        const bit = bits[postingClass(data[at + 1]!)]!
        own[slot] = before | bit
        // A slot's mask holds one term before it holds two, once: each slot is listed once.
        if (before === 0) {
          if ((bit & HIGH_BITS) !== 0) several[--high] = slot
        }
        else if (ONE_TERM[before] === 1) several[listed++] = slot
      }
    }
  }
  severalScratch.length = listed
  severalScratch.highLength = several.length - high
  return own
}
