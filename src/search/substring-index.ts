/**
 * The substring rule answered from the run index: the top `limit` of `searchRecords` over an
 * index's live records, same scores, filters and order, without reading every record.
 *
 * A query of letters and digits only lies inside one run of each occurrence, so its score per
 * record is the sum over the runs containing it of occurrences × the run's count in the record.
 * Any other query is verified against the text of the records holding its rarest run piece (or
 * of every record when it has no letter or digit).
 */
import { popcount } from './arrays.ts'
import { passesFilters } from './filters.ts'
import { holderBitset } from './holder-bitsets.ts'
import { IMPACT_MIN_POSTINGS } from './impact-order.ts'
import type { CheckedQuery } from './query.ts'
import { ONLY_RUN, RUN, type RunIndex } from './runs.ts'
import { scratch, scratchFor } from './scratch.ts'
import type { ScoredSlot, Slots } from './slots.ts'
import type { IndexState } from './state.ts'
import { substringScore } from './substring-rule.ts'
import { TopK } from './top-k.ts'
import type { SearchDocument } from './types.ts'

const blockScratch: number[] = []

/**
 * The substring rule's top `checked.limit` slots of `state`, best first. A one-run needle whose
 * runs hold at least `impactMin` postings (default {@link IMPACT_MIN_POSTINGS}) is answered from
 * their impact-ordered copies ({@link byImpact}), any other by reading every posting of its runs.
 */
export function substringSearch<D extends SearchDocument>(state: IndexState<D>, checked: CheckedQuery, impactMin = IMPACT_MIN_POSTINGS): ScoredSlot[] {
  const { slots, runs } = state
  const needle = checked.needle
  const alive = slots.alive
  if (ONLY_RUN.test(needle)) {
    const found: number[] = []
    let postings = 0
    runs.forEachContaining(needle, (run, occurrences) => {
      found.push(run, occurrences)
      postings += runs.postings.length(run)
    })
    // In no run (a word of other scopes): no record holds it.
    if (found.length === 0) return []
    const top = new TopK<ScoredSlot>(checked.limit, slots.compare)
    if (postings >= impactMin && found.length <= 2 * MAX_IMPACT_RUNS) return byImpact(state, checked, found)
    const stamp = scratchFor(slots.count)
    const scores = scratch.scores
    const stamps = scratch.stamps
    const touched: number[] = []
    const data = runs.postings.data
    for (let at = 0; at < found.length; at += 2) {
      const occurrences = found[at + 1]!
      const ranges = runs.postings.blocks(found[at]!, blockScratch)
      for (let range = 0; range < ranges.length; range += 2) {
        for (let pair = ranges[range]!, end = ranges[range + 1]!; pair < end; pair += 2) {
          const slot = data[pair]!
          if (alive[slot] === 0) continue
          const points = occurrences * data[pair + 1]!
          if (stamps[slot] !== stamp) {
            stamps[slot] = stamp
            scores[slot] = points
            touched.push(slot)
          }
          else scores[slot]! += points
        }
      }
    }
    // Newest first: ties go to the newer record, so older equal scores then fail the floor check
    // instead of each entering the heap (a common word has thousands of equal-score holders).
    for (let index = touched.length - 1; index >= 0; index--) offer(slots, top, touched[index]!, scores[touched[index]!]!, checked)
    return top.sorted()
  }
  const top = new TopK<ScoredSlot>(checked.limit, slots.compare)
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

/** Most runs a needle may lie in for {@link byImpact} (each is read through its impact-ordered copy). */
const MAX_IMPACT_RUNS = 8

/**
 * The substring rule's top `checked.limit` for a one-run needle from the impact-ordered copies of
 * the runs holding it (`found`: run, occurrences of the needle in it; impact-order.ts), by the
 * threshold algorithm (Fagin, Lotem and Naor, 2001): the postings appended since a copy was made
 * are scored first; then the copies are read best first, each new slot scored in full (its count
 * in every other run looked up), until no slot left unread can beat the heap's floor: the sum of
 * the counts the copies stand on is below the floor's score, or equal to it while a copy stands
 * on a slot that is not newer than the floor's (a slot left unread that scores the sum holds each
 * run at that count, so it is not newer either). Same hits, scores and order as scoring every
 * posting.
 */
function byImpact<D extends SearchDocument>(state: IndexState<D>, checked: CheckedQuery, found: readonly number[]): ScoredSlot[] {
  const { slots, runs } = state
  const top = new TopK<ScoredSlot>(checked.limit, slots.compare)
  const alive = slots.alive
  const { created, positions } = slots
  const lists = runs.postings
  const count = found.length / 2
  const copies = Array.from({ length: count }, (_, run) => runs.impactCopy(found[2 * run]!, slots))
  const occurrences = Int32Array.from({ length: count }, (_, run) => found[2 * run + 1]!)
  const stamp = scratchFor(slots.count)
  const stamps = scratch.stamps
  const scoreOf = (slot: number): number => {
    let score = 0
    for (let run = 0; run < count; run++) {
      const value = lists.lookup(found[2 * run]!, slot)
      if (value > 0) score += occurrences[run]! * value
    }
    return score
  }
  const visit = (slot: number, single: number) => {
    if (alive[slot] === 0 || stamps[slot] === stamp) return
    stamps[slot] = stamp
    offer(slots, top, slot, count === 1 ? single : scoreOf(slot), checked)
  }
  for (let run = 0; run < count; run++) {
    const ranges = lists.blocks(found[2 * run]!, blockScratch)
    let skip = copies[run]!.length
    const data = lists.data
    for (let range = 0; range < ranges.length; range += 2) {
      const pairs = (ranges[range + 1]! - ranges[range]!) / 2
      if (skip >= pairs) {
        skip -= pairs
        continue
      }
      for (let pair = ranges[range]! + skip * 2, end = ranges[range + 1]!; pair < end; pair += 2) visit(data[pair]!, occurrences[run]! * data[pair + 1]!)
      skip = 0
    }
  }
  const cursors = new Int32Array(count)
  for (;;) {
    let threshold = 0
    let best = -1
    let bestPoints = 0
    for (let run = 0; run < count; run++) {
      const copy = copies[run]!
      if (cursors[run]! >= copy.length) continue
      const points = occurrences[run]! * copy.counts[cursors[run]!]!
      threshold += points
      if (points > bestPoints) {
        bestPoints = points
        best = run
      }
    }
    if (best === -1) break
    const floor = top.floor()
    if (floor !== undefined && (threshold < floor.score || (threshold === floor.score && notNewer(floor.slot)))) break
    const copy = copies[best]!
    const at = cursors[best]!++
    visit(copy.slots[at]!, bestPoints)
  }
  return top.sorted()

  /** Whether a copy not read to its end stands on a slot not newer than `floor` (creation time, then position). */
  function notNewer(floor: number): boolean {
    for (let run = 0; run < count; run++) {
      const copy = copies[run]!
      if (cursors[run]! >= copy.length) continue
      const slot = copy.slots[cursors[run]!]!
      if ((created[slot]! - created[floor]! || positions[slot]! - positions[floor]!) <= 0) return true
    }
    return false
  }
}

let heldScratch = new Uint8Array(1024)

/** A run of a needle, and whether other characters stand before it (`startsRun`) and after it (`endsRun`) in the needle. */
interface NeedlePiece {
  readonly piece: string
  readonly startsRun: boolean
  readonly endsRun: boolean
}

/** The pieces of recent needles (they depend on the needle alone: one split for every scope searched). */
const needlePieces = new Map<string, readonly NeedlePiece[]>()
const MAX_NEEDLES = 256

function piecesOf(needle: string): readonly NeedlePiece[] {
  let pieces = needlePieces.get(needle)
  if (pieces === undefined) {
    pieces = Array.from(needle.matchAll(RUN), match => ({ piece: match[0], startsRun: match.index > 0, endsRun: match.index + match[0].length < needle.length }))
    if (needlePieces.size >= MAX_NEEDLES) needlePieces.clear()
    needlePieces.set(needle, pieces)
  }
  return pieces
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
function phraseCandidates<D extends SearchDocument>(state: IndexState<D>, needle: string): ArrayLike<number> | undefined {
  const { slots, runs } = state
  const pieces: Array<{ runs: number[]; postings: number }> = []
  // Pieces with other characters on both sides first: each is one run, looked up (none: no holder).
  const ends: NeedlePiece[] = []
  for (const needlePiece of piecesOf(needle)) {
    const { piece, startsRun, endsRun } = needlePiece
    if (!(startsRun && endsRun)) {
      ends.push(needlePiece)
      continue
    }
    const run = runs.ids.get(piece)
    if (run === undefined) return []
    pieces.push({ runs: [run], postings: runs.postings.length(run) })
  }
  // Short lists of those pieces that no record holds together: no holder, and the pieces at the
  // needle's ends (looked for among every run) are never looked for.
  if (pieces.length >= 2) {
    pieces.sort((a, c) => a.postings - c.postings)
    if (pieces[0]!.postings <= PRECHECK_POSTINGS && intersected(slots, runs, pieces).length === 0) return []
  }
  for (const { piece, startsRun, endsRun } of ends) {
    const fitting: number[] = []
    let postings = 0
    runs.forEachContaining(piece, (run) => {
      const text = runs.texts[run]!
      if ((startsRun && !text.startsWith(piece)) || (endsRun && !text.endsWith(piece))) return
      fitting.push(run)
      postings += runs.postings.length(run)
    })
    if (fitting.length === 0) return []
    pieces.push({ runs: fitting, postings })
  }
  if (pieces.length === 0) return undefined
  pieces.sort((a, c) => a.postings - c.postings)
  return intersected(slots, runs, pieces)
}

/** Postings of the rarest inner piece of a needle under which its inner pieces are intersected first, alone. */
const PRECHECK_POSTINGS = 1024

/**
 * The live slots holding the runs of the rarest of `pieces` (sorted by postings) and of the next
 * rarest ones (at most {@link MAX_INTERSECTED} in all, each within {@link INTERSECT_RATIO} of the
 * rarest), as (slot, most occurrences) pairs.
 */
function intersected(slots: Slots<unknown>, runs: RunIndex, pieces: ReadonlyArray<{ runs: number[]; postings: number }>): ArrayLike<number> {
  const alive = slots.alive
  const rarest = pieces[0]!
  if (pieces.length >= 2 && rarest.postings >= (slots.count + 31) >>> 5 && rarest.runs.length <= MAX_LOOKED_UP_RUNS) return intersectedBitsets(slots, runs, pieces)
  // Holders of the next rarest pieces (when not much longer): a slot must be in every one to stay.
  // Per slot: how many of the pieces intersected so far hold it (one byte a slot: a small array to write at random).
  if (heldScratch.length < slots.count) heldScratch = new Uint8Array(Math.max(slots.count, heldScratch.length * 2))
  const counts = heldScratch
  counts.fill(0, 0, slots.count)
  let required = 0
  for (let at = 1; at < pieces.length && required < MAX_INTERSECTED - 1; at++) {
    const piece = pieces[at]!
    if (piece.postings > INTERSECT_RATIO * rarest.postings) break
    required++
    const data = runs.postings.data
    for (const run of piece.runs) {
      const ranges = runs.postings.blocks(run, blockScratch)
      for (let range = 0; range < ranges.length; range += 2) {
        for (let pair = ranges[range]!, end = ranges[range + 1]!; pair < end; pair += 2) {
          const slot = data[pair]!
          if (counts[slot] === required - 1) counts[slot] = required
        }
      }
    }
  }
  const kept = (slot: number) => alive[slot] !== 0 && counts[slot] === required
  const out: number[] = []
  if (rarest.runs.length === 1) {
    const data = runs.postings.data
    const ranges = runs.postings.blocks(rarest.runs[0]!, blockScratch)
    for (let range = 0; range < ranges.length; range += 2) {
      for (let pair = ranges[range]!, end = ranges[range + 1]!; pair < end; pair += 2) if (kept(data[pair]!)) out.push(data[pair]!, data[pair + 1]!)
    }
    return heldByTheRest(runs, pieces.slice(required + 1), out)
  }
  // Several runs fit the rarest piece: a record's bound is its occurrences of all of them.
  const bounds = new Map<number, number>()
  for (const run of rarest.runs) {
    runs.postings.forEach(run, (slot, occurrences) => {
      if (kept(slot)) bounds.set(slot, (bounds.get(slot) ?? 0) + occurrences)
    })
  }
  for (const [slot, bound] of bounds) out.push(slot, bound)
  return heldByTheRest(runs, pieces.slice(required + 1), out)
}

let andScratch = new Int32Array(32)

/**
 * {@link intersected} for long lists (the rarest piece has a posting per 32 slots or more, and at
 * most {@link MAX_LOOKED_UP_RUNS} runs): the holders' bitsets (holder-bitsets.ts) of every piece
 * of at most that many runs are ANDed, one word per 32 slots and run; a slot left holds them all.
 * Its bound is its occurrences of the rarest piece's runs, looked up, when at most
 * {@link LOOKED_UP_CANDIDATES} slots are left; else the least occurrences of any piece ANDed,
 * summed in one pass over each piece's postings (a phrase most records hold then verifies only the
 * records that can enter the page). Pieces of more runs are left to verification. The pairs are
 * in slot order, in a buffer the next search reuses.
 */
function intersectedBitsets(slots: Slots<unknown>, runs: RunIndex, pieces: ReadonlyArray<{ runs: number[]; postings: number }>): Int32Array {
  const words = (slots.count + 31) >>> 5
  if (andScratch.length < words) andScratch = new Int32Array(Math.max(words, andScratch.length * 2))
  const all = andScratch
  all.fill(0, 0, words)
  for (const run of pieces[0]!.runs) {
    const held = holderBitset(runs.postings, run, slots.count)
    for (let word = 0; word < words; word++) all[word]! |= held[word]!
  }
  for (let at = 1; at < pieces.length; at++) {
    const piece = pieces[at]!
    if (piece.runs.length > MAX_LOOKED_UP_RUNS) continue
    if (piece.runs.length === 1) {
      const held = holderBitset(runs.postings, piece.runs[0]!, slots.count)
      for (let word = 0; word < words; word++) all[word]! &= held[word]!
      continue
    }
    const sets = piece.runs.map(run => holderBitset(runs.postings, run, slots.count))
    for (let word = 0; word < words; word++) {
      let any = 0
      for (const held of sets) any |= held[word]!
      all[word]! &= any
    }
  }
  let held = 0
  for (let word = 0; word < words; word++) if (all[word] !== 0) held += popcount(all[word]!)
  return held <= LOOKED_UP_CANDIDATES ? lookedUpBounds(slots, runs, pieces[0]!.runs, all, held) : leastPieceBounds(slots, runs, pieces, all)
}

/** The live slots set in `all` (`held` of them, dead ones included) with their occurrences of the rarest piece's runs, each looked up. */
function lookedUpBounds(slots: Slots<unknown>, runs: RunIndex, rarest: readonly number[], all: Int32Array, held: number): Int32Array {
  const alive = slots.alive
  const out = new Int32Array(2 * held)
  let length = 0
  forEachSet(all, (slots.count + 31) >>> 5, (slot) => {
    if (alive[slot] === 0) return
    let bound = 0
    for (const run of rarest) bound += Math.max(0, runs.postings.lookup(run, slot))
    out[length++] = slot
    out[length++] = bound
  })
  return out.subarray(0, length)
}

/**
 * The live slots set in `all` with the least occurrences of any piece of at most
 * {@link MAX_LOOKED_UP_RUNS} runs: a needle's occurrences in a record are at most its occurrences
 * of any one piece (each needle occurrence holds its own occurrence of the piece). Each piece is
 * summed over its runs in one pass over their postings; the pairs land in a kept buffer, read by
 * the search that asked before any other search runs.
 */
function leastPieceBounds(slots: Slots<unknown>, runs: RunIndex, pieces: ReadonlyArray<{ runs: number[] }>, all: Int32Array): Int32Array {
  const words = (slots.count + 31) >>> 5
  const data = runs.postings.data
  const bounds = boundScratch(0, slots.count)
  const sums = boundScratch(1, slots.count)
  let first = true
  for (const piece of pieces) {
    if (piece.runs.length > MAX_LOOKED_UP_RUNS) continue
    const into = first ? bounds : sums
    for (const run of piece.runs) {
      const ranges = runs.postings.blocks(run, blockScratch)
      for (let range = 0; range < ranges.length; range += 2) {
        for (let pair = ranges[range]!, end = ranges[range + 1]!; pair < end; pair += 2) {
          const slot = data[pair]!
          if (((all[slot >>> 5]! >>> (slot & 31)) & 1) !== 0) into[slot]! += data[pair + 1]!
        }
      }
    }
    if (!first) forEachSet(all, words, (slot) => {
      if (sums[slot]! < bounds[slot]!) bounds[slot] = sums[slot]!
      sums[slot] = 0
    })
    first = false
  }
  const alive = slots.alive
  if (candidateScratch.length < 2 * slots.live) candidateScratch = new Int32Array(Math.max(2 * slots.live, candidateScratch.length * 2))
  const out = candidateScratch
  let length = 0
  forEachSet(all, words, (slot) => {
    if (alive[slot] !== 0) {
      out[length++] = slot
      out[length++] = bounds[slot]!
    }
    bounds[slot] = 0
  })
  return out.subarray(0, length)
}

let candidateScratch = new Int32Array(32)
/** Most candidates of {@link intersectedBitsets} whose bounds are looked up (a search through a list's blocks each) rather than summed in passes over every piece's postings. */
const LOOKED_UP_CANDIDATES = 256

/** Calls `visit` with each slot set in the first `words` words of `bits`, in slot order. */
function forEachSet(bits: Int32Array, words: number, visit: (slot: number) => void): void {
  for (let word = 0; word < words; word++) {
    for (let found = bits[word]!; found !== 0; found &= found - 1) visit((word << 5) | (31 - Math.clz32(found & -found)))
  }
}

/** Two per-slot sums of piece counts (each read back to 0 by the pass that reads it). */
const boundScratches = [new Int32Array(32), new Int32Array(32)]
function boundScratch(which: 0 | 1, count: number): Int32Array {
  if (boundScratches[which]!.length < count) boundScratches[which] = new Int32Array(Math.max(count, boundScratches[which]!.length * 2))
  return boundScratches[which]!
}

/** Most runs of a piece left out of the intersection for which each candidate is looked up in them. */
const MAX_LOOKED_UP_RUNS = 4

/**
 * The (slot, bound) pairs of `candidates` that also hold a run of each of `rest` (the pieces not
 * intersected) with at most {@link MAX_LOOKED_UP_RUNS} runs, looked up in their postings: a
 * lookup is a binary search, far cheaper than verifying the record's text. In place.
 */
function heldByTheRest(runs: RunIndex, rest: ReadonlyArray<{ runs: number[] }>, candidates: number[]): number[] {
  for (const piece of rest) {
    if (candidates.length === 0) break
    if (piece.runs.length > MAX_LOOKED_UP_RUNS) continue
    let length = 0
    for (let at = 0; at < candidates.length; at += 2) {
      const slot = candidates[at]!
      if (!piece.runs.some(run => runs.postings.lookup(run, slot) !== -1)) continue
      candidates[length++] = slot
      candidates[length++] = candidates[at + 1]!
    }
    candidates.length = length
  }
  return candidates
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
