import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
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
        // Enough scans to pay for trigrams: the index builds them, and keeps them current for new runs.
        for (let scan = 0; scan < 17; scan++) containing(runs, 'abc')
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
})
