/**
 * The weighted terms of a ranked query: its own terms, and for a word the partition never uses,
 * the indexed words it was likely meant as (a spelling one or two edits away, or two words
 * written together).
 */
import { editDistance, stemWord, tokenizeWords } from './text.ts'
import { synonymsOf } from './synonyms.ts'
import { LATIN_SURFACE, type Vocabulary } from './vocabulary.ts'

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
  const irregular = vocabulary.irregular
  const weighted = new Map<string, number>()
  const add = (term: string, weight: number) => weighted.set(term, Math.max(weighted.get(term) ?? 0, weight))
  for (const token of tokenizeWords(text)) {
    const surface = token.surface
    const term = irregular ? token.term : stemWord(surface, false)
    const id = vocabulary.termIds.get(term)
    if (synonymWeight > 0) {
      for (const other of synonymsOf(term, irregular)) {
        const otherId = vocabulary.termIds.get(other)
        if (otherId !== undefined && vocabulary.termFrequency[otherId]! > 0) add(other, synonymWeight)
      }
    }
    if ((id !== undefined && vocabulary.termFrequency[id]! > 0) || !LATIN_SURFACE.test(surface) || surface.length < 4) {
      add(term, 1)
      continue
    }
    const split = splitCompound(vocabulary, surface)
    if (split) {
      add(split[0], 1)
      add(split[1], 1)
      continue
    }
    for (const match of nearestSpellings(vocabulary, surface)) add(match, FUZZY_WEIGHT)
  }
  return weighted
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
