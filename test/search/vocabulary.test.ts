import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { editDistance } from '../../src/search/text.ts'
import { Vocabulary } from '../../src/search/vocabulary.ts'

describe('vocabulary: fuzzy candidates', () => {
  it('offers every live plain Latin surface within the edit distance (and only near lengths)', () => {
    fc.assert(fc.property(
      fc.uniqueArray(fc.stringMatching(/^[a-e]{1,9}$/), { minLength: 1, maxLength: 60 }),
      fc.stringMatching(/^[a-e]{1,9}$/),
      fc.integer({ min: 1, max: 2 }),
      (words, word, max) => {
        const vocabulary = new Vocabulary()
        for (const surface of words) vocabulary.surfaceCounts[vocabulary.surfaceId(surface, true)] = 1
        const offered = new Set<string>()
        vocabulary.forEachNearLatin(word, max, (_, surface) => offered.add(surface))
        for (const surface of words) {
          if (editDistance(word, surface, max) <= max) expect(offered.has(surface)).toBe(true)
          if (offered.has(surface)) expect(Math.abs(surface.length - word.length)).toBeLessThanOrEqual(max)
        }
      },
    ), { numRuns: 300 })
  })

  it('offers no surface that no live record holds', () => {
    const vocabulary = new Vocabulary()
    vocabulary.surfaceId('paintng', true)
    const offered: string[] = []
    vocabulary.forEachNearLatin('painting', 2, (_, surface) => offered.push(surface))
    expect(offered).toEqual([])
  })
})
