import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { countOccurrences, DEFAULT_SEARCH_LIMIT, searchRecords } from '../../src/search/search.ts'
import { parseInstant } from '../../src/memory/records.ts'
import type { MemoryRecord } from '../../src/memory/types.ts'
import { record } from '../fixtures/records.ts'


describe('countOccurrences', () => {
  it('counts non-overlapping, case-insensitive occurrences', () => {
    expect(countOccurrences('aaa', 'aa')).toBe(1)
    expect(countOccurrences('Tea, TEA and tea', 'tea')).toBe(3)
    expect(countOccurrences('', 'tea')).toBe(0)
  })
})

describe('searchRecords', () => {
  it('the default limit is 10', () => {
    expect(DEFAULT_SEARCH_LIMIT).toBe(10)
    const records = Array.from({ length: 11 }, () => record({ content: 'x' }))
    expect(searchRecords(records, { query: 'x' })).toHaveLength(10)
  })

  it('score sums matches in title, content and each tag, counted per field (never across fields)', () => {
    const hit = record({ title: 'ab', content: 'ab cd ab', tags: ['AB', 'b'] })
    expect(searchRecords([hit], { query: 'Ab' })).toEqual([{ record: hit, score: 4 }])
    // "b" + "c" only meet across the title/content boundary.
    expect(searchRecords([record({ title: 'ab', content: 'cd' })], { query: 'bc' })).toEqual([])
  })

  it('matches are case-insensitive beyond ASCII', () => {
    const hit = record({ content: 'École du Louvre' })
    expect(searchRecords([hit], { query: 'éCOLE' }).map(result => result.score)).toEqual([1])
  })

  it('only active records are results', () => {
    const records = [
      record({ content: 'cat', status: 'superseded' }),
      record({ content: 'cat', status: 'deleted' }),
      record({ content: 'cat' }),
    ]
    expect(searchRecords(records, { query: 'cat' }).map(hit => hit.record)).toEqual([records[2]])
  })

  it('ties in score go newest first, by createdAt and then by position', () => {
    const older = record({ content: 'cat', createdAt: '2023-01-01T00:00:00Z' })
    const sameTimeFirst = record({ content: 'cat', createdAt: '2024-01-01T00:00:00Z' })
    const sameTimeSecond = record({ content: 'cat', createdAt: '2024-01-01T00:00:00Z' })
    const offsetNewest = record({ content: 'cat', createdAt: '2024-01-01T01:00:00+00:30' })
    expect(searchRecords([older, sameTimeFirst, sameTimeSecond, offsetNewest], { query: 'cat' }).map(hit => hit.record)).toEqual([offsetNewest, sameTimeSecond, sameTimeFirst, older])
  })

  it('an empty kinds list matches nothing; an empty tags list adds no condition', () => {
    const records = [record({ content: 'cat', tags: ['x'] })]
    expect(searchRecords(records, { query: 'cat', kinds: [] })).toEqual([])
    expect(searchRecords(records, { query: 'cat', tags: [] })).toHaveLength(1)
  })

  it('a limit of 0 or a negative or fractional limit is MEMORY_QUERY_INVALID, not the default', () => {
    for (const limit of [0, -1, 2.5, Number.NaN]) {
      expect(() => searchRecords([], { query: 'x', limit })).toThrow(expect.objectContaining({ code: 'MEMORY_QUERY_INVALID' }))
    }
  })

  it('an empty or blank query is MEMORY_QUERY_INVALID, not "everything"', () => {
    for (const query of ['', '   ']) {
      expect(() => searchRecords([record({ content: 'x' })], { query })).toThrow(expect.objectContaining({ code: 'MEMORY_QUERY_INVALID' }))
    }
  })

  it('an unparsable after or before is MEMORY_QUERY_INVALID, not an empty result', () => {
    expect(() => searchRecords([], { query: 'x', after: 'yesterday' })).toThrow(expect.objectContaining({ code: 'MEMORY_QUERY_INVALID', details: { field: 'after' } }))
    expect(() => searchRecords([], { query: 'x', before: '2024-13-45' })).toThrow(expect.objectContaining({ code: 'MEMORY_QUERY_INVALID', details: { field: 'before' } }))
  })

  it('results are the best-scoring matching active records, sorted, at most limit', () => {
    const arbitraryRecord = fc.record({
      content: fc.string({ unit: fc.constantFrom('a', 'b', 'A', ' '), maxLength: 8 }),
      tags: fc.array(fc.string({ unit: fc.constantFrom('a', 'b'), maxLength: 3 }), { maxLength: 2 }),
      status: fc.constantFrom('active', 'active', 'superseded', 'deleted') as fc.Arbitrary<MemoryRecord['status']>,
    }).map(fields => record(fields))
    fc.assert(fc.property(fc.array(arbitraryRecord, { maxLength: 20 }), fc.constantFrom('a', 'ab', 'b a'), fc.integer({ min: 1, max: 12 }), (records, query, limit) => {
      const hits = searchRecords(records, { query, limit })
      const score = (candidate: MemoryRecord) => [candidate.content, ...candidate.tags].reduce((sum, text) => sum + countOccurrences(text, query.toLowerCase()), 0)
      const eligible = records.filter(candidate => candidate.status === 'active' && score(candidate) > 0)
      expect(hits.length).toBe(Math.min(limit, eligible.length))
      for (const [index, hit] of hits.entries()) {
        expect(hit.score).toBe(score(hit.record))
        if (index > 0) expect(hit.score).toBeLessThanOrEqual(hits[index - 1]!.score)
      }
      const lowest = hits.at(-1)?.score ?? 0
      const returned = new Set(hits.map(hit => hit.record))
      for (const candidate of eligible) if (!returned.has(candidate)) expect(score(candidate)).toBeLessThanOrEqual(lowest)
    }))
  })
})

describe('instants (parseInstant, the one rule of filters, imports and log lines)', () => {
  it('accepts ISO 8601 instants with Z or an offset, honouring the offset', () => {
    expect(parseInstant('2024-05-01T09:30:00Z')).toBe(Date.UTC(2024, 4, 1, 9, 30))
    expect(parseInstant('2024-05-01T10:30:00+01:00')).toBe(Date.UTC(2024, 4, 1, 9, 30))
    expect(parseInstant('2024-05-01T09:30:00.250Z')).toBe(Date.UTC(2024, 4, 1, 9, 30, 0, 250))
    expect(parseInstant('2024-05-01T09:30Z')).toBe(Date.UTC(2024, 4, 1, 9, 30))
  })

  it('reads a bare date as midnight UTC', () => {
    expect(parseInstant('2024-05-01')).toBe(Date.UTC(2024, 4, 1))
  })

  it.each(['2024-05-01T09:30:00', '2024-02-30', '2024-13-01', '2024-05-01T24:00:00Z', 'May 1, 2024', '1714556000000', '', 'yesterday'])('rejects %j', (text) => {
    expect(parseInstant(text)).toBeUndefined()
  })

  it('a search with after and before compares instants across offsets', () => {
    const early = record({ id: 'early', content: 'tea', createdAt: '2024-05-01T08:00:00Z' })
    const late = record({ id: 'late', content: 'tea', createdAt: '2024-05-01T10:00:00Z' })
    const hits = searchRecords([early, late], { query: 'tea', after: '2024-05-01T10:30:00+01:00' })
    expect(hits.map(hit => hit.record.id)).toEqual(['late'])
  })
})
