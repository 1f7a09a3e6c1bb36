import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MEMORY_SEARCH_TEXT, searchRecords } from '../../src/memory/search-index.ts'
import type { MemoryRecord } from '../../src/memory/types.ts'
import { checkQuery } from '../../src/search/query.ts'
import { IndexState } from '../../src/search/state.ts'
import { ImpactOrders } from '../../src/search/impact-order.ts'
import { substringSearch } from '../../src/search/substring-index.ts'
import { record } from '../fixtures/records.ts'

// Words whose runs contain one another ("coffee" lies in three runs), so a needle is read from
// one copy or several.
const WORDS = ['coffee', 'coffeehouse', 'decoffee', 'tea', 'steam', 'Coffee', 'kayak']
const content = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 }).map(words => words.join(' '))
const draft = fc.record({ content, day: fc.integer({ min: 1, max: 3 }), tagged: fc.boolean() })
// A step: write records, remove or supersede some earlier ones, then search.
const step = fc.record({ writes: fc.array(draft, { maxLength: 30 }), removals: fc.array(fc.nat(), { maxLength: 6 }), query: fc.constantFrom('coffee', 'offe', 'tea', 'kayak', 'coffeehouse'), limit: fc.integer({ min: 1, max: 8 }), tag: fc.boolean() })

describe('impact-ordered run copies', () => {
  it('the substring rule read from impact-ordered copies equals reading every posting and the documented rule, with writes and removals between searches', () => {
    fc.assert(fc.property(fc.array(step, { minLength: 1, maxLength: 6 }), (steps) => {
      const state = new IndexState<MemoryRecord>(MEMORY_SEARCH_TEXT, true)
      const live = new Map<string, MemoryRecord>()
      for (const { writes, removals, query, limit, tag } of steps) {
        for (const { content, day, tagged } of writes) {
          const item = record({ content, createdAt: `2024-01-0${day}T00:00:00.000Z`, tags: tagged ? ['travel'] : [] })
          state.add(item, state.nextPosition++)
          live.set(item.id, item)
        }
        const ids = [...live.keys()]
        for (const pick of removals) {
          const id = ids[pick % Math.max(1, ids.length)]
          if (id === undefined || !live.has(id)) continue
          state.remove(id)
          live.delete(id)
        }
        const checked = checkQuery({ query, limit, ...(tag ? { tags: ['travel'] } : {}) })
        const byImpact = substringSearch(state, checked, 0)
        expect(byImpact).toEqual(substringSearch(state, checked, Number.POSITIVE_INFINITY))
        const expected = searchRecords([...live.values()], { query, limit, ...(tag ? { tags: ['travel'] } : {}) })
        expect(byImpact.map(({ slot, score }) => [state.slots.records[slot]!.id, score])).toEqual(expected.map(hit => [hit.record.id, hit.score]))
      }
    }), { numRuns: 300 })
  })
})

describe('impact-ordered copies: bound', () => {
  it('copies of many long lists hold at most twice the slots plus one list, the least recently read dropped', () => {
    const state = new IndexState<MemoryRecord>(MEMORY_SEARCH_TEXT, true)
    for (let n = 0; n < 600; n++) state.add(record({ content: 'alpha bravo charlie delta echo foxtrot' }), state.nextPosition++)
    const orders = new ImpactOrders(state.runs.postings)
    for (const word of ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot']) {
      const copy = orders.copy(state.runs.ids.get(word)!, state.slots)
      expect(copy.length).toBe(600)
      expect(orders.size).toBeLessThanOrEqual(2 * 600 + 600)
    }
    expect(orders.size).toBe(3 * 600)
  })
})
