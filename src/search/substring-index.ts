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
  let candidates: number[] | undefined
  for (const match of needle.matchAll(RUN)) {
    const holders: number[] = []
    const pieceStamp = scratchFor(slots.count)
    runs.forEachContaining(match[0], (run) => {
      runs.postings.forEach(run, (slot) => {
        if (alive[slot] !== 0 && scratch.stamps[slot] !== pieceStamp) {
          scratch.stamps[slot] = pieceStamp
          holders.push(slot)
        }
      })
    })
    if (!candidates || holders.length < candidates.length) candidates = holders
    if (candidates.length === 0) break
  }
  const visit = (slot: number) => {
    const score = substringScore(slots.records[slot]!, needle, state.text)
    if (score > 0) offer(slots, top, slot, score, checked)
  }
  if (candidates) for (let index = candidates.length - 1; index >= 0; index--) visit(candidates[index]!)
  else for (let slot = slots.count - 1; slot >= 0; slot--) if (alive[slot] !== 0) visit(slot)
  return top.sorted()
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
