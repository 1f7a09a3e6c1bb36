/**
 * Pseudo-relevance feedback (RM3-style): the best-ranked filtered records lend their most telling
 * terms (term share in the record × record score / best score × idf) to a second ranking, which
 * adds their points to those of the query's terms.
 */
import { idf } from './bm25f.ts'
import type { ScoredSlot } from './slots.ts'
import type { IndexState } from './state.ts'
import type { SearchDocument } from './types.ts'

/** Feedback settings with every field set. */
export interface FeedbackParams {
  readonly records: number
  readonly terms: number
  readonly weight: number
  readonly minRecords: number
  readonly maxShare: number
}

/** Postings the lent terms may always visit, whatever the first ranking visited. */
const MIN_POSTINGS_BUDGET = 1024

/** Live postings of the known terms of `terms`. */
function postingsOf<D extends SearchDocument>(state: IndexState<D>, terms: ReadonlyMap<string, number>): number {
  let total = 0
  for (const term of terms.keys()) {
    const id = state.vocabulary.termIds.get(term)
    if (id !== undefined) total += state.vocabulary.termFrequency[id]!
  }
  return total
}

/** True when `feedback` lends any term. */
export function feedbackOn(feedback: FeedbackParams): boolean {
  return feedback.records > 0 && feedback.terms > 0 && feedback.weight > 0
}

/**
 * The terms lent by `top` (the best records of the ranking of `terms` that pass the filters, best
 * first, at most `feedback.records`): the `feedback.terms` most telling terms of those records,
 * each weighted `feedback.weight` × its value / the strongest value. Only terms held by
 * `feedback.minRecords` to `feedback.maxShare` × the records are lent: rarer ones bring back only
 * their record, commoner ones cost a long posting list and tell little. The lent terms' postings
 * are at most a quarter of those of `terms` (or 1,024). Cost: the lent records tokenized again.
 */
export function lentTerms<D extends SearchDocument>(state: IndexState<D>, feedback: FeedbackParams, terms: ReadonlyMap<string, number>, top: readonly ScoredSlot[]): Map<string, number> {
  const { slots, vocabulary } = state
  const lentTerms = new Map<string, number>()
  if (top.length === 0) return lentTerms
  const maxScore = top[0]!.score
  const lent = new Map<string, number>()
  const names = vocabulary.termNames
  const live = slots.live
  const maxRecords = feedback.maxShare * live
  for (const { slot, score } of top) {
    const length = slots.lengths[slot * 3]! + slots.lengths[slot * 3 + 1]! + slots.lengths[slot * 3 + 2]!
    const tokens = state.retokenize(slots.records[slot]!)
    for (const id of tokens.termIds) {
      const local = tokens.localOf(id)
      const term = names[id]!
      if (terms.has(term)) continue
      const df = vocabulary.termFrequency[id]!
      if (df < feedback.minRecords || df > maxRecords) continue
      const count = tokens.termCounts[local]! + tokens.termCounts[local + 1]! + tokens.termCounts[local + 2]!
      lent.set(term, (lent.get(term) ?? 0) + count / length * score / maxScore * idf(live, df))
    }
  }
  const chosen = [...lent].sort((a, c) => c[1] - a[1]).slice(0, feedback.terms)
  if (chosen.length === 0) return lentTerms
  const strongest = chosen[0]![1]
  // The lent terms' postings are bounded by a quarter of those of the first ranking (feedback adds
  // at most a quarter of its cost), with room for small indexes: a term that does not fit is left out.
  let budget = Math.max(MIN_POSTINGS_BUDGET, postingsOf(state, terms) / 4)
  for (const [term, value] of chosen) {
    const df = vocabulary.termFrequency[vocabulary.termIds.get(term)!]!
    if (df > budget) continue
    budget -= df
    lentTerms.set(term, feedback.weight * value / strongest)
  }
  return lentTerms
}
