import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { editDistance } from '../../src/search/text.ts'
import { Vocabulary } from '../../src/search/vocabulary.ts'
import { IndexState } from '../../src/search/state.ts'
import { MEMORY_SEARCH_TEXT } from '../../src/memory/search-index.ts'
import type { MemoryRecord } from '../../src/memory/types.ts'
import { record } from '../fixtures/records.ts'

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

  it('offers the same surfaces in a large vocabulary (its length buckets) as in a small one (its flat scan)', () => {
    fc.assert(fc.property(
      fc.uniqueArray(fc.stringMatching(/^[a-e]{1,9}$/), { minLength: 1, maxLength: 60 }),
      fc.stringMatching(/^[a-e]{1,9}$/),
      fc.integer({ min: 1, max: 2 }),
      (words, word, max) => {
        const offered = (filler: number) => {
          const vocabulary = new Vocabulary()
          // Filler surfaces of other letters, none near `word`, held by no live record.
          for (let at = 0; at < filler; at++) vocabulary.surfaceId(`xyz${at.toString(26).replace(/[0-9]/g, digit => 'qrstuvwxyz'[Number(digit)]!)}`, true)
          for (const surface of words) vocabulary.surfaceCounts[vocabulary.surfaceId(surface, true)] = 1
          const found: string[] = []
          vocabulary.forEachNearLatin(word, max, (_, surface) => found.push(surface))
          return found.sort()
        }
        expect(offered(2100)).toEqual(offered(0))
      },
    ), { numRuns: 50 })
  })

  it('offers the same surfaces and finds the same words in a restored vocabulary (letter keys made by the restore or on first use) as in one built word by word', () => {
    fc.assert(fc.property(
      fc.uniqueArray(fc.oneof(fc.stringMatching(/^[a-e]{1,9}$/), fc.stringMatching(/^[0-9]{1,4}$/)), { minLength: 1, maxLength: 60 }),
      fc.stringMatching(/^[a-e]{1,9}$/),
      fc.integer({ min: 1, max: 2 }),
      (words, word, max) => {
        const built = new Vocabulary()
        for (const surface of words) built.surfaceCounts[built.surfaceId(surface, true)] = 1
        const restoredOf = (keyed: boolean) => {
          const restored = new Vocabulary()
          for (const surface of words) restored.surfaceCounts[restored.surfaceId(surface, true)] = 1
          restored.restoreSurfaces([...restored.surfaceNames])
          if (keyed) restored.keyLatinSurfaces()
          return restored
        }
        const offered = (vocabulary: Vocabulary) => {
          const found: string[] = []
          vocabulary.forEachNearLatin(word, max, (_, surface) => found.push(surface))
          return found
        }
        for (const restored of [restoredOf(true), restoredOf(false)]) {
          expect(offered(restored)).toEqual(offered(built))
          expect(restored.latinSurface(word)).toBe(built.latinSurface(word))
        }
      },
    ), { numRuns: 200 })
  })

  it('offers no surface that no live record holds', () => {
    const vocabulary = new Vocabulary()
    vocabulary.surfaceId('paintng', true)
    const offered: string[] = []
    vocabulary.forEachNearLatin('painting', 2, (_, surface) => offered.push(surface))
    expect(offered).toEqual([])
  })
})

describe('vocabulary: surfaces', () => {
  const WORDS = ['coffee', "Caroline's", 'caroline', 'May', 'may', 'the', "o'clock", 'clock', 'café', 'cafe', '東京都', "don't", 'don', 'go2', 'Paris']
  const text = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 10 }).map(words => words.join(' '))

  it('gives each surface text one id, whether met as a whole run or as part of a word, before and after its text map is made', () => {
    fc.assert(fc.property(fc.array(text, { minLength: 1, maxLength: 12 }), fc.nat({ max: 12 }), (contents, mapAfter) => {
      const state = new IndexState<MemoryRecord>(MEMORY_SEARCH_TEXT)
      contents.forEach((content, at) => {
        // The text map is made once a query asks for it; later surfaces are added to it.
        if (at === mapAfter) void state.vocabulary.surfaceIds.size
        state.add(record({ content }), state.nextPosition++)
      })
      const names = state.vocabulary.surfaceNames
      expect(new Set(names).size).toBe(names.length)
      for (const [sid, name] of names.entries()) expect(state.vocabulary.surfaceIds.get(name)).toBe(sid)
      expect(state.vocabulary.surfaceIds.size).toBe(names.length)
    }), { numRuns: 300 })
  })
})
