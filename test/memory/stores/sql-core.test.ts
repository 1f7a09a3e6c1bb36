import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { indexTerms, recordRow } from '../../../src/memory/stores/sql/core.ts'
import type { MemoryRecord } from '../../../src/memory/types.ts'

const record = (title: string | undefined, content: string, tags: string[], keywords: string[]): MemoryRecord => ({
  id: 'mem_00000000000000000000000000000001',
  store: 'agent',
  scope: { agent: 'support', user: 'alice' },
  kind: 'semantic',
  content,
  ...(title === undefined ? {} : { title }),
  tags,
  ...(keywords.length > 0 ? { keywords } : {}),
  metadata: {},
  pinned: false,
  supersedes: [],
  provenance: {},
  audit: { via: 'api' },
  createdAt: '2024-01-01T00:00:00.000Z',
  updatedAt: '2024-01-01T00:00:00.000Z',
  version: 1,
  status: 'active',
})

const text = fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: 'grapheme', maxLength: 60 }), fc.constantFrom('ÉCOLE Über straße', 'the kids were running', "don't stop-words", 'Ünïcödé 42 tea'))

describe('SQL record rows', () => {
  it('the field lengths a row counts without its terms equal the numbers of its terms', () => {
    fc.assert(fc.property(fc.option(text, { nil: undefined }), text, fc.array(text, { maxLength: 3 }), fc.array(text, { maxLength: 2 }), (title, content, tags, keywords) => {
      const of = record(title, content, tags, keywords)
      const full = recordRow(of, 1, 'agent\u0000p', false, [1], true)
      expect(recordRow(of, 1, 'agent\u0000p', false, [1], false).lengths).toEqual([full.titleTerms.length, full.contentTerms.length, full.tagTerms.length])
    }), { numRuns: 500 })
  })

  it('the FTS5 row of a record is its terms per field (dates last), space separated; a record of stop-words alone has its date words only', () => {
    const of = record('Tea time', 'Alice likes green tea', ['drinks'], [])
    const row = recordRow(of, 1, 'agent\u0000p')
    expect(row.dateTerms.length).toBe(4)
    expect(indexTerms(of, 'agent\u0000p')).toEqual([row.titleTerms.join(' '), row.contentTerms.join(' '), row.tagTerms.join(' '), row.dateTerms.join(' ')])
    const stopWords = record(undefined, 'the and of', [], [])
    expect(indexTerms(stopWords, 'agent\u0000p')).toEqual(['', '', '', recordRow(stopWords, 2, 'agent\u0000p').dateTerms.join(' ')])
  })
})
