import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { beginTermNumbers, termGeneration, termNumber, termNumbers, UNASKED_TERM } from '../../src/search/term-numbers.ts'
import { forEachSurface, stemWord } from '../../src/search/text.ts'

// ASCII text that exercises the scanner: words in any case, stop-words, "May" and "may", clitics,
// apostrophes in odd places, digits glued to letters, punctuation and whitespace.
const PIECES = ['a', 'I', 'the', 'The', 'it', 's', 't', 're', 've', 'll', 'd', 'm', 'x', 'May', 'may', 'MAY', 'mAy', 'Caroline', 'don', 'went', 'children', 'LGBTQ', 'go2', '2023', '3', 'rock', 'painting',
  "'", "''", "'s", "'t", "'re", "'ve", "'ll", "'d", "'m", "'x", "'S", "'Ll", "'May", ' ', '  ', '\n', '\t', '.', ',', '-', '_', '/', ':', '"', '!', '?', '(', ')', '0', '9', 'Z', 'z', 'E']
const asciiText = fc.oneof(
  fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }).map(parts => parts.join('')),
  fc.string({ unit: fc.integer({ min: 0, max: 0x7f }).map(code => String.fromCharCode(code)), maxLength: 80 }),
  fc.string({ unit: fc.constantFrom('a', 'B', 'M', 'y', 's', 't', 'l', 'r', 'e', 'v', 'm', 'd', '1', "'", ' ', '.'), maxLength: 60 }),
)

function expected(text: string, irregular: boolean): number[] {
  const out: number[] = []
  forEachSurface(text, surface => out.push(termNumber(stemWord(surface, irregular))))
  return out
}

function scanned(text: string, irregular: boolean): number[] | undefined {
  const buffer = { numbers: new Int32Array(2) }
  const count = termNumbers(text, irregular, buffer)
  return count < 0 ? undefined : Array.from(buffer.numbers.subarray(0, count))
}

describe('term numbers of an ASCII text', () => {
  it('are the terms of the tokens forEachSurface gives, in order, with and without irregular forms', () => {
    fc.assert(fc.property(asciiText, fc.boolean(), (text, irregular) => {
      beginTermNumbers()
      // The terms asked for first (a scan gives UNASKED_TERM for the others), then scanned twice:
      // the first scan adds the words to the table, the second finds them there.
      const terms = expected(text, irregular)
      expect(scanned(text, irregular)).toEqual(terms)
      expect(scanned(text, irregular)).toEqual(terms)
    }), { numRuns: 3000 })
  })

  it('keeps "May" with a capital as the month and drops the modal verb', () => {
    beginTermNumbers()
    expect(scanned('May 2023, we may go; MAY mAy', true)).toEqual([termNumber(stemWord('may')), termNumber('2023'), termNumber(stemWord('may'))])
  })

  it('give UNASKED_TERM for a term never asked for, and its number once it is asked, for the word already in the table', () => {
    beginTermNumbers()
    expect(scanned('quarkelstone 9080706', true)).toEqual([UNASKED_TERM, UNASKED_TERM])
    const number = termNumber(stemWord('quarkelstone'))
    expect(scanned('quarkelstone 9080706 Quarkelstone', true)).toEqual([number, UNASKED_TERM, number])
    expect(scanned('9080706', true)).toEqual([UNASKED_TERM])
    const digits = termNumber('9080706')
    expect(scanned('9080706 quarkelstone', true)).toEqual([digits, number])
  })

  it('keep their numbers (no new generation) over more distinct words than the table holds, and read every word right after others took its slots', () => {
    beginTermNumbers()
    const generation = termGeneration()
    const known = 'coffee garden sister beach train dinner'
    const numbers = known.split(' ').map(word => termNumber(stemWord(word)))
    expect(scanned(known, true)).toEqual(numbers)
    // 40,000 numbers and 40,000 made-up words: more than the table's 32,768 slots, so windows
    // fill and new words replace old ones (the old table was emptied at 16,384 words). The words
    // are long enough that no random text of the tests before asked for one.
    for (let chunk = 0; chunk < 80; chunk++) {
      beginTermNumbers()
      const words: string[] = []
      for (let at = 0; at < 1000; at++) {
        const n = chunk * 1000 + at
        words.push(String(1_000_000 + n), `madeupw${n.toString(36)}q`)
      }
      expect(scanned(words.join(' '), true)).toEqual(words.map(() => UNASKED_TERM))
      expect(scanned(known, true)).toEqual(numbers)
    }
    expect(termGeneration()).toBe(generation)
    expect(scanned(`${known} madeupw1q 1000001`, true)).toEqual([...numbers, UNASKED_TERM, UNASKED_TERM])
    expect(scanned('madeupw1q', true)).toEqual([UNASKED_TERM])
    const asked = [termNumber(stemWord('madeupw1q')), termNumber('1000001')]
    expect(scanned('madeupw1q 1000001', true)).toEqual(asked)
  })

  it('are refused (-1) for a text with a character outside ASCII', () => {
    expect(termNumbers('café au lait', true, { numbers: new Int32Array(4) })).toBe(-1)
    expect(termNumbers('tea — coffee', true, { numbers: new Int32Array(4) })).toBe(-1)
  })
})
