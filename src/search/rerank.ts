/**
 * The re-ranking levers applied to the best candidates of a ranking (bounded: at most
 * `depth` candidates, each read once): a proximity bonus for query terms found near each other,
 * and a boost for a record whose tag the query names.
 */
import { idf } from './bm25f.ts'
import type { RankedSlot } from './max-score.ts'
import { FIELDS } from './slots.ts'
import type { IndexState } from './state.ts'
import { beginTermNumbers, termGeneration, termNumber, termNumbers, type TermBuffer } from './term-numbers.ts'
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

/** The term numbers of the field being read (searches are synchronous). */
const termScratch: TermBuffer = { numbers: new Int32Array(256) }

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
  // The query terms' process-wide numbers (term-numbers.ts): an ASCII field is read as numbers.
  beginTermNumbers()
  const numbers = new Int32Array(count)
  let generation = -1
  // Per surface word of a field that is not ASCII: the place of its term among `ids`, or -1
  // (words repeat across the candidates: one lookup in a small map instead of two in the vocabulary's).
  const places = new Map<string, number>()
  let position = 0
  // The bonus of the record being read: a double in a typed array, where a double in a variable
  // the closures share is a new heap number at each write.
  const bonus = new Float64Array(1)
  /** One token, of the term at place `at` among `ids` (-1: none of them). */
  const step = (at: number) => {
    if (at >= 0) {
      for (let other = 0; other < count; other++) {
        if (other === at || position - last[other]! > params.window) continue
        const pair = other < at ? other * count + at : at * count + other
        if (found[pair] === 1) continue
        found[pair] = 1
        bonus[0] = bonus[0]! + params.proximityWeight * Math.min(idfs[at]!, idfs[other]!)
      }
      last[at] = position
    }
    position++
  }
  const visit = (surface: string) => {
    let at = places.get(surface)
    if (at === undefined) {
      const sid = vocabulary.surfaceIds.get(surface)
      at = sid === undefined ? -1 : ids.indexOf(vocabulary.surfaceTerms[sid]!)
      places.set(surface, at)
    }
    step(at)
  }
  const read = (field: string) => {
    if (generation !== termGeneration()) {
      // Another search since this scorer's numbers were taken emptied the tables: take them again.
      generation = termGeneration()
      for (let place = 0; place < count; place++) numbers[place] = termNumber(vocabulary.termNames[ids[place]!]!)
    }
    const tokens = termNumbers(field, state.irregular, termScratch)
    if (tokens < 0) {
      forEachSurface(field, visit)
      return
    }
    const scanned = termScratch.numbers
    for (let token = 0; token < tokens; token++) step(numbers.indexOf(scanned[token]!))
  }
  const readField = (field: string) => {
    if (field === '') return
    read(field)
    // Fields are apart: no pair across them.
    position += params.window + 1
  }
  const nearBonus = (record: D): number => {
    last.fill(Number.NEGATIVE_INFINITY)
    found.fill(0)
    bonus[0] = 0
    position = 0
    readField(text.title(record))
    readField(text.content(record))
    const tags = text.tags(record)
    if (tags.length > 0) readField(tags.length === 1 ? tags[0]! : tags.join(' \n '))
    return bonus[0]!
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
  const bounds = boundScratch.length >= candidates.length ? boundScratch : (boundScratch = new Float64Array(Math.max(candidates.length, boundScratch.length * 2)))
  // A candidate's bound is a function of its score alone within its group (terms held, a tag word
  // or not, a score of 0), growing with it: candidates given best first are in bound order within
  // each group, so the groups are merged instead of sorted (only the few read are taken).
  const groups = 2 * pairBonus.length + 1
  const heads = new Int32Array(groups).fill(-1)
  const tails = new Int32Array(groups)
  const next = nextScratch.length >= candidates.length ? nextScratch : (nextScratch = new Int32Array(Math.max(candidates.length, nextScratch.length * 2)))
  let merged = true
  for (let at = 0; at < candidates.length; at++) {
    const { slot, score, matched } = candidates[at]!
    const held = Math.min(Math.max(matched, 0), pairBonus.length - 1)
    const near = score === 0 ? 0 : score + pairBonus[held]!
    const tagged = params.tagBoost !== 1 && slots.lengths[slot * FIELDS + 2]! > 0
    bounds[at] = tagged ? near * boost : near
    const group = score === 0 ? groups - 1 : 2 * held + (tagged ? 1 : 0)
    next[at] = -1
    if (heads[group] === -1) heads[group] = at
    else {
      if (bounds[tails[group]!]! < bounds[at]!) merged = false
      next[tails[group]!] = at
    }
    tails[group] = at
  }
  const order = merged ? undefined : Array.from({ length: candidates.length }, (_, at) => at).sort((a, c) => bounds[c]! - bounds[a]! || a - c)
  for (let taken = 0; taken < candidates.length; taken++) {
    let at: number
    if (order !== undefined) at = order[taken]!
    else {
      // The best head: greatest bound, then first given.
      at = -1
      let from = -1
      for (let group = 0; group < groups; group++) {
        const head = heads[group]!
        if (head !== -1 && (at === -1 || bounds[head]! > bounds[at]! || (bounds[head] === bounds[at] && head < at))) {
          at = head
          from = group
        }
      }
      heads[from] = next[at]!
    }
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

// Per candidate of one rerankBest: its bound and the next of its group (searches are synchronous).
let boundScratch = new Float64Array(128)
let nextScratch = new Int32Array(128)

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
