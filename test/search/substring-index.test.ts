import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createSearchIndex, searchRecords } from '../../src/memory/search-index.ts'
import type { MemoryRecord } from '../../src/memory/types.ts'
import { record } from '../fixtures/records.ts'

// The index keeps postings in shared int32 arenas, tombstones removed
// records and answers the substring rule from letter/digit runs. These tests hold it to the
// documented rule (searchRecords) on the same records.


const WORDS = ['coffee', 'Coffee', 'coffeehouse', 'tea', 'steam', 'café', 'CAFÉ', 'Σοφία', 'ΟΔΟΣ', '東京都', 'e-mail', "don't", "Caroline's", '12', '2023', 'İstanbul', 'straße', 'a\u0301', '😀x', 'ab']
const SEPARATORS = [' ', ', ', '-', '\n', '. ', "'", '?', '']
const text = fc.array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...SEPARATORS)), { maxLength: 10 }).map(parts => parts.map(([word, separator]) => word + separator).join(''))
const QUERIES = [...WORDS, 'offe', 'coffee tea', ' tea', 'e-mail', 'a', '-', '?', "n't", 'ca', 'σ', 'ς', 'i̇', '3 c', '東京']
import { expectDocumentedPage } from '../helpers/substring-page.ts'

describe('search index: substring rule from runs', () => {
  it('mode "substring" equals the documented rule on any text, query, filter and removal', () => {
    fc.assert(fc.property(
      fc.array(fc.record({ content: text, title: fc.option(text, { nil: undefined }), tags: fc.array(fc.constantFrom(...WORDS), { maxLength: 3 }), kind: fc.constantFrom('semantic', 'episodic'), day: fc.integer({ min: 1, max: 4 }), removed: fc.boolean() }), { maxLength: 25 }),
      fc.constantFrom(...QUERIES),
      fc.integer({ min: 1, max: 8 }),
      fc.boolean(),
      (drafts, query, limit, onlyEpisodic) => {
        const index = createSearchIndex()
        const records = drafts.map(draft => record({ content: draft.content, ...(draft.title !== undefined ? { title: draft.title } : {}), tags: draft.tags, kind: draft.kind, createdAt: `2024-01-0${draft.day}T00:00:00Z` }))
        for (const item of records) index.update(item)
        const current = records.map((item, at) => (drafts[at]!.removed ? { ...item, status: 'deleted' as const } : item))
        current.forEach((item, at) => drafts[at]!.removed && index.update(item))
        const filters = { query, limit, ...(onlyEpisodic ? { kinds: ['episodic'] } : {}) }
        const expected = searchRecords(current, filters).map(hit => [hit.record.id, hit.score])
        expect(index.search({ ...filters, mode: 'substring' }).map(hit => [hit.record.id, hit.score])).toEqual(expected)
        expectDocumentedPage(index.search(filters), current, filters)
      },
    ), { numRuns: 400 })
  })

  it('mode "substring" equals the documented rule for needles of several words, before and after more records arrive', () => {
    // Few words, so that records hold long needles; a needle may start or end inside a word.
    const PHRASE_WORDS = ['coffee', 'garden', 'sister', 'beach', 'train', 'dinner']
    const content = fc.array(fc.constantFrom(...PHRASE_WORDS), { minLength: 1, maxLength: 8 }).map(words => words.join(' '))
    const needle = fc.tuple(fc.array(fc.constantFrom(...PHRASE_WORDS), { minLength: 2, maxLength: 6 }), fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 2 }))
      .map(([words, cutStart, cutEnd]) => words.join(' ').slice(cutStart, words.join(' ').length - cutEnd))
    fc.assert(fc.property(fc.array(content, { minLength: 1, maxLength: 120 }), fc.array(content, { maxLength: 60 }), needle, fc.integer({ min: 1, max: 8 }), (first, later, query, limit) => {
      const index = createSearchIndex()
      const records: MemoryRecord[] = []
      const add = (texts: string[]) => texts.forEach((text, n) => {
        const item = record({ content: text, createdAt: `2024-01-0${1 + (n % 4)}T00:00:00Z` })
        records.push(item)
        index.update(item)
      })
      add(first)
      const same = () => expect(index.search({ query, limit, mode: 'substring' }).map(hit => [hit.record.id, hit.score])).toEqual(searchRecords(records, { query, limit }).map(hit => [hit.record.id, hit.score]))
      same()
      add(later)
      same()
    }), { numRuns: 300 })
  })

  it('mode "substring" equals the documented rule for needles of several words whose words records repeat, with records removed and others written between searches', () => {
    // A record may hold a word of the needle many times and the needle once (or not at all): a
    // record's bound is the least count of a needle's piece, never more than the needle's count.
    const PHRASE_WORDS = ['coffee', 'garden', 'sister', 'beach']
    const content = fc.array(fc.constantFrom(...PHRASE_WORDS), { minLength: 1, maxLength: 10 }).map(words => words.join(' '))
    const needle = fc.tuple(fc.array(fc.constantFrom(...PHRASE_WORDS), { minLength: 2, maxLength: 4 }), fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 2 }))
      .map(([words, cutStart, cutEnd]) => words.join(' ').slice(cutStart, words.join(' ').length - cutEnd))
    const batch = fc.array(fc.tuple(content, fc.boolean()), { minLength: 1, maxLength: 80 })
    fc.assert(fc.property(fc.array(batch, { minLength: 2, maxLength: 4 }), needle, fc.integer({ min: 1, max: 6 }), (batches, query, limit) => {
      const index = createSearchIndex()
      const current = new Map<string, MemoryRecord>()
      for (const [at, texts] of batches.entries()) {
        for (const [n, [text, removed]] of texts.entries()) {
          const item = record({ content: text, createdAt: `2024-01-0${1 + ((at + n) % 4)}T00:00:00Z` })
          current.set(item.id, item)
          index.update(item)
          // Removed right away or a batch later: the slots of removed records are reused.
          if (removed) {
            const older = [...current.values()].find(old => old.status === 'active' && old.id !== item.id) ?? item
            const gone = { ...older, status: 'deleted' as const }
            current.set(gone.id, gone)
            index.update(gone)
          }
        }
        const records = [...current.values()]
        expect(index.search({ query, limit, mode: 'substring' }).map(hit => [hit.record.id, hit.score])).toEqual(searchRecords(records, { query, limit }).map(hit => [hit.record.id, hit.score]))
      }
    }), { numRuns: 300 })
  })

  it('a query that occurs inside a longer word finds it, counting every occurrence', () => {
    const index = createSearchIndex()
    const inside = record({ content: 'The coffeehouse sold COFFEE and coffee beans' })
    index.update(inside)
    index.update(record({ content: 'green tea only' }))
    expect(index.search({ query: 'offe', mode: 'substring' }).map(hit => [hit.record.id, hit.score])).toEqual([[inside.id, 3]])
  })
})

describe('search index: tombstones', () => {
  it('results stay those of the documented rule after most records are superseded and the index drops its tombstones', () => {
    const index = createSearchIndex()
    const all: MemoryRecord[] = []
    for (let n = 0; n < 3000; n++) {
      const item = record({ content: `note ${n} ${n % 3 === 0 ? 'coffee' : 'tea'}`, createdAt: `2024-01-0${1 + (n % 5)}T00:00:00Z` })
      all.push(item)
      index.update(item)
    }
    expect(index.size).toBe(3000)
    const current = all.map((item, n) => (n % 10 === 0 ? item : { ...item, status: 'superseded' as const }))
    for (const item of current) if (item.status !== 'active') index.update(item)
    expect(index.size).toBe(300)
    for (const query of ['coffee', 'tea', 'note 12', '99']) {
      const expected = searchRecords(current, { query, limit: 20 }).map(hit => [hit.record.id, hit.score])
      expect(index.search({ query, limit: 20, mode: 'substring' }).map(hit => [hit.record.id, hit.score])).toEqual(expected)
    }
    const ranked = index.search({ query: 'coffee', limit: 5 })
    expect(ranked).toHaveLength(5)
    expect(ranked.every(hit => hit.record.status === 'active' && hit.record.content.includes('coffee'))).toBe(true)
  })
})
