import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CharacterPairs } from '../../src/search/pairs.ts'
import { RunIndex } from '../../src/search/runs.ts'

const containing = (runs: RunIndex, piece: string) => {
  const found: Array<[string, number]> = []
  runs.forEachContaining(piece, (run, occurrences) => found.push([runs.texts[run]!, occurrences]))
  return found.sort()
}

describe('run index', () => {
  it('finds the runs containing a piece, with their occurrences, the same before and after it builds its trigram index', () => {
    fc.assert(fc.property(
      fc.uniqueArray(fc.stringMatching(/^[abc]{1,9}$/), { minLength: 1, maxLength: 40 }),
      fc.stringMatching(/^[abc]{1,4}$/),
      fc.uniqueArray(fc.stringMatching(/^[abc]{1,9}$/), { maxLength: 10 }),
      (words, piece, later) => {
        const runs = new RunIndex()
        for (const word of words) runs.id(word)
        const expected = (all: string[]) => all.map(word => [word, word.split(piece).length - 1] as [string, number]).filter(([, count]) => count > 0).sort()
        expect(containing(runs, piece)).toEqual(expected(words))
        // Enough scans to pay for trigrams (of a piece some run holds: a piece no run can hold is not
        // scanned): the next piece of 3+ characters builds them, and they are kept current for new runs.
        for (let scan = 0; scan < 17; scan++) containing(runs, words[0]!)
        containing(runs, 'abc')
        expect(runs.hasTrigrams).toBe(true)
        for (const word of later) runs.id(word)
        expect(containing(runs, piece)).toEqual(expected([...new Set([...words, ...later])]))
      },
    ), { numRuns: 200 })
  })

  it('builds no trigram index for an index searched a few times', () => {
    const runs = new RunIndex()
    for (const word of ['coffee', 'coffeehouse', 'tea']) runs.id(word)
    for (let scan = 0; scan < 5; scan++) expect(containing(runs, 'offe')).toEqual([['coffee', 1], ['coffeehouse', 1]])
    expect(runs.hasTrigrams).toBe(false)
  })

  it('the character pair filter never rules out a piece that a text contains, as texts are added', () => {
    fc.assert(fc.property(
      fc.array(fc.array(fc.string({ unit: 'binary', maxLength: 8 }), { maxLength: 12 }), { minLength: 1, maxLength: 4 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }),
      (batches, piece) => {
        const pairs = new CharacterPairs()
        const texts: string[] = []
        for (const batch of batches) {
          texts.push(...batch)
          if (texts.some(text => text.includes(piece))) expect(pairs.mayHold(texts, piece)).toBe(true)
          for (const text of texts) for (let at = 0; at + 2 <= text.length; at++) expect(pairs.mayHold(texts, text.slice(at, at + 2))).toBe(true)
        }
      },
    ), { numRuns: 300 })
  })

  it('the character pair filter rules out a word of none of the texts', () => {
    const pairs = new CharacterPairs()
    expect(pairs.mayHold(['coffee', 'weekend', 'tea'], 'zebra')).toBe(false)
    expect(pairs.mayHold(['coffee', 'weekend', 'tea'], 'fee')).toBe(true)
  })
})
