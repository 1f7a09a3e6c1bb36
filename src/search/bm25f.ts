/**
 * BM25F scoring over the term postings: per query term,
 * `idf × tf' × (k1 + 1) / (tf' + k1)` with
 * `tf' = Σ weight(field) × tf(field) / (1 − b + b × len(field) / avgLen(field))` and
 * `idf = ln(1 + (N − n + 0.5) / (n + 0.5))` over the live records: term at a time over the
 * postings into the score scratch (`rank`, `accumulate`), or one record from its own tokens
 * (`scoreSlot`). max-score.ts is the document-at-a-time pass with pruning.
 */
import { scratch, scratchFor, type ScoredSlots } from './scratch.ts'
import type { IndexState } from './state.ts'
import type { SearchDocument } from './types.ts'
import { FIELDS } from './slots.ts'
import { TF_BITS, TF_INLINE_MAX, type Vocabulary } from './vocabulary.ts'

/** The BM25F parameters of an index. */
export interface Bm25fParams {
  /** Field weights: title, content, tags, dates. */
  readonly weights: readonly [number, number, number, number]
  readonly k1: number
  readonly b: number
}

/** BM25 idf of a term held by `frequency` of `live` records. */
export function idf(live: number, frequency: number): number {
  return Math.log(1 + (live - frequency + 0.5) / (frequency + 0.5))
}

/**
 * The constants of the tf' sum over one index state: field weights `w`, `a` = b / average length
 * of the field, `base` = 1 − b, and `k1`.
 */
export interface FieldNorms {
  readonly w0: number
  readonly w1: number
  readonly w2: number
  readonly a0: number
  readonly a1: number
  readonly a2: number
  readonly w3: number
  readonly a3: number
  /** `[w0, w1, w2, w3]` and `[a0, a1, a2, a3]`, per field. */
  readonly weights: readonly number[]
  readonly slope: readonly number[]
  readonly base: number
  readonly k1: number
}

/** The {@link FieldNorms} of `params` over the current average field lengths of `state`. */
export function fieldNorms<D extends SearchDocument>(state: IndexState<D>, params: Bm25fParams): FieldNorms {
  const average = state.slots.averageLengths()
  const [w0, w1, w2, w3] = params.weights
  const { k1, b } = params
  const [a0, a1, a2, a3] = [b / average[0], b / average[1], b / average[2], b / average[3]]
  return { w0, w1, w2, w3, a0, a1, a2, a3, weights: params.weights, slope: [a0, a1, a2, a3], base: 1 - b, k1 }
}

/** tf' of `slot` from its count of the term in each field (title, content, tags, dates). */
export function weightedTf(norms: FieldNorms, lengths: Uint32Array, slot: number, f0: number, f1: number, f2: number, f3: number): number {
  const at = slot * FIELDS
  return (f0 === 0 ? 0 : norms.w0 * f0 / (norms.base + norms.a0 * lengths[at]!))
    + (f1 === 0 ? 0 : norms.w1 * f1 / (norms.base + norms.a1 * lengths[at + 1]!))
    + (f2 === 0 ? 0 : norms.w2 * f2 / (norms.base + norms.a2 * lengths[at + 2]!))
    + (f3 === 0 ? 0 : norms.w3 * f3 / (norms.base + norms.a3 * lengths[at + 3]!))
}

/** tf' of the posting `packed` of `slot`: its inline field counts, or the vocabulary's when one of them overflows. */
export function postingTf(norms: FieldNorms, vocabulary: Vocabulary, lengths: Uint32Array, packed: number, slot: number): number {
  const c0 = packed & TF_INLINE_MAX
  const c1 = (packed >>> TF_BITS) & TF_INLINE_MAX
  const c2 = (packed >>> (2 * TF_BITS)) & TF_INLINE_MAX
  const c3 = packed >>> (3 * TF_BITS)
  if (c0 === TF_INLINE_MAX || c1 === TF_INLINE_MAX || c2 === TF_INLINE_MAX || c3 === TF_INLINE_MAX) {
    return weightedTf(norms, lengths, slot, vocabulary.fieldCount(packed, slot, 0), vocabulary.fieldCount(packed, slot, 1), vocabulary.fieldCount(packed, slot, 2), vocabulary.fieldCount(packed, slot, 3))
  }
  return weightedTf(norms, lengths, slot, c0, c1, c2, c3)
}

/** The points of a term with `termIdf` (idf × the term's weight) in a record with tf' `tf`. */
export function termPoints(termIdf: number, tf: number, k1: number): number {
  return termIdf * tf * (k1 + 1) / (tf + k1)
}

const blockScratch: number[] = []

/**
 * BM25F of every live slot holding a term of `terms` (term -> weight, scores added in the map's
 * order); scores land in the shared scratch under the returned stamp.
 */
export function rank<D extends SearchDocument>(state: IndexState<D>, params: Bm25fParams, terms: ReadonlyMap<string, number>): ScoredSlots {
  return accumulate(state, params, terms, { stamp: scratchFor(state.slots.count), touched: [] }, true)
}

/**
 * Adds the BM25F points of `terms` to the scores of `into` (a ranking of this index still in the
 * scratch); returns it. With `countMatches`, `scratch.matched` counts the terms found per slot
 * (without it, a slot first reached here holds 0 of the query's terms: lent terms are not counted);
 * `changed` receives every slot given points (once per term holding it).
 */
export function accumulate<D extends SearchDocument>(state: IndexState<D>, params: Bm25fParams, terms: ReadonlyMap<string, number>, into: ScoredSlots, countMatches = false, changed?: number[]): ScoredSlots {
  const { slots, vocabulary } = state
  const { stamp, touched } = into
  if (slots.live === 0) return into
  const scores = scratch.scores
  const stamps = scratch.stamps
  const matched = scratch.matched
  const norms = fieldNorms(state, params)
  const lengths = slots.lengths
  const alive = slots.alive
  const live = slots.live
  for (const [term, weight] of terms) {
    const id = vocabulary.termIds.get(term)
    if (id === undefined) continue
    const frequency = vocabulary.termFrequency[id]!
    if (frequency === 0) continue
    const termIdf = weight * idf(live, frequency)
    const data = vocabulary.termPostings.data
    const ranges = vocabulary.termPostings.blocks(id, blockScratch)
    for (let range = 0; range < ranges.length; range += 2) {
      for (let at = ranges[range]!, end = ranges[range + 1]!; at < end; at += 2) {
        const slot = data[at]!
        if (alive[slot] === 0) continue
        const points = termPoints(termIdf, postingTf(norms, vocabulary, lengths, data[at + 1]!, slot), norms.k1)
        if (changed !== undefined) changed.push(slot)
        if (stamps[slot] !== stamp) {
          stamps[slot] = stamp
          scores[slot] = points
          matched[slot] = countMatches ? 1 : 0
          touched.push(slot)
        }
        else {
          scores[slot]! += points
          if (countMatches) matched[slot]!++
        }
      }
    }
  }
  return into
}

/**
 * The score the top-k pass (max-score.ts) gives `slot` for `terms` (same terms, same order of
 * additions), from the record's own tokens, and how many of the first `counted` terms it holds.
 */
export function scoreSlot<D extends SearchDocument>(state: IndexState<D>, params: Bm25fParams, terms: ReadonlyMap<string, number>, slot: number, counted = 0): { score: number; matched: number } {
  const { slots, vocabulary } = state
  if (slots.live === 0) return { score: 0, matched: 0 }
  const tokens = state.retokenize(slots.records[slot]!)
  const norms = fieldNorms(state, params)
  const lengths = slots.lengths
  let score = 0
  let matched = 0
  let place = -1
  for (const [term, weight] of terms) {
    place++
    const id = vocabulary.termIds.get(term)
    if (id === undefined) continue
    const frequency = vocabulary.termFrequency[id]!
    if (frequency === 0) continue
    const local = tokens.termLocal(id)
    if (local === undefined) continue
    const termIdf = weight * idf(slots.live, frequency)
    const tf = weightedTf(norms, lengths, slot, tokens.termCounts[local]!, tokens.termCounts[local + 1]!, tokens.termCounts[local + 2]!, tokens.termCounts[local + 3]!)
    score += termPoints(termIdf, tf, norms.k1)
    if (place < counted) matched++
  }
  return { score, matched }
}
