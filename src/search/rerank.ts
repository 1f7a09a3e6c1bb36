/**
 * The re-ranking levers applied to the best candidates of a ranking (bounded: at most
 * `depth` candidates, each read once): a proximity bonus for query terms found near each other,
 * and a boost for a record whose tag the query names.
 */
import { idf } from './bm25f.ts'
import type { RankedSlot } from './max-score.ts'
import { FIELDS } from './slots.ts'
import type { IndexState } from './state.ts'
import { forEachSurface, stemWord, tokenizeWords } from './text.ts'
import { TopK } from './top-k.ts'
import type { SearchDocument } from './types.ts'

/** Re-ranking settings with every field set. */
export interface RerankParams {
  /** Candidates re-ranked. */
  readonly depth: number
  /** Near = at most this many token positions apart. */
  readonly window: number
  /** Bonus per near pair × the smaller idf; 0 is off. */
  readonly proximityWeight: number
  /** Score multiplier of a record with a tag the query names; 1 is off. */
  readonly tagBoost: number
}

/** Most query terms whose pairs are looked for (the pairs grow with the square). */
const MAX_PROXIMITY_TERMS = 16

/** True when re-ranking can change a score for a query of `terms`. */
export function rerankOn(params: RerankParams, terms: ReadonlyMap<string, number>): boolean {
  return params.depth > 0 && terms.size > 0 && (params.tagBoost !== 1 || (params.proximityWeight > 0 && terms.size >= 2))
}

/**
 * A scorer of candidates for the query terms `terms`: `(slot, score, matched)` gives the score
 * with the proximity bonus added and the tag boost applied. Scores of 0 (records the ranking did
 * not find) stay 0. `matched` is how many query terms the ranking found in the record: a record
 * with fewer than two is not read for proximity.
 */
export function candidateScorer<D extends SearchDocument>(state: IndexState<D>, params: RerankParams, terms: ReadonlyMap<string, number>): (candidate: RankedSlot) => number {
  const { slots, vocabulary, text } = state
  const ids: number[] = []
  const idfs: number[] = []
  for (const term of terms.keys()) {
    const id = vocabulary.termIds.get(term)
    if (id === undefined || vocabulary.termFrequency[id]! === 0 || ids.length >= MAX_PROXIMITY_TERMS) continue
    ids.push(id)
    idfs.push(idf(slots.live, vocabulary.termFrequency[id]!))
  }
  const proximity = params.proximityWeight > 0 && ids.length >= 2
  const count = ids.length
  const last = new Float64Array(count)
  const found = new Uint8Array(count * count)
  // Per surface word seen by this scorer: the place of its term among `ids`, or -1 (words repeat
  // across the candidates: one lookup in a small map instead of two in the vocabulary's).
  const places = new Map<string, number>()
  let position = 0
  let bonus = 0
  const visit = (surface: string) => {
    let at = places.get(surface)
    if (at === undefined) {
      const sid = vocabulary.surfaceIds.get(surface)
      at = sid === undefined ? -1 : ids.indexOf(vocabulary.surfaceTerms[sid]!)
      places.set(surface, at)
    }
    if (at >= 0) {
      for (let other = 0; other < count; other++) {
        if (other === at || position - last[other]! > params.window) continue
        const pair = other < at ? other * count + at : at * count + other
        if (found[pair] === 1) continue
        found[pair] = 1
        bonus += params.proximityWeight * Math.min(idfs[at]!, idfs[other]!)
      }
      last[at] = position
    }
    position++
  }
  const nearBonus = (record: D): number => {
    last.fill(Number.NEGATIVE_INFINITY)
    found.fill(0)
    bonus = 0
    position = 0
    const tags = text.tags(record)
    for (const field of [text.title(record), text.content(record), tags.length === 0 ? '' : tags.join(' \n ')]) {
      if (field === '') continue
      forEachSurface(field, visit)
      // Fields are apart: no pair across them.
      position += params.window + 1
    }
    return bonus
  }
  const named = (record: D): boolean => {
    for (const tag of text.tags(record)) {
      const tagTerms = termsOfTag(tag, vocabulary.irregular)
      if (tagTerms.length > 0 && tagTerms.every(term => terms.has(term))) return true
    }
    return false
  }
  return ({ slot, score, matched }) => {
    if (score === 0) return 0
    const record = slots.records[slot]!
    const near = proximity && matched >= 2 ? score + nearBonus(record) : score
    return params.tagBoost !== 1 && named(record) ? near * params.tagBoost : near
  }
}

/**
 * The best `count` of `candidates` once re-ranked, best first: what scoring every candidate with
 * {@link candidateScorer} and sorting would keep. Each candidate's re-ranked score is bounded
 * first, from its score, how many query terms it holds and whether its tags field has a word:
 * the proximity bonus of a record is at most that of all pairs of the terms it holds, and only
 * a record with a tag word can be boosted. Candidates are read best bound first, and once `count`
 * are kept, those whose bound is below the weakest kept are not read at all. `scorer`: the
 * {@link candidateScorer} of the same state, params and terms, when the caller has one.
 */
export function rerankBest<D extends SearchDocument>(state: IndexState<D>, params: RerankParams, terms: ReadonlyMap<string, number>, candidates: readonly RankedSlot[], count: number, scorer?: (candidate: RankedSlot) => number): RankedSlot[] {
  if (count <= 0 || candidates.length === 0) return []
  const { slots } = state
  const best = new TopK<RankedSlot>(count, slots.compare)
  const score = scorer ?? candidateScorer(state, params, terms)
  const pairBonus = pairBonusBounds(state, params, terms)
  const boost = Math.max(1, params.tagBoost)
  const bounds = new Float64Array(candidates.length)
  const order: number[] = []
  for (let at = 0; at < candidates.length; at++) {
    const { slot, score, matched } = candidates[at]!
    const near = score === 0 ? 0 : score + pairBonus[Math.min(Math.max(matched, 0), pairBonus.length - 1)]!
    bounds[at] = params.tagBoost !== 1 && slots.lengths[slot * FIELDS + 2]! > 0 ? near * boost : near
    order.push(at)
  }
  order.sort((a, c) => bounds[c]! - bounds[a]! || a - c)
  for (const at of order) {
    const floor = best.floor()
    // A margin over the bound: the bonus is the same points added in another order.
    if (floor !== undefined && bounds[at]! * (1 + BOUND_MARGIN) < floor.score) break
    const candidate = candidates[at]!
    best.push({ slot: candidate.slot, score: score(candidate), matched: candidate.matched })
  }
  return best.sorted()
}

/** Relative slack of a re-ranking bound against rounding. */
const BOUND_MARGIN = 1e-9

/**
 * Per count `m` of query terms a record holds: the most proximity bonus it can get (the
 * proximity weight × the `m × (m − 1) / 2` greatest pair values, a pair's value its smaller idf).
 */
function pairBonusBounds<D extends SearchDocument>(state: IndexState<D>, params: RerankParams, terms: ReadonlyMap<string, number>): Float64Array {
  const { slots, vocabulary } = state
  const idfs: number[] = []
  for (const term of terms.keys()) {
    const id = vocabulary.termIds.get(term)
    if (id === undefined || vocabulary.termFrequency[id]! === 0 || idfs.length >= MAX_PROXIMITY_TERMS) continue
    idfs.push(idf(slots.live, vocabulary.termFrequency[id]!))
  }
  const bounds = new Float64Array(terms.size + 1)
  if (!(params.proximityWeight > 0) || idfs.length < 2) return bounds
  const pairs: number[] = []
  for (let a = 0; a < idfs.length; a++) for (let c = a + 1; c < idfs.length; c++) pairs.push(Math.min(idfs[a]!, idfs[c]!))
  pairs.sort((a, c) => c - a)
  let sum = 0
  let used = 0
  for (let held = 2; held <= terms.size; held++) {
    for (const wanted = Math.min(pairs.length, held * (held - 1) / 2); used < wanted; used++) sum += pairs[used]!
    bounds[held] = params.proximityWeight * sum
  }
  return bounds
}

const TAG_CACHE_MAX = 10_000
const tagTermCache = [new Map<string, string[]>(), new Map<string, string[]>()] as const

/** The terms of a tag (cached: tags repeat across records and searches). */
function termsOfTag(tag: string, irregular: boolean): string[] {
  const cache = tagTermCache[irregular ? 0 : 1]
  let terms = cache.get(tag)
  if (terms === undefined) {
    terms = irregular ? tokenizeWords(tag).map(token => token.term) : tokenizeWords(tag).map(token => stemWord(token.surface, false))
    if (cache.size >= TAG_CACHE_MAX) cache.clear()
    cache.set(tag, terms)
  }
  return terms
}
