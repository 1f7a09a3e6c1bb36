/**
 * The candidates of a ranked search: the best records by BM25F of the query's terms plus the
 * points of the terms feedback lends, bounded at every step.
 *
 * 1. The best `depth + kept` records by the query's terms (filters passed), by one of three exact
 *    passes: term at a time over every posting (bm25f.ts); document at a time with MaxScore
 *    pruning (max-score.ts) when one list outweighs the others so much that it can be skipped; or
 *    by match masks (match-masks.ts) when a few long lists are alike.
 * 2. Feedback reads the best `feedback.records` of them (feedback.ts) and lends terms.
 * 3. The lent terms add points only to the records in their postings, so the final best `depth`
 *    lie among the records of step 1 and those the lent postings reach: every other record keeps
 *    its score of step 1 and is beaten by `depth` records of step 1 that are not kept, whose
 *    scores only grew. Only those candidates are ranked again.
 *
 * Scores are the same additions in the same order as an exhaustive ranking: the query's terms in
 * their order, then the lent terms in theirs.
 */
import { accumulate, fieldNorms, idf, rank, scoreSlot, termPoints, type Bm25fParams } from './bm25f.ts'
import { passesFilters } from './filters.ts'
import { feedbackOn, lentTerms, type FeedbackParams } from './feedback.ts'
import { MAX_MASKED_TERMS, topByMatchMasks } from './match-masks.ts'
import { scoreSlots, topByMaxScore, type RankedSlot } from './max-score.ts'
import type { CheckedQuery } from './query.ts'
import { scratch } from './scratch.ts'
import type { ScoredSlot } from './slots.ts'
import type { IndexState } from './state.ts'
import { offer } from './substring-index.ts'
import { TopK } from './top-k.ts'
import type { SearchDocument } from './types.ts'

/** How the first pass walks the postings. */
export type FirstPass = 'auto' | 'exhaustive' | 'max-score' | 'match-masks'

/** The ranked candidates of one search, and the scores of the substring rule's own hits. */
export interface RankedCandidates {
  /** The best `depth` records not kept, best first. */
  ranked: RankedSlot[]
  /** Score and matched query terms of each kept slot (0 and the query's term count when no term holds it). */
  kept: Map<number, { score: number; matched: number }>
}

/**
 * Lists at least this many times longer than all other lists of the query together make the
 * MaxScore pass worth it: they become non-essential once the heap fills, and are only looked up.
 * The pass costs more per posting than the term-at-a-time one, so it is taken only then.
 */
const SKIPPABLE_RATIO = 4

/**
 * The best `depth` records by BM25F of `terms` plus feedback (when `feedback` lends), that pass
 * the filters and are not in `kept`; and the scores of the `kept` slots.
 */
export function rankedCandidates<D extends SearchDocument>(state: IndexState<D>, params: Bm25fParams, feedback: FeedbackParams, terms: ReadonlyMap<string, number>, checked: CheckedQuery, kept: ReadonlySet<number>, depth: number, pass: FirstPass = 'auto'): RankedCandidates {
  const chosen = pass === 'auto' ? autoPass(state, terms, firstDepth(feedback, kept, depth)) : pass
  if (chosen === 'max-score') return byMaxScore(state, params, feedback, terms, checked, kept, depth)
  // A forced pass never falls back (tests hold it to the others).
  if (chosen === 'match-masks') return byMatchMasks(state, params, feedback, terms, checked, kept, depth, pass === 'match-masks' ? Number.POSITIVE_INFINITY : undefined)
  return exhaustive(state, params, feedback, terms, checked, kept, depth)
}

/**
 * Postings of the query's terms, in multiples of the slots, from which the match-mask pass is
 * taken: it reads every slot's mask a few times, so it pays when the postings are many.
 */
const MASKED_SHARE = 1 / 4
/** Fewest postings of the query's terms for the match-mask pass. */
const MASKED_MIN_POSTINGS = 4096

/** The first pass of a query of `terms` with a first depth of `limit` ('auto' decided). */
function autoPass<D extends SearchDocument>(state: IndexState<D>, terms: ReadonlyMap<string, number>, limit: number): Exclude<FirstPass, 'auto'> {
  if (skippable(state, terms, limit)) return 'max-score'
  const { vocabulary } = state
  let known = 0
  let postings = 0
  for (const term of terms.keys()) {
    const id = vocabulary.termIds.get(term)
    if (id === undefined || vocabulary.termFrequency[id] === 0) continue
    known++
    postings += vocabulary.termPostings.length(id)
  }
  return known <= MAX_MASKED_TERMS && postings >= MASKED_MIN_POSTINGS && postings >= MASKED_SHARE * state.slots.count ? 'match-masks' : 'exhaustive'
}

/**
 * Whether one posting list of `terms` is {@link SKIPPABLE_RATIO} times longer than the others
 * together, and those hold enough records (twice `limit`) to fill the heap above its bound.
 */
function skippable<D extends SearchDocument>(state: IndexState<D>, terms: ReadonlyMap<string, number>, limit: number): boolean {
  const { vocabulary } = state
  let longest = 0
  let total = 0
  for (const term of terms.keys()) {
    const id = vocabulary.termIds.get(term)
    if (id === undefined) continue
    const length = vocabulary.termPostings.length(id)
    total += length
    if (length > longest) longest = length
  }
  return longest > SKIPPABLE_RATIO * (total - longest) && total - longest >= 2 * limit
}

function firstDepth(feedback: FeedbackParams, kept: ReadonlySet<number>, depth: number): number {
  return Math.max(depth + kept.size, feedbackOn(feedback) ? feedback.records : 0)
}

/** Term at a time: every posting of the query's terms scored into the scratch. */
function exhaustive<D extends SearchDocument>(state: IndexState<D>, params: Bm25fParams, feedback: FeedbackParams, terms: ReadonlyMap<string, number>, checked: CheckedQuery, kept: ReadonlySet<number>, depth: number): RankedCandidates {
  const { slots } = state
  const ranking = rank(state, params, terms)
  const { scores, stamps, matched } = scratch
  const touched = ranking.touched
  const capacity = firstDepth(feedback, kept, depth)
  let top: ScoredSlot[]
  if (touched.length <= capacity) {
    // Every record found fits (a small partition): no heap, one sort.
    top = []
    for (const slot of touched) if (passesFilters(slots.records[slot]!, slots.created[slot]!, checked)) top.push({ slot, score: scores[slot]! })
    top.sort((a, c) => slots.compare(c, a))
  }
  else {
    const best = new TopK<ScoredSlot>(capacity, slots.compare)
    // Newest first: equal scores then stop at the heap's floor. A score under the floor's is
    // dropped here, without the call (most postings of a common word).
    let floor = Number.NEGATIVE_INFINITY
    for (let index = touched.length - 1; index >= 0; index--) {
      const slot = touched[index]!
      const score = scores[slot]!
      if (score < floor) continue
      offer(slots, best, slot, score, checked)
      floor = best.floor()?.score ?? floor
    }
    top = best.sorted()
  }
  const reached: number[] = []
  if (feedbackOn(feedback)) {
    const lent = lentTerms(state, feedback, terms, top.slice(0, feedback.records))
    if (lent.size > 0) accumulate(state, params, lent, ranking, false, reached)
  }
  const stamp = ranking.stamp
  const keptScores = new Map<number, { score: number; matched: number }>()
  for (const slot of kept) keptScores.set(slot, stamps[slot] === stamp ? { score: scores[slot]!, matched: matched[slot]! } : { score: 0, matched: terms.size })
  return { ranked: bestOf(state, top, reached, kept, depth, checked), kept: keptScores }
}

/**
 * The best `depth` of the first pass's records (`top`, filters passed) and the records the lent
 * terms reached (`reached`, repeats allowed), by their scores in the scratch, `kept` left out.
 * When they are no more than `depth` (a small partition), all of them sorted once; else through a
 * heap whose floor is checked before the filters. The same records and order either way.
 */
function bestOf<D extends SearchDocument>(state: IndexState<D>, top: readonly ScoredSlot[], reached: readonly number[], kept: ReadonlySet<number>, depth: number, checked: CheckedQuery): RankedSlot[] {
  const { slots } = state
  const { scores, matched } = scratch
  if (top.length + reached.length <= depth) {
    const all: RankedSlot[] = []
    const offered = reached.length > 0 ? new Set<number>() : undefined
    for (const { slot } of top) {
      if (kept.has(slot)) continue
      offered?.add(slot)
      all.push({ slot, score: scores[slot]!, matched: matched[slot]! })
    }
    for (const slot of reached) {
      if (kept.has(slot) || offered!.has(slot)) continue
      offered!.add(slot)
      if (passesFilters(slots.records[slot]!, slots.created[slot]!, checked)) all.push({ slot, score: scores[slot]!, matched: matched[slot]! })
    }
    return all.sort((a, c) => slots.compare(c, a))
  }
  const final = new TopK<ScoredSlot>(depth, slots.compare)
  const offered = new Set<number>(kept)
  const consider = (slot: number) => {
    if (offered.has(slot)) return
    offered.add(slot)
    offer(slots, final, slot, scores[slot]!, checked)
  }
  for (const candidate of top) consider(candidate.slot)
  for (const slot of reached) if (scores[slot]! >= (final.floor()?.score ?? Number.NEGATIVE_INFINITY)) consider(slot)
  return final.sorted().map(({ slot, score }) => ({ slot, score, matched: matched[slot]! }))
}

/**
 * The match-mask first pass (match-masks.ts); the records the lent terms reach are scored again
 * only when their bound (the mask's, plus the greatest points of a lent term per lent term holding
 * them) reaches the floor of the best `depth` of the first pass's records scored with every term:
 * a record under it cannot enter.
 */
function byMatchMasks<D extends SearchDocument>(state: IndexState<D>, params: Bm25fParams, feedback: FeedbackParams, terms: ReadonlyMap<string, number>, checked: CheckedQuery, kept: ReadonlySet<number>, depth: number, budget?: number): RankedCandidates {
  const { slots, vocabulary } = state
  const first = topByMatchMasks(state, params, terms, { limit: firstDepth(feedback, kept, depth), checked, counted: terms.size }, budget)
  if (first === undefined) return exhaustive(state, params, feedback, terms, checked, kept, depth)
  const top = first.ranked
  const final = new TopK<RankedSlot>(depth, slots.compare)
  const lent = feedbackOn(feedback) ? lentTerms(state, feedback, terms, top.slice(0, feedback.records)) : new Map<string, number>()
  let all: ReadonlyMap<string, number> = terms
  if (lent.size === 0) {
    for (const candidate of top) if (!kept.has(candidate.slot)) final.push(candidate)
  }
  else {
    all = new Map([...terms, ...lent])
    // The first pass's slots, marked in a per-slot scratch (unmarked at the end of this block).
    const inTop = topMarks(slots.count)
    for (const candidate of top) inTop[candidate.slot] = 1
    // Per slot, how many lent terms hold it; a lent term adds at most `lentMost` points.
    const hits = lentHits(slots.count)
    const norms = fieldNorms(state, params)
    const slope = norms.slope
    const lists: number[] = []
    let lentMost = 0
    let heldMost = 0
    // With the term counts' pass, the slots the lent terms reach are also set in a bitset.
    const reachable = first.reaching === undefined ? undefined : reachedWords(slots.count)
    for (const [term, weight] of lent) {
      const id = vocabulary.termIds.get(term)
      if (id === undefined || vocabulary.termFrequency[id] === 0) continue
      const maxTf = state.bounds.maxTf(vocabulary, slots, id, params.weights, norms.base, slope)
      lentMost = Math.max(lentMost, termPoints(weight * idf(slots.live, vocabulary.termFrequency[id]!), maxTf, norms.k1) * LENT_SLACK)
      lists.push(id)
      const data = vocabulary.termPostings.data
      const ranges = vocabulary.termPostings.blocks(id, blockScratch)
      for (let range = 0; range < ranges.length; range += 2) {
        for (let at = ranges[range]!, end = ranges[range + 1]!; at < end; at += 2) {
          const slot = data[at]!
          const held = ++hits[slot]!
          if (held > heldMost) heldMost = held
          if (reachable !== undefined) reachable[slot >>> 5]! |= 1 << (slot & 31)
        }
      }
    }
    // The first pass's records: their scores by the query's terms, then the lent terms' points
    // added in order (a record no lent term holds keeps its score: nothing is added).
    const own = top.filter(candidate => !kept.has(candidate.slot))
    const lending = own.filter(candidate => hits[candidate.slot]! > 0).sort((a, c) => a.slot - c.slot)
    for (const candidate of own) if (hits[candidate.slot] === 0) final.push(candidate)
    const lentScored = scoreSlots(state, params, lent, 0, lending.map(candidate => candidate.slot), lending.map(candidate => candidate.score))
    lentScored.forEach((candidate, at) => final.push({ slot: candidate.slot, score: candidate.score, matched: lending[at]!.matched }))
    const floor = final.floor()?.score ?? Number.NEGATIVE_INFINITY
    const reached: number[] = []
    // A slot the lent terms reach needs a mask whose bound is at least this (rounding allowed for) to reach the floor.
    const needed = floor - heldMost * lentMost - Math.abs(floor) * 1e-9
    if (first.reaching !== undefined && needed > 0) {
      // Only the slots whose region of terms can reach `needed` are looked at (a slot holding no
      // query term has bound 0, under it); the counts are then cleared at once.
      const { slots: reaching, boundOf } = first.reaching
      const found = reaching(needed, reachable!)
      for (let at = 0; at < found.length; at++) {
        const slot = found.slots[at]!
        if (boundOf[found.masks[at]!]! + hits[slot]! * lentMost >= floor && inTop[slot] === 0 && !kept.has(slot)) reached.push(slot)
      }
    }
    else {
      const data = vocabulary.termPostings.data
      const alive = slots.alive
      for (const id of lists) {
        const ranges = vocabulary.termPostings.blocks(id, blockScratch)
        for (let range = 0; range < ranges.length; range += 2) {
          for (let at = ranges[range]!, end = ranges[range + 1]!; at < end; at += 2) {
            const slot = data[at]!
            const held = hits[slot]!
            if (held === 0) continue
            hits[slot] = 0
            if (first.bound(slot) + held * lentMost >= floor && alive[slot] === 1 && inTop[slot] === 0 && !kept.has(slot)) reached.push(slot)
          }
        }
      }
    }
    for (const candidate of top) inTop[candidate.slot] = 0
    if (reachable !== undefined) {
      hits.fill(0, 0, slots.count)
      reachable.fill(0, 0, (slots.count + 31) >>> 5)
    }
    for (const candidate of scoreSlots(state, params, all, terms.size, reached.sort((a, c) => a - c))) {
      if (passesFilters(slots.records[candidate.slot]!, slots.created[candidate.slot]!, checked)) final.push(candidate)
    }
  }
  const keptScores = new Map<number, { score: number; matched: number }>()
  for (const slot of kept) {
    const scored = scoreSlot(state, params, all, slot, terms.size)
    keptScores.set(slot, scored.score === 0 ? { score: 0, matched: terms.size } : scored)
  }
  return { ranked: final.sorted(), kept: keptScores }
}

// A lent term's bound is raised by this share so that rounding never prunes a record that reaches the floor exactly.
const LENT_SLACK = 1 + 1e-9

let hitScratch = new Uint16Array(1024)
let topScratch = new Uint8Array(1024)

/** A zeroed per-slot mark for `count` slots (the pass that sets marks clears them). */
function topMarks(count: number): Uint8Array {
  if (topScratch.length < count) topScratch = new Uint8Array(Math.max(count, topScratch.length * 2))
  return topScratch
}
let reachedScratch = new Int32Array(32)

/** A zeroed bitset of `count` slots (cleared by the pass that sets it). */
function reachedWords(count: number): Int32Array {
  const words = (count + 31) >>> 5
  if (reachedScratch.length < words) reachedScratch = new Int32Array(Math.max(words, reachedScratch.length * 2))
  return reachedScratch
}
const blockScratch: number[] = []

/**
 * A zeroed per-slot count of lent terms for `count` slots (lent terms are at most 65,535). It
 * stays zeroed between passes: the walk that reads the counts sets each one it reads back to 0
 * (it walks the same lists as the one that counted), so it is not cleared per search.
 */
function lentHits(count: number): Uint16Array {
  if (hitScratch.length < count) hitScratch = new Uint16Array(Math.max(count, hitScratch.length * 2))
  return hitScratch
}

/** Document at a time with MaxScore pruning; the candidates the lent terms reach scored again exactly. */
function byMaxScore<D extends SearchDocument>(state: IndexState<D>, params: Bm25fParams, feedback: FeedbackParams, terms: ReadonlyMap<string, number>, checked: CheckedQuery, kept: ReadonlySet<number>, depth: number): RankedCandidates {
  const { slots } = state
  const top = topByMaxScore(state, params, terms, { limit: firstDepth(feedback, kept, depth), checked, counted: terms.size })
  const final = new TopK<RankedSlot>(depth, slots.compare)
  let all: ReadonlyMap<string, number> = terms
  const lent = feedbackOn(feedback) ? lentTerms(state, feedback, terms, top.slice(0, feedback.records)) : new Map<string, number>()
  if (lent.size === 0) {
    for (const candidate of top) if (!kept.has(candidate.slot)) final.push(candidate)
  }
  else {
    all = new Map([...terms, ...lent])
    // The records the lent postings reach, and those of the first pass, scored with every term.
    const candidates = new Set<number>(top.map(candidate => candidate.slot))
    const { vocabulary } = state
    for (const term of lent.keys()) {
      const id = vocabulary.termIds.get(term)
      if (id !== undefined) vocabulary.termPostings.forEach(id, (slot) => { if (slots.alive[slot] === 1) candidates.add(slot) })
    }
    for (const slot of kept) candidates.delete(slot)
    for (const candidate of scoreSlots(state, params, all, terms.size, [...candidates].sort((a, c) => a - c))) {
      const lowest = final.floor()
      if (lowest && slots.compare(candidate, lowest) <= 0) continue
      if (slots.alive[candidate.slot] === 1 && passesFilters(slots.records[candidate.slot]!, slots.created[candidate.slot]!, checked)) final.push(candidate)
    }
  }
  const keptScores = new Map<number, { score: number; matched: number }>()
  for (const slot of kept) {
    const scored = scoreSlot(state, params, all, slot, terms.size)
    keptScores.set(slot, scored.score === 0 ? { score: 0, matched: terms.size } : scored)
  }
  return { ranked: final.sorted(), kept: keptScores }
}
