/**
 * Per-slot score scratch shared by every index: searches are synchronous, so one array of scores
 * and one of stamps serve them all. A slot's score is valid when its stamp equals the stamp its
 * search took from {@link scratchFor}; nothing is cleared between searches.
 */
export const scratch = {
  scores: new Float64Array(1024),
  stamps: new Int32Array(1024),
  /** Query terms a ranking found in each slot (valid where the stamp is). */
  matched: new Int32Array(1024),
  stamp: 0,
}

/** A fresh stamp for a pass over `slots` slots (the arrays grow to fit). */
export function scratchFor(slots: number): number {
  if (slots > scratch.scores.length) {
    scratch.scores = new Float64Array(Math.max(slots, scratch.scores.length * 2))
    scratch.stamps = new Int32Array(scratch.scores.length)
    scratch.matched = new Int32Array(scratch.scores.length)
    scratch.stamp = 0
  }
  if (++scratch.stamp >= 0x7fffffff) {
    scratch.stamps.fill(0)
    scratch.stamp = 1
  }
  return scratch.stamp
}

/** The slots one pass scored, in first-touch order, under its stamp (scores in {@link scratch}). */
export interface ScoredSlots {
  stamp: number
  touched: number[]
}
