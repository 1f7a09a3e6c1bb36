import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { idf, rank, type Bm25fParams } from '../../src/search/bm25f.ts'
import { lentTerms, type FeedbackParams } from '../../src/search/feedback.ts'
import { PLAIN_TEXT } from '../../src/search/plain-text.ts'
import { queryTerms } from '../../src/search/query-terms.ts'
import { scratch } from '../../src/search/scratch.ts'
import { IndexState } from '../../src/search/state.ts'
import { FIELDS } from '../../src/search/slots.ts'
import type { SearchDocument } from '../../src/search/types.ts'

const WORDS = ['kayak', 'paddle', 'lake', 'river', 'trip', 'coffee', 'tea', 'note', 'note', 'jazz', 'rent', 'garden', 'paris', 'lyon', 'blues']
const params: Bm25fParams = { weights: [2, 1, 2, 1], k1: 1.2, b: 0.75 }
const words = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 12 })
const corpus = fc.array(fc.record({ title: fc.option(words, { nil: undefined }), content: words, tags: fc.array(fc.constantFrom('kayak', 'tea', 'rent'), { maxLength: 2 }), removed: fc.boolean() }), { minLength: 1, maxLength: 120 })
const settings = fc.record({ records: fc.integer({ min: 1, max: 12 }), terms: fc.integer({ min: 1, max: 20 }), weight: fc.constant(0.1), minRecords: fc.integer({ min: 0, max: 3 }), maxShare: fc.constantFrom(0.05, 0.1, 0.3, 1) })

function build(docs: Array<{ title?: string[]; content: string[]; tags: string[]; removed: boolean }>) {
  const state = new IndexState<SearchDocument>(PLAIN_TEXT, true)
  docs.forEach((doc, n) => state.add({ id: `r${n}`, status: 'active', kind: 'semantic', title: doc.title?.join(' '), content: doc.content.join(' '), tags: doc.tags, createdAt: '2024-01-01T00:00:00.000Z' }, state.nextPosition++))
  docs.forEach((doc, n) => { if (doc.removed && state.slots.live > 1) state.remove(`r${n}`) })
  return state
}

/** The lent values of every top record tokenized again, in the order the records use the terms (before the choice of the strongest). */
function valuesByTokens(state: IndexState<SearchDocument>, feedback: FeedbackParams, terms: ReadonlyMap<string, number>, top: Array<{ slot: number; score: number }>) {
  const { slots, vocabulary } = state
  const lent = new Map<string, number>()
  for (const { slot, score } of top) {
    const length = slots.lengths[slot * FIELDS]! + slots.lengths[slot * FIELDS + 1]! + slots.lengths[slot * FIELDS + 2]!
    const tokens = state.retokenize(slots.records[slot]!)
    for (const id of tokens.termIds) {
      const term = vocabulary.termNames[id]!
      const df = vocabulary.termFrequency[id]!
      if (terms.has(term) || df < feedback.minRecords || df > feedback.maxShare * slots.live) continue
      const local = tokens.localOf(id)
      const count = tokens.termCounts[local]! + tokens.termCounts[local + 1]! + tokens.termCounts[local + 2]! + tokens.termCounts[local + 3]!
      lent.set(term, (lent.get(term) ?? 0) + count / length * score / top[0]!.score * idf(slots.live, df))
    }
  }
  return lent
}

describe('feedback terms', () => {
  it('the terms lent and their weights are those of every top record tokenized again, in the same order (ties included)', () => {
    fc.assert(fc.property(corpus, fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }), settings, (docs, query, feedback: FeedbackParams) => {
      const state = build(docs)
      const terms = queryTerms(state.vocabulary, query.join(' '))
      const ranking = rank(state, params, terms)
      const top = ranking.touched.map(slot => ({ slot, score: scratch.scores[slot]! })).sort((a, c) => c.score - a.score || c.slot - a.slot).slice(0, feedback.records)
      const lent = lentTerms(state, feedback, terms, top)
      const values = valuesByTokens(state, feedback, terms, top)
      const chosen = [...values].sort((a, c) => c[1] - a[1]).slice(0, feedback.terms)
      expect([...lent.keys()].every(term => values.has(term))).toBe(true)
      expect([...lent.keys()]).toEqual(chosen.map(([term]) => term).filter(term => lent.has(term)))
      if (chosen.length > 0) for (const [term, weight] of lent) expect(weight).toBe(feedback.weight * values.get(term)! / chosen[0]![1])
    }), { numRuns: 500 })
  })
})
