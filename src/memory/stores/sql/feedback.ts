/**
 * Pseudo-relevance feedback (RM3-style) of the default ranking for the SQL stores, as
 * `lentTerms` of src/search/feedback.ts computes it: the best-ranked records that pass the
 * filters (at most `feedback.records`) lend their most telling terms (count in the record /
 * its length × record score / best score × idf), the `feedback.terms` strongest, each weighted
 * `feedback.weight` × its value / the strongest value. Only terms held by `feedback.minRecords`
 * to `feedback.maxShare` × the scope's active records, and not query terms, are lent. Not
 * mirrored: the engine's bound of the lent terms' postings to a quarter of the query's (a
 * scope's lendable terms are held by at most a tenth of its records).
 */
import { DEFAULT_SEARCH_INDEX_OPTIONS } from '../../../search/search.ts'
import { tokenize } from '../../../search/text.ts'
import { searchableContent, searchableTags } from '../../kinds.ts'
import type { MemoryRecord } from '../../types.ts'

/** Scoped term -> records of the scope holding it (`SqlBackend.documentFrequencies`). */
export type TermFrequencies = (terms: readonly string[]) => Promise<Map<string, number>>

/** True when the default ranking lends any term. */
export function feedbackOn(): boolean {
  const { records, terms, weight } = DEFAULT_SEARCH_INDEX_OPTIONS.feedback
  return records > 0 && terms > 0 && weight > 0
}

/**
 * The scoped terms `top` lends, with their weights. `top`: the best records of the first ranking
 * that pass the filters, best first, with their scores; `query`: the scoped query terms; `live`:
 * the scope's active records; `scoped`: a word as a scoped term.
 */
export async function lentTerms(top: ReadonlyArray<{ record: MemoryRecord; score: number }>, query: ReadonlySet<string>, live: number, scoped: (word: string) => string, frequencies: TermFrequencies): Promise<Map<string, number>> {
  const feedback = DEFAULT_SEARCH_INDEX_OPTIONS.feedback
  const lent = new Map<string, number>()
  if (top.length === 0 || !(top[0]!.score > 0)) return lent
  // Per record: its terms in first-use order with their counts over the three fields, and its length.
  const held = top.map(({ record }) => {
    const counts = new Map<string, number>()
    let length = 0
    for (const text of [record.title ?? '', searchableContent(record), searchableTags(record).join('\n')]) {
      for (const word of tokenize(text)) {
        length++
        const term = scoped(word)
        if (!query.has(term)) counts.set(term, (counts.get(term) ?? 0) + 1)
      }
    }
    return { counts, length }
  })
  const frequency = await frequencies([...new Set(held.flatMap(({ counts }) => [...counts.keys()]))])
  const maxRecords = feedback.maxShare * live
  const values = new Map<string, number>()
  const maxScore = top[0]!.score
  top.forEach(({ score }, at) => {
    const { counts, length } = held[at]!
    for (const [term, count] of counts) {
      const df = frequency.get(term) ?? 0
      if (df < feedback.minRecords || df > maxRecords) continue
      values.set(term, (values.get(term) ?? 0) + count / length * score / maxScore * Math.log(1 + (live - df + 0.5) / (df + 0.5)))
    }
  })
  const chosen = [...values].sort((a, c) => c[1] - a[1]).slice(0, feedback.terms)
  const strongest = chosen[0]?.[1]
  if (!strongest) return lent
  for (const [term, value] of chosen) lent.set(term, feedback.weight * value / strongest)
  return lent
}
