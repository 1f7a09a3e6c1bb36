/**
 * Pseudo-relevance feedback (RM3-style): the best-ranked filtered records lend their most telling
 * terms (term share in the record × record score / best score × idf) to a second ranking, which
 * adds their points to those of the query's terms.
 */
import { idf } from './bm25f.ts'
import { FIELDS, type ScoredSlot } from './slots.ts'
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

/**
 * Postings read per token tokenized again, at equal cost: a posting is a read and a comparison,
 * a token a scan and two map lookups.
 */
const POSTINGS_PER_TOKEN = 8

/**
 * The lendable terms of record `slot` as (term id, count in all fields, dates included) pairs, in the order the
 * record first uses them: from its tokens.
 */
function termsOfRecord<D extends SearchDocument>(state: IndexState<D>, slot: number, lendable: (id: number) => boolean): number[] {
  const tokens = state.retokenize(state.slots.records[slot]!)
  const pairs: number[] = []
  for (const id of tokens.termIds) {
    if (!lendable(id)) continue
    const local = tokens.localOf(id)
    pairs.push(id, tokens.termCounts[local]! + tokens.termCounts[local + 1]! + tokens.termCounts[local + 2]! + tokens.termCounts[local + 3]!)
  }
  return pairs
}

/**
 * {@link termsOfRecord} of each of `top`, read from the postings of the lendable terms when the
 * vocabulary and those postings are small beside the records' tokens (a small partition, where
 * few terms are lendable); else `undefined`. A record holding several lendable terms is
 * tokenized again for the order it uses them in.
 */
function heldLendable<D extends SearchDocument>(state: IndexState<D>, top: readonly ScoredSlot[], lendable: (id: number) => boolean): number[][] | undefined {
  const { slots, vocabulary } = state
  let tokens = 0
  for (const { slot } of top) tokens += slots.lengths[slot * FIELDS]! + slots.lengths[slot * FIELDS + 1]! + slots.lengths[slot * FIELDS + 2]! + slots.lengths[slot * FIELDS + 3]!
  const budget = POSTINGS_PER_TOKEN * tokens
  const termCount = vocabulary.termNames.length
  if (termCount > budget) return undefined
  const ids: number[] = []
  let postings = termCount
  for (let id = 0; id < termCount; id++) {
    if (vocabulary.termFrequency[id]! === 0 || !lendable(id)) continue
    ids.push(id)
    postings += vocabulary.termPostings.length(id)
    if (postings > budget) return undefined
  }
  const place = new Map<number, number>()
  for (const [at, { slot }] of top.entries()) place.set(slot, at)
  const held: number[][] = top.map(() => [])
  const data = vocabulary.termPostings.data
  for (const id of ids) {
    const ranges = vocabulary.termPostings.blocks(id, blockScratch)
    for (let range = 0; range < ranges.length; range += 2) {
      for (let at = ranges[range]!, end = ranges[range + 1]!; at < end; at += 2) {
        const index = place.get(data[at]!)
        if (index === undefined) continue
        const slot = data[at]!
        const packed = data[at + 1]!
        held[index]!.push(id, vocabulary.fieldCount(packed, slot, 0) + vocabulary.fieldCount(packed, slot, 1) + vocabulary.fieldCount(packed, slot, 2) + vocabulary.fieldCount(packed, slot, 3))
      }
    }
  }
  for (const [at, pairs] of held.entries()) if (pairs.length > 2) held[at] = termsOfRecord(state, top[at]!.slot, lendable)
  return held
}

const blockScratch: number[] = []

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
  const lendable = (id: number) => {
    const df = vocabulary.termFrequency[id]!
    return df >= feedback.minRecords && df <= maxRecords && !terms.has(names[id]!)
  }
  const held = heldLendable(state, top, lendable) ?? top.map(({ slot }) => termsOfRecord(state, slot, lendable))
  for (const [at, { slot, score }] of top.entries()) {
    // A term's share is of the record's text (title, content, tags); its date words are lent too
    // (a question about one day finds that day's other records), measured against no share of them.
    const length = slots.lengths[slot * FIELDS]! + slots.lengths[slot * FIELDS + 1]! + slots.lengths[slot * FIELDS + 2]!
    const pairs = held[at]!
    for (let pair = 0; pair < pairs.length; pair += 2) {
      const id = pairs[pair]!
      lent.set(names[id]!, (lent.get(names[id]!) ?? 0) + pairs[pair + 1]! / length * score / maxScore * idf(live, vocabulary.termFrequency[id]!))
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
