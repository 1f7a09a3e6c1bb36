import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createSearchIndex } from '../../src/memory/search-index.ts'
import type { MemoryRecord } from '../../src/memory/types.ts'
import { record } from '../fixtures/records.ts'

// Words near one another (one edit, compounds, synonyms), so that fuzzy matching, compound splits
// and synonyms change with every record that comes or goes.
const WORDS = ['zebra', 'zebre', 'cobra', 'road', 'trip', 'roadtrip', 'kid', 'child', 'movie', 'film', 'painting', 'paintng', 'tea']
const QUERIES = ['zebrz', 'zebra', 'roadtrip', 'kids movie', 'paintin tea', 'cobre road', 'trip']

describe('query terms kept across index changes', () => {
  it('a search after every change finds what an index built from the last records alone finds', () => {
    const content = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }).map(words => words.join(' '))
    const change = fc.oneof(
      fc.record({ type: fc.constant('add' as const), content }),
      fc.record({ type: fc.constant('edit' as const), at: fc.nat(), content }),
      fc.record({ type: fc.constant('remove' as const), at: fc.nat() }),
    )
    fc.assert(fc.property(fc.array(change, { minLength: 1, maxLength: 25 }), fc.array(fc.constantFrom(...QUERIES), { minLength: 1, maxLength: 3 }), (changes, queries) => {
      const searched = createSearchIndex()
      const live = new Map<string, MemoryRecord>()
      const order: string[] = []
      for (const step of changes) {
        if (step.type === 'add') {
          const added = record({ content: step.content })
          order.push(added.id)
          live.set(added.id, added)
          searched.update(added)
        }
        else if (order.length > 0) {
          const id = order[step.at % order.length]!
          const existing = live.get(id)!
          const next = step.type === 'edit' ? { ...existing, content: step.content, version: existing.version + 1 } : { ...existing, status: 'deleted' as const, version: existing.version + 1 }
          live.set(id, next)
          searched.update(next)
        }
        for (const query of queries) searched.search({ query })
      }
      const fresh = createSearchIndex()
      for (const id of order) fresh.update(live.get(id)!)
      for (const query of queries) {
        const found = (index: typeof fresh) => index.search({ query }).map(hit => [hit.record.id, hit.score])
        expect(found(searched)).toEqual(found(fresh))
      }
    }), { numRuns: 300 })
  })
})
