/**
 * The weighted terms of a ranked query: its own terms, and for a word the partition never uses,
 * the indexed words it was likely meant as (a spelling one or two edits away, or two words
 * written together).
 */
import { editDistance, stemWord, tokenizeWords } from './text.ts'
import { synonymsOf } from './synonyms.ts'
import { LATIN_SURFACE, type NearTerms, type Vocabulary } from './vocabulary.ts'

/** Weight of a query term reached through a corrected spelling. */
export const FUZZY_WEIGHT = 0.8

/**
 * Query terms with weights: each known term once (weight 1); a word the partition never uses is
 * matched to indexed words one edit away (two for words of 8+ letters), or split into two
 * indexed words when it was written together ("roadtrip" -> "road", "trip"). With
 * `synonymWeight` > 0, the indexed words of a term's synonym group (synonyms.ts: "kid" and
 * "child") are terms too, at that weight.
 */
export function queryTerms(vocabulary: Vocabulary, text: string, synonymWeight = 0): Map<string, number> {
  const weighted = new Map<string, number>()
  const { termIds, termFrequency } = vocabulary
  const words = analysisOf(text, vocabulary.irregular)
  for (let at = 0; at < words.length; at++) {
    const token = words[at]!
    const term = token.term
    const id = termIds.get(term)
    if (synonymWeight > 0) {
      for (const other of token.synonyms) {
        const otherId = termIds.get(other)
        if (otherId !== undefined && termFrequency[otherId]! > 0) addTerm(weighted, other, synonymWeight)
      }
    }
    if ((id !== undefined && termFrequency[id]! > 0) || !token.spelled) {
      addTerm(weighted, term, 1)
      continue
    }
    const near = nearTermsOf(vocabulary, token.surface)
    const weight = near.split ? 1 : FUZZY_WEIGHT
    for (const match of near.terms) addTerm(weighted, match, weight)
  }
  return weighted
}

/** Keeps `term` in `weighted` at the larger of its weights. */
function addTerm(weighted: Map<string, number>, term: string, weight: number): void {
  const known = weighted.get(term)
  if (known === undefined || known < weight) weighted.set(term, weight)
}

/** A query word as every index reads it: its folded surface, its term, the terms of its synonyms, whether it may be a misspelling. */
interface QueryWord {
  readonly surface: string
  readonly term: string
  readonly synonyms: readonly string[]
  /** A plain Latin word of 4+ letters: when the partition never uses it, it is matched to nearby spellings. */
  readonly spelled: boolean
}

/** The words of recent query texts, per stemming mode (they depend on the text alone: one tokenization for every scope searched). */
const analyses = [new Map<string, readonly QueryWord[]>(), new Map<string, readonly QueryWord[]>()]
const MAX_ANALYSES = 256

function analysisOf(text: string, irregular: boolean): readonly QueryWord[] {
  const cache = analyses[irregular ? 1 : 0]!
  let words = cache.get(text)
  if (words === undefined) {
    words = tokenizeWords(text).map(({ surface, term }) => {
      const stemmed = irregular ? term : stemWord(surface, false)
      return { surface, term: stemmed, synonyms: synonymsOf(stemmed, irregular), spelled: LATIN_SURFACE.test(surface) && surface.length >= 4 }
    })
    if (cache.size >= MAX_ANALYSES) cache.clear()
    cache.set(text, words)
  }
  return words
}

/**
 * The terms a word the partition never uses was likely meant as: the two words it is written of
 * (`split`), else the nearest spellings. Kept per vocabulary while its live plain Latin words are
 * the same (`Vocabulary.latinGeneration`): that is all they depend on.
 */
function nearTermsOf(vocabulary: Vocabulary, surface: string): NearTerms {
  const generation = vocabulary.latinGeneration
  const known = vocabulary.nearTerms.get(surface)
  if (known !== undefined && known.generation === generation) return known
  const split = splitCompound(vocabulary, surface)
  const near: NearTerms = split ? { generation, split: true, terms: split } : { generation, split: false, terms: nearestSpellings(vocabulary, surface) }
  vocabulary.rememberNearTerms(surface, near)
  return near
}

/** The terms of two indexed words (3+ letters each) that `surface` is written of, first cut first; else `undefined`. */
function splitCompound(vocabulary: Vocabulary, surface: string): [string, string] | undefined {
  for (let cut = 3; cut <= surface.length - 3; cut++) {
    const left = vocabulary.latinSurface(surface.slice(0, cut))
    const right = left === undefined ? undefined : vocabulary.latinSurface(surface.slice(cut))
    if (left !== undefined && right !== undefined) return [left, right]
  }
  return undefined
}

/** Terms of the live plain Latin words nearest to `surface` within 1 edit (2 for 8+ letters), in surface id order. */
function nearestSpellings(vocabulary: Vocabulary, surface: string): string[] {
  const max = surface.length >= 8 ? 2 : 1
  let best = max + 1
  let matches: number[] = []
  vocabulary.forEachNearLatin(surface, max, (sid, word) => {
    const distance = editDistance(surface, word, Math.min(max, best))
    if (distance > max) return
    if (distance < best) {
      best = distance
      matches = [sid]
    }
    else if (distance === best) matches.push(sid)
  })
  return matches.sort((a, c) => a - c).map(sid => vocabulary.termNames[vocabulary.surfaceTerms[sid]!]!)
}
