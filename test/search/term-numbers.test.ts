import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { beginTermNumbers, termNumber, termNumbers } from '../../src/search/term-numbers.ts'
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
      // Twice: the first scan adds the words to the table, the second finds them there.
      expect(scanned(text, irregular)).toEqual(expected(text, irregular))
      expect(scanned(text, irregular)).toEqual(expected(text, irregular))
    }), { numRuns: 3000 })
  })

  it('keeps "May" with a capital as the month and drops the modal verb', () => {
    beginTermNumbers()
    expect(scanned('May 2023, we may go; MAY mAy', true)).toEqual([termNumber(stemWord('may')), termNumber('2023'), termNumber(stemWord('may'))])
  })

  it('are refused (-1) for a text with a character outside ASCII', () => {
    expect(termNumbers('café au lait', true, { numbers: new Int32Array(4) })).toBe(-1)
    expect(termNumbers('tea — coffee', true, { numbers: new Int32Array(4) })).toBe(-1)
  })
})
