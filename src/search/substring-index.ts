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
 * pairs, or `undefined` when the needle has no letter or digit (every record is a candidate).
 * Each piece of the needle (a run of it) lies in one run of any text holding the needle: a run
 * equal to the piece when other characters stand on both its sides in the needle, ending with it
 * when it starts the needle, starting with it when it ends the needle, containing it when it is
 * the whole needle's only piece. The holders of the rarest pieces' runs are intersected; a piece
 * no run fits means no record holds the needle.
 */
function phraseCandidates<D extends SearchDocument>(state: IndexState<D>, needle: string): number[] | undefined {
  const { slots, runs } = state
  const alive = slots.alive
  const pieces: Array<{ runs: number[]; postings: number }> = []
  for (const match of needle.matchAll(RUN)) {
    const piece = match[0]
    const startsRun = match.index > 0
    const endsRun = match.index + piece.length < needle.length
    const fitting: number[] = []
    let postings = 0
    if (startsRun && endsRun) {
      const run = runs.ids.get(piece)
      if (run !== undefined) {
        fitting.push(run)
        postings = runs.postings.length(run)
      }
    }
    else {
      runs.forEachContaining(piece, (run) => {
        const text = runs.texts[run]!
        if ((startsRun && !text.startsWith(piece)) || (endsRun && !text.endsWith(piece))) return
        fitting.push(run)
        postings += runs.postings.length(run)
      })
    }
    if (fitting.length === 0) return []
    pieces.push({ runs: fitting, postings })
  }
  if (pieces.length === 0) return undefined
  pieces.sort((a, c) => a.postings - c.postings)
  const rarest = pieces[0]!
  // Holders of the next rarest pieces (when not much longer): a slot must be in every one to stay.
  const stamps = scratch.stamps
  const counts = scratch.scores
  const stamp = scratchFor(slots.count)
  let required = 0
  for (let at = 1; at < pieces.length && required < MAX_INTERSECTED - 1; at++) {
    const piece = pieces[at]!
    if (piece.postings > INTERSECT_RATIO * rarest.postings) break
    required++
    for (const run of piece.runs) {
      runs.postings.forEach(run, (slot) => {
        if (stamps[slot] !== stamp) {
          stamps[slot] = stamp
          counts[slot] = 0
        }
        if (counts[slot] === required - 1) counts[slot] = required
      })
    }
  }
  const kept = (slot: number) => alive[slot] !== 0 && (required === 0 || (stamps[slot] === stamp && counts[slot] === required))
  const out: number[] = []
  if (rarest.runs.length === 1) {
    runs.postings.forEach(rarest.runs[0]!, (slot, occurrences) => {
      if (kept(slot)) out.push(slot, occurrences)
    })
    return out
  }
  // Several runs fit the rarest piece: a record's bound is its occurrences of all of them.
  const bounds = new Map<number, number>()
  for (const run of rarest.runs) {
    runs.postings.forEach(run, (slot, occurrences) => {
      if (kept(slot)) bounds.set(slot, (bounds.get(slot) ?? 0) + occurrences)
    })
  }
  for (const [slot, bound] of bounds) out.push(slot, bound)
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
