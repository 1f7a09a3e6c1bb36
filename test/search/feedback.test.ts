import { describe, expect, it } from 'vitest'
import { createSearchIndex, type MemorySearchIndexOptions } from '../../src/memory/search-index.ts'
import type { MemoryRecord } from '../../src/memory/types.ts'
import { record } from '../fixtures/records.ts'

function search(records: MemoryRecord[], query: string, options: MemorySearchIndexOptions = {}) {
  const index = createSearchIndex(options)
  for (const item of records) index.update(item)
  return index.search({ query }).map(hit => hit.record.id)
}
const byKayak = (ids: string[]) => [...ids.slice(0, 2)].sort()

// "kayak" finds two records that also say "paddle"; a third says "paddle" but not "kayak".
const first = record({ content: 'rented a kayak and a paddle at the lake' })
const second = record({ content: 'the kayak trip needed a second paddle' })
const lent = record({ content: 'bought a new paddle for the river' })
const unrelated = Array.from({ length: 30 }, (_, n) => record({ content: `note ${n} about groceries and rent` }))

describe('pseudo-relevance feedback', () => {
  it('is on by default: the best results lend their telling terms, which find a record without the query word', () => {
    const ids = search([first, second, lent, ...unrelated], 'kayak')
    expect(byKayak(ids)).toEqual([first.id, second.id].sort())
    expect(ids.slice(2)).toEqual([lent.id])
  })

  it('is off with { records: 0 }', () => {
    expect(search([first, second, lent, ...unrelated], 'kayak', { feedback: { records: 0 } }).sort()).toEqual([first.id, second.id].sort())
  })

  it('lends no term held by fewer than minRecords records', () => {
    expect(search([first, second, lent, ...unrelated], 'kayak', { feedback: { minRecords: 4 } }).sort()).toEqual([first.id, second.id].sort())
  })

  it('lends no term held by more than maxShare of the records', () => {
    // "paddle" is in 3 of 33 records (9%).
    expect(search([first, second, lent, ...unrelated], 'kayak', { feedback: { maxShare: 0.05 } }).sort()).toEqual([first.id, second.id].sort())
  })
})
