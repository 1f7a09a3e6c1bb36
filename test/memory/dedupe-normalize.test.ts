import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { normalizeContent } from '../../src/memory/dedupe.ts'

/** The comparison form by its definition: NFKC, full case folding, white space and format characters collapsed, trimmed. */
const reference = (content: string) => content.normalize('NFKC').toLowerCase().toUpperCase().toLowerCase().replace(/[\s\p{Cf}]+/gu, ' ').trim()

describe('normalizeContent', () => {
  it('ASCII content gets the same comparison form as by the full definition', () => {
    fc.assert(fc.property(fc.string({ unit: fc.integer({ min: 0, max: 0x7f }).map(code => String.fromCharCode(code)), maxLength: 80 }), (content) => {
      expect(normalizeContent(content)).toBe(reference(content))
    }), { numRuns: 2000 })
    // Words and white space: single spaces between words (left as they are), runs, other spaces, spaces at the ends.
    fc.assert(fc.property(fc.string({ unit: fc.constantFrom('a', 'Q', '7', '.', ' ', ' ', ' ', '\t', '\n', '\r', '\v', '\f'), maxLength: 40 }), (content) => {
      expect(normalizeContent(content)).toBe(reference(content))
    }), { numRuns: 2000 })
    expect(normalizeContent('User 7 enjoys TEA')).toBe('user 7 enjoys tea')
  })

  it('content with other characters gets the comparison form of the full definition', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (content) => {
      expect(normalizeContent(content)).toBe(reference(content))
    }), { numRuns: 500 })
    expect(normalizeContent('  Likes\u200B  GRÜNEN Tee ')).toBe('likes grünen tee')
  })
})
