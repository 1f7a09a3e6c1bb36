import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { forEachRunUnicode, forEachSurface, forEachSurfaceUnicode, forEachTokenAndRun, stemWord } from '../../src/search/text.ts'

const surfacesOf = (text: string, each: (text: string, visit: (surface: string) => void) => void) => {
  const surfaces: string[] = []
  each(text, surface => surfaces.push(surface))
  return surfaces
}

/** What forEachTokenAndRun reports, as the surfaces (stop-words dropped) and the runs, each in order. */
function tokensAndRuns(text: string): { surfaces: string[]; runs: string[] } {
  const surfaces: string[] = []
  const runs: string[] = []
  forEachTokenAndRun(text, {
    word: (run) => {
      runs.push(run)
      surfacesOf(run, forEachSurfaceUnicode).forEach(surface => surfaces.push(surface))
    },
    run: run => runs.push(run),
    surface: surface => surfaces.push(surface),
  })
  return { surfaces, runs }
}

function generalRuns(text: string): string[] {
  const runs: string[] = []
  forEachRunUnicode(text.toLowerCase(), run => runs.push(run))
  return runs
}

// ASCII text built from pieces that exercise the scanner: words in any case, stop-words, clitics,
// apostrophes in odd places, digits glued to letters, punctuation and whitespace.
const PIECES = ['a', 'I', 'the', 'The', 'it', 's', 't', 're', 've', 'll', 'd', 'm', 'x', 'Caroline', 'don', 'LGBTQ', 'go2', '2023', '3', 'rock', 'painting',
  "'", "''", "'s", "'t", "'re", "'ve", "'ll", "'d", "'m", "'x", "'S", "'Ll", ' ', '  ', '\n', '\t', '.', ',', '-', '_', '/', ':', '"', '!', '?', '(', ')', '0', '9', 'Z', 'z', 'E']
const asciiText = fc.oneof(
  fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }).map(parts => parts.join('')),
  fc.string({ unit: fc.integer({ min: 0, max: 0x7f }).map(code => String.fromCharCode(code)), maxLength: 80 }),
  fc.string({ unit: fc.constantFrom('a', 'B', 's', 't', 'l', 'r', 'e', 'v', 'm', 'd', '1', "'", ' ', '.'), maxLength: 60 }),
)

describe('ASCII text scanner', () => {
  it('forEachSurface on ASCII text gives exactly the surfaces of the general (Unicode) path', () => {
    fc.assert(fc.property(asciiText, (text) => {
      expect(surfacesOf(text, forEachSurface)).toEqual(surfacesOf(text, forEachSurfaceUnicode))
    }), { numRuns: 3000 })
  })

  it('forEachTokenAndRun on ASCII text gives the general path surfaces and the runs of the lower-cased text', () => {
    fc.assert(fc.property(asciiText, (text) => {
      const { surfaces, runs } = tokensAndRuns(text)
      expect(surfaces).toEqual(surfacesOf(text, forEachSurfaceUnicode))
      expect(runs).toEqual(generalRuns(text))
    }), { numRuns: 3000 })
  })

  it('forEachTokenAndRun on non-ASCII text gives the general path surfaces and runs', () => {
    const text = "Caroline’s café in 東京都 isn't closed; she's Über-happy"
    const { surfaces, runs } = tokensAndRuns(text)
    expect(surfaces).toEqual(surfacesOf(text, forEachSurfaceUnicode))
    expect(runs).toEqual(generalRuns(text))
  })

  it('a word with an apostrophe keeps its clitic rule and glued digits start a new word', () => {
    expect(surfacesOf("Caroline's o'clock rock'n'roll it's2go", forEachSurface)).toEqual(['caroline', 'oclock', 'rockn', 'roll', '2go'])
    expect(tokensAndRuns("Caroline's it's2go").runs).toEqual(['caroline', 's', 'it', 's2go'])
  })

  it('stemWord stems plain Latin words only', () => {
    expect([stemWord('painting'), stemWord('2023'), stemWord('go2'), stemWord('ab')]).toEqual(['paint', '2023', 'go2', 'ab'])
  })
})
