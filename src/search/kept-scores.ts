/**
 * The BM25F scores of a few given records (the substring rule's hits when they fill the whole
 * page): from the postings of the query's terms when those are short beside the records' text,
 * else from each record tokenized again (`scoreSlot`). Both add the same points in the same
 * order, so the scores are the same to the bit.
 */
import { rank, scoreSlot, type Bm25fParams } from './bm25f.ts'
import { scratch } from './scratch.ts'
import type { IndexState } from './state.ts'
import type { SearchDocument } from './types.ts'

/**
 * Postings read per token tokenized again, at equal cost: a posting is a read and a few
 * multiplications, a token a scan and two map lookups.
 */
const POSTINGS_PER_TOKEN = 8

/** The BM25F score of each of `wanted` (live slots of `state`) for `terms`; 0 for a slot no term holds. */
export function scoresOf<D extends SearchDocument>(state: IndexState<D>, params: Bm25fParams, terms: ReadonlyMap<string, number>, wanted: ReadonlySet<number>): Map<number, number> {
  const { slots, vocabulary } = state
  const scores = new Map<number, number>()
  let postings = 0
  for (const term of terms.keys()) {
    const id = vocabulary.termIds.get(term)
    if (id !== undefined) postings += vocabulary.termPostings.length(id)
  }
  const tokensPerRecord = (slots.lengthSums[0]! + slots.lengthSums[1]! + slots.lengthSums[2]!) / Math.max(slots.live, 1)
  if (postings > POSTINGS_PER_TOKEN * wanted.size * tokensPerRecord) {
    for (const slot of wanted) scores.set(slot, scoreSlot(state, params, terms, slot).score)
    return scores
  }
  const { stamp } = rank(state, params, terms)
  for (const slot of wanted) scores.set(slot, scratch.stamps[slot] === stamp ? scratch.scores[slot]! : 0)
  return scores
}
