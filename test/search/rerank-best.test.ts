import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Bm25fParams } from '../../src/search/bm25f.ts'
import { rankedCandidates } from '../../src/search/candidates.ts'
import { DEFAULT_SEARCH_INDEX_OPTIONS } from '../../src/search/index.ts'
import { PLAIN_TEXT } from '../../src/search/plain-text.ts'
import { checkQuery } from '../../src/search/query.ts'
import { queryTerms } from '../../src/search/query-terms.ts'
import { candidateScorer, rerankBest, type RerankParams } from '../../src/search/rerank.ts'
import { IndexState } from '../../src/search/state.ts'
import type { SearchDocument } from '../../src/search/types.ts'

const WORDS = ['kayak', 'paddle', 'lake', 'river', 'trip', 'coffee', 'tea', 'note', 'note', 'jazz']
const params: Bm25fParams = { weights: [2, 1, 2, 1], k1: 1.2, b: 0.75 }
const words = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 10 })
const corpus = fc.array(fc.record({
  title: fc.option(words, { nil: undefined }),
  content: words,
  tags: fc.array(fc.constantFrom('kayak', 'tea', 'the'), { maxLength: 2 }),
  day: fc.integer({ min: 0, max: 3 }),
}), { minLength: 1, maxLength: 100 })
const levers = fc.record({
  depth: fc.constant(100),
  window: fc.integer({ min: 1, max: 4 }),
  proximityWeight: fc.constantFrom(0, 0.5, 2),
  tagBoost: fc.constantFrom(1, 1.5, 0.5, 4),
})

function build(docs: Array<{ title?: string[]; content: string[]; tags: string[]; day: number }>) {
  const state = new IndexState<SearchDocument>(PLAIN_TEXT, true)
  docs.forEach((doc, n) => state.add({ id: `r${n}`, status: 'active', kind: 'semantic', title: doc.title?.join(' '), content: doc.content.join(' '), tags: doc.tags, createdAt: new Date(Date.UTC(2024, 0, 1 + doc.day)).toISOString() }, state.nextPosition++))
  return state
}

describe('re-ranking the best candidates', () => {
  it('keeps the same records with the same scores, in the same order, as re-scoring every candidate and sorting', () => {
    fc.assert(fc.property(corpus, fc.array(fc.constantFrom(...WORDS, 'kayek'), { minLength: 1, maxLength: 6 }), levers, fc.integer({ min: 1, max: 12 }), (docs, query, rerank: RerankParams, count) => {
      const state = build(docs)
      const text = query.join(' ')
      const terms = queryTerms(state.vocabulary, text)
      const { ranked } = rankedCandidates(state, params, DEFAULT_SEARCH_INDEX_OPTIONS.feedback, terms, checkQuery({ query: text }), new Set(), 100)
      const scorer = candidateScorer(state, rerank, terms)
      const everyOne = ranked.map(candidate => ({ ...candidate, score: scorer(candidate) })).sort((a, c) => state.slots.compare(c, a)).slice(0, count)
      expect(rerankBest(state, rerank, terms, ranked, count)).toEqual(everyOne)
    }), { numRuns: 500 })
  })
})
