import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { scoreSlot, type Bm25fParams } from '../../src/search/bm25f.ts'
import { scoresOf } from '../../src/search/kept-scores.ts'
import { PLAIN_TEXT } from '../../src/search/plain-text.ts'
import { IndexState } from '../../src/search/state.ts'
import type { SearchDocument } from '../../src/search/types.ts'

const WORDS = ['kayak', 'paddle', 'lake', 'river', 'trip', 'coffee', 'note', 'note', 'note']
const params: Bm25fParams = { weights: [2, 1, 2, 1], k1: 1.2, b: 0.75 }
const words = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 10 })
const corpus = fc.array(fc.record({ title: fc.option(words, { nil: undefined }), content: words, tags: fc.array(fc.constantFrom('kayak', 'tea'), { maxLength: 2 }), removed: fc.boolean() }), { minLength: 1, maxLength: 80 })

function build(docs: Array<{ title?: string[]; content: string[]; tags: string[]; removed: boolean }>) {
  const state = new IndexState<SearchDocument>(PLAIN_TEXT, true)
  docs.forEach((doc, n) => state.add({ id: `r${n}`, status: 'active', kind: 'semantic', title: doc.title?.join(' '), content: doc.content.join(' '), tags: doc.tags, createdAt: '2024-01-01T00:00:00.000Z' }, state.nextPosition++))
  docs.forEach((doc, n) => { if (doc.removed && state.slots.live > 1) state.remove(`r${n}`) })
  return state
}

describe('scores of given records', () => {
  it('equal, to the bit, the scores each record gets from its own tokens, whichever way they are read', () => {
    fc.assert(fc.property(corpus, fc.array(fc.constantFrom(...WORDS, 'absent'), { minLength: 1, maxLength: 4 }), fc.array(fc.nat(), { minLength: 1, maxLength: 12 }), (docs, query, picks) => {
      const state = build(docs)
      const live = [...Array(state.slots.count).keys()].filter(slot => state.slots.alive[slot] === 1)
      const wanted = new Set(picks.map(pick => live[pick % live.length]!))
      const terms = new Map(query.map((word, at) => [word, 1 - at * 0.1]))
      const scores = scoresOf(state, params, terms, wanted)
      expect([...scores.keys()].sort()).toEqual([...wanted].sort())
      for (const slot of wanted) expect(scores.get(slot)).toBe(scoreSlot(state, params, terms, slot).score)
    }))
  })
})
