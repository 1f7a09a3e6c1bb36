import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createSearchIndex } from '../../src/memory/search-index.ts'
import type { MemoryRecord } from '../../src/memory/types.ts'
import { record } from '../fixtures/records.ts'

// The index tokenizes ASCII text with a one-pass scanner and caches what each run is as a token;
// removals tokenize a record again without creating terms. These tests hold an index that took
// adds, supersedes and deletes (each applied by a search in between) to a fresh index of the final records.

const WORDS = ['coffee', 'Coffee', 'coffees', 'tea', 'the', 'The', 'it', "it's", "Caroline's", 'caroline', "don't", 'rock\'n\'roll', 'go2', '2023', 'Paris', 'paint', 'painting', 'PAINTED', 'café', 'x']
const SEPARATORS = [' ', ', ', '-', '\n', '. ', "'", '']
const text = fc.array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...SEPARATORS)), { minLength: 1, maxLength: 12 }).map(parts => parts.map(([word, separator]) => word + separator).join(''))
const QUERIES = ['coffee', 'tea', 'caroline', 'paint', 'Paris 2023', 'go2', "it's", 'rock', 'café', 'painting coffee', 'ee', 'coffee tea the']

const ranked = (records: readonly MemoryRecord[], index: ReturnType<typeof createSearchIndex>, query: string) =>
  index.search({ query, limit: 50 }).map(hit => `${hit.record.id}:${hit.score}:${hit.snippet ?? ''}`)

describe('search index tokenizing', () => {
  it('an index that took adds, supersedes and deletes ranks like a fresh index of the final records', () => {
    fc.assert(fc.property(
      fc.array(fc.record({ content: text, title: fc.option(text, { nil: undefined }), tags: fc.array(fc.constantFrom(...WORDS), { maxLength: 3 }) }), { minLength: 1, maxLength: 20 }),
      fc.array(fc.record({ at: fc.nat(), change: fc.oneof(fc.constant(undefined), text) }), { maxLength: 20 }),
      fc.constantFrom(...QUERIES),
      (drafts, changes, query) => {
        const index = createSearchIndex()
        // Distinct creation times: ties never fall back to positions, which differ between the two indexes.
        let second = 0
        const make = (fields: { content: string; title?: string; tags: string[] }) => record({ ...fields, createdAt: new Date(Date.UTC(2024, 0, 1, 0, 0, ++second)).toISOString() })
        const current = new Map<string, MemoryRecord>()
        for (const draft of drafts) {
          const item = make({ content: draft.content, ...(draft.title !== undefined ? { title: draft.title } : {}), tags: draft.tags })
          current.set(item.id, item)
          index.update(item)
        }
        index.search({ query: 'coffee' })
        for (const { at, change } of changes) {
          const ids = [...current.keys()]
          if (ids.length === 0) break
          const target = current.get(ids[at % ids.length]!)!
          current.delete(target.id)
          if (change === undefined) index.update({ ...target, status: 'deleted' })
          else {
            index.update({ ...target, status: 'superseded' })
            const next = make({ content: change, tags: target.tags })
            current.set(next.id, next)
            index.update(next)
          }
          index.search({ query })
        }
        const fresh = createSearchIndex()
        for (const item of current.values()) fresh.update(item)
        expect(index.size).toBe(fresh.size)
        expect(ranked([...current.values()], index, query)).toEqual(ranked([...current.values()], fresh, query))
      },
    ), { numRuns: 300 })
  })

  it('a word first met as a stop-word or inside a clitic is counted where it is a word of its own', () => {
    const index = createSearchIndex()
    const first = record({ content: "it's Caroline's", createdAt: '2024-01-01T00:00:00Z' })
    const second = record({ content: 's caroline it', createdAt: '2024-01-02T00:00:00Z' })
    index.update(first)
    index.update(second)
    expect(index.search({ query: 'caroline' }).map(hit => hit.record.id)).toEqual([second.id, first.id])
    expect(index.search({ query: 's', mode: 'substring' }).map(hit => [hit.record.id, hit.score])).toEqual([[first.id, 2], [second.id, 1]])
  })
})
