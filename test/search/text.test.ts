import { describe, expect, it } from 'vitest'
import { editDistance, tokenize } from '../../src/search/text.ts'

describe('tokenize', () => {
  it('stems English inflections with the Porter stemmer', () => {
    expect(tokenize('painting paints painted')).toEqual(['paint', 'paint', 'paint'])
  })

  it('folds accents, case and full-width forms', () => {
    expect(tokenize('Café CRÈME ｃａｆｅ')).toEqual(['cafe', 'creme', 'cafe'])
  })

  it('keeps numbers whole and drops possessive clitics', () => {
    expect(tokenize("Caroline's 2023 trip cost 3.50")).toEqual(['carolin', '2023', 'trip', 'cost', '3', '50'])
  })

  it('drops English stop-words, so a question keeps only its content words', () => {
    expect(tokenize('When did Melanie go to the museum?')).toEqual(['melani', 'museum'])
    expect(tokenize('what is the')).toEqual([])
  })

  it('keeps "May" written with a capital (the month) and drops the modal verb "may", in ASCII and in accented text alike', () => {
    expect(tokenize('In May 2023 we may go')).toEqual(['mai', '2023'])
    expect(tokenize("May's garden, MAY")).toEqual(['mai', 'garden', 'mai'])
    expect(tokenize('café in May, it may rain')).toEqual(['cafe', 'mai', 'rain'])
    expect(tokenize('you may')).toEqual([])
  })

  it('splits Chinese and Japanese text into character bigrams, and a lone character into itself', () => {
    expect(tokenize('我喜欢喝咖啡')).toEqual(['我喜', '喜欢', '欢喝', '喝咖', '咖啡'])
    expect(tokenize('東京都')).toEqual(['東京', '京都'])
    expect(tokenize('猫')).toEqual(['猫'])
    expect(tokenize('iPhone用ケース')).toEqual(['iphon', '用ケ', 'ケー', 'ース'])
  })

  it('keeps Japanese voiced kana apart from unvoiced ones', () => {
    expect(tokenize('がか')).toEqual(['がか'])
  })
})

describe('editDistance', () => {
  it('counts insertions, deletions, substitutions and transpositions, stopping above the maximum', () => {
    expect(editDistance('educaton', 'education', 2)).toBe(1)
    expect(editDistance('persue', 'pursue', 2)).toBe(1)
    expect(editDistance('form', 'from', 2)).toBe(1)
    expect(editDistance('kitten', 'sitting', 1)).toBe(2)
  })
})
