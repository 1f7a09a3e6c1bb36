/**
 * Pseudo-relevance feedback (RM3-style): the best-ranked filtered records lend their most telling
 * terms (term share in the record × record score / best score × idf) to a second ranking.
 */
import { idf, rank, type Bm25fParams } from './bm25f.ts'
import { passesFilters } from './filters.ts'
import type { CheckedQuery } from './query.ts'
import { scratch, type ScoredSlots } from './scratch.ts'
import type { IndexState } from './state.ts'
import { TopK } from './top-k.ts'
import type { SearchDocument } from './types.ts'

/** Feedback settings with every field set. */
export interface FeedbackParams {
  readonly records: number
  readonly terms: number
  readonly weight: number
}

/** True when `feedback` lends any term. */
export function feedbackOn(feedback: FeedbackParams): boolean {
  return feedback.records > 0 && feedback.terms > 0 && feedback.weight > 0
}

/**
 * The ranking of `terms` expanded with the `feedback.terms` terms lent by the best
 * `feedback.records` records of `ranked` that pass the filters, each at `feedback.weight` × its
 * value / the strongest value. Terms of one record only are not lent (they bring back that record).
 * `ranked` itself when nothing is lent.
 */
export function withFeedback<D extends SearchDocument>(state: IndexState<D>, params: Bm25fParams, feedback: FeedbackParams, terms: ReadonlyMap<string, number>, ranked: ScoredSlots, checked: CheckedQuery): ScoredSlots {
  const { slots, vocabulary } = state
  const best = new TopK<[number, number]>(feedback.records, (a, c) => a[1] - c[1])
  for (const slot of ranked.touched) if (passesFilters(slots.records[slot]!, slots.created[slot]!, checked)) best.push([slot, scratch.scores[slot]!])
  const top = best.sorted()
  if (top.length === 0) return ranked
  const maxScore = top[0]![1]
  const lent = new Map<string, number>()
  const names = vocabulary.termNames
  const live = slots.live
  for (const [slot, score] of top) {
    const length = slots.lengths[slot * 3]! + slots.lengths[slot * 3 + 1]! + slots.lengths[slot * 3 + 2]!
    const tokens = state.retokenize(slots.records[slot]!)
    for (const id of tokens.termIds) {
      const local = tokens.localOf(id)
      const term = names[id]!
      if (terms.has(term)) continue
      const df = vocabulary.termFrequency[id]!
      if (df < 2) continue
      const count = tokens.termCounts[local]! + tokens.termCounts[local + 1]! + tokens.termCounts[local + 2]!
      lent.set(term, (lent.get(term) ?? 0) + count / length * score / maxScore * idf(live, df))
    }
  }
  const chosen = [...lent].sort((a, c) => c[1] - a[1]).slice(0, feedback.terms)
  if (chosen.length === 0) return ranked
  const strongest = chosen[0]![1]
  const expanded = new Map(terms)
  for (const [term, value] of chosen) expanded.set(term, feedback.weight * value / strongest)
  return rank(state, params, expanded)
}
