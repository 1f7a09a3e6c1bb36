/**
 * The substring rule answered from the run index: the top `limit` of `searchRecords` over an
 * index's live records, same scores, filters and order, without reading every record.
 *
 * A query of letters and digits only lies inside one run of each occurrence, so its score per
 * record is the sum over the runs containing it of occurrences × the run's count in the record.
 * Any other query is verified against the text of the records holding its rarest run piece (or
 * of every record when it has no letter or digit).
 */
import { passesFilters } from './filters.ts'
import type { CheckedQuery } from './query.ts'
import { ONLY_RUN, RUN } from './runs.ts'
import { scratch, scratchFor } from './scratch.ts'
import type { ScoredSlot, Slots } from './slots.ts'
import type { IndexState } from './state.ts'
import { substringScore } from './substring-rule.ts'
import { TopK } from './top-k.ts'
import type { SearchDocument } from './types.ts'

const blockScratch: number[] = []

/** The substring rule's top `checked.limit` slots of `state`, best first. */
export function substringSearch<D extends SearchDocument>(state: IndexState<D>, checked: CheckedQuery): ScoredSlot[] {
  const { slots, runs } = state
  const needle = checked.needle
  const top = new TopK<ScoredSlot>(checked.limit, slots.compare)
  const alive = slots.alive
  if (ONLY_RUN.test(needle)) {
    const stamp = scratchFor(slots.count)
    const scores = scratch.scores
    const stamps = scratch.stamps
    const touched: number[] = []
    runs.forEachContaining(needle, (run, occurrences) => {
      const data = runs.postings.data
      const ranges = runs.postings.blocks(run, blockScratch)
      for (let range = 0; range < ranges.length; range += 2) {
        for (let at = ranges[range]!, end = ranges[range + 1]!; at < end; at += 2) {
          const slot = data[at]!
          if (alive[slot] === 0) continue
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
    for (let index = touched.length - 1; index >= 0; index--) offer(slots, top, touched[index]!, scores[touched[index]!]!, checked)
    return top.sorted()
  }
  const candidates = phraseCandidates(state, needle)
  const visit = (slot: number, bound: number) => {
    // A record holds at most `bound` occurrences: verify it only when that could enter the heap.
    const floor = top.floor()
    if (floor && !(bound > floor.score || (bound === floor.score && slots.compare({ slot, score: bound }, floor) > 0))) return
    const score = substringScore(slots.records[slot]!, needle, state.text)
    if (score > 0) offer(slots, top, slot, score, checked)
  }
  if (candidates) for (let index = candidates.length - 2; index >= 0; index -= 2) visit(candidates[index]!, candidates[index + 1]!)
  else for (let slot = slots.count - 1; slot >= 0; slot--) if (alive[slot] !== 0) visit(slot, Number.POSITIVE_INFINITY)
  return top.sorted()
}

/** Pieces of a needle whose holders are intersected at most (the rest is left to verification). */
const MAX_INTERSECTED = 3
/** A further piece is intersected only when its postings are at most this many times the candidates. */
const INTERSECT_RATIO = 16

/**
 * The live slots that can hold `needle` (a query that is not one run), as (slot, most occurrences)
 * pairs in slot order, or `undefined` when the needle has no letter or digit (every record is a
 * candidate). A piece of the needle (a run of it) bounded on both sides by other characters is a
 * whole run of any text holding the needle: the holders of the rarest such runs are intersected,
 * and a missing one means no record holds the needle. A needle without such a piece falls back to
 * the holders of the runs containing its rarest piece.
 */
function phraseCandidates<D extends SearchDocument>(state: IndexState<D>, needle: string): number[] | undefined {
  const { slots, runs } = state
  const alive = slots.alive
  const exact: number[] = []
  const partial: string[] = []
  for (const match of needle.matchAll(RUN)) {
    const piece = match[0]
    if (match.index > 0 && match.index + piece.length < needle.length) {
      const run = runs.ids.get(piece)
      if (run === undefined) return []
      exact.push(run)
    }
    else partial.push(piece)
  }
  if (exact.length === 0 && partial.length === 0) return undefined
  const out: number[] = []
  if (exact.length > 0) {
    exact.sort((a, c) => runs.postings.length(a) - runs.postings.length(c))
    const rarest = exact[0]!
    const wanted = runs.postings.length(rarest)
    // Stamp the holders of the other pieces first; a slot must carry every stamp to stay.
    const stamps = scratch.stamps
    let required = 0
    const stamp = scratchFor(slots.count)
    const marks: number[] = []
    for (let at = 1; at < exact.length && marks.length < MAX_INTERSECTED - 1; at++) {
      const run = exact[at]!
      if (run === exact[at - 1] || runs.postings.length(run) > INTERSECT_RATIO * wanted) continue
      marks.push(run)
    }
    // Holders of every marked run: counted with the score scratch (stamp, then count per slot).
    const counts = scratch.scores
    for (const run of marks) {
      required++
      runs.postings.forEach(run, (slot) => {
        if (stamps[slot] !== stamp) {
          stamps[slot] = stamp
          counts[slot] = 0
        }
        if (counts[slot] === required - 1) counts[slot] = required
      })
    }
    runs.postings.forEach(rarest, (slot, occurrences) => {
      if (alive[slot] === 0) return
      if (required > 0 && (stamps[slot] !== stamp || counts[slot] !== required)) return
      out.push(slot, occurrences)
    })
    return out
  }
  // No whole-run piece: the holders of the runs containing the rarest partial piece.
  let best: number[] | undefined
  for (const piece of partial) {
    const holders: number[] = []
    const stamp = scratchFor(slots.count)
    const stamps = scratch.stamps
    const counts = scratch.scores
    runs.forEachContaining(piece, (run, inRun) => {
      runs.postings.forEach(run, (slot, occurrences) => {
        if (alive[slot] === 0) return
        if (stamps[slot] !== stamp) {
          stamps[slot] = stamp
          counts[slot] = holders.length
          holders.push(slot, 0)
        }
        holders[counts[slot]! + 1]! += inRun * occurrences
      })
    })
    if (!best || holders.length < best.length) best = holders
    if (best.length === 0) break
  }
  // Slots in ascending order, as the visit goes newest (highest slot) first.
  return sortPairs(best!)
}

/** `pairs` (slot, value) sorted by slot. */
function sortPairs(pairs: number[]): number[] {
  const order = Array.from({ length: pairs.length / 2 }, (_, at) => at).sort((a, c) => pairs[2 * a]! - pairs[2 * c]!)
  const out: number[] = []
  for (const at of order) out.push(pairs[2 * at]!, pairs[2 * at + 1]!)
  return out
}

/**
 * Offers `slot` at `score` to `top`: compared with the heap's floor first (most candidates of a
 * common word never reach the filters), then filtered.
 */
export function offer<D extends SearchDocument>(slots: Slots<D>, top: TopK<ScoredSlot>, slot: number, score: number, checked: CheckedQuery): void {
  if (top.capacity <= 0) return
  const floor = top.floor()
  if (floor && !(score > floor.score || (score === floor.score && (slots.created[slot]! - slots.created[floor.slot]! || slots.positions[slot]! - slots.positions[floor.slot]!) > 0))) return
  if (passesFilters(slots.records[slot]!, slots.created[slot]!, checked)) top.push({ slot, score })
}
