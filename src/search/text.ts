/**
 * Tokenization for ranked memory search: English inflections (stemming), accents, numbers,
 * languages written without spaces, and stop-words.
 *
 * One function turns any text (a record field or a query) into index terms:
 * 1. Unicode NFKC, then lower case; accents are removed (NFD, combining marks dropped), so
 *    "Café" and "cafe" are one term. Full-width forms become ASCII through NFKC.
 * 2. Words are runs of letters, digits and marks (`\p{L}\p{N}\p{M}`); an apostrophe inside a word
 *    is dropped with what follows it when that is `s`, `t`, `re`, `ve`, `ll`, `d` or `m`
 *    ("Caroline's" -> "caroline"). Numbers stay whole ("2023", "3.5" -> "3", "5").
 * 3. Han, Hiragana, Katakana and Hangul runs (written without spaces) become overlapping
 *    character bigrams, plus the single character when the run is one character long
 *    ("東京都" -> "東京", "京都"), so a query of two or more characters finds the text it occurs in.
 * 4. English stop-words ({@link ENGLISH_STOP_WORDS}) are dropped, except "May" written with a
 *    capital (the month: "in May", "8 May 2023"; the modal verb is rarely capitalised in notes
 *    and questions); the rest are stemmed with the
 *    Porter stemmer of the `stemmer` package ("painting", "paints" -> "paint"), irregular verb and
 *    noun forms first replaced by their base ("went" -> "go", "children" -> "child"). Words with
 *    digits and non-Latin words are not stemmed.
 */
import { stemmer } from 'stemmer'
import { IRREGULAR_FORMS } from './irregular.ts'

/**
 * English stop-words left out of the index and of queries: articles, pronouns, auxiliaries,
 * prepositions, conjunctions and question words. A query made only of stop-words finds nothing by
 * rank (the substring rule still applies, see `createSearchIndex`). "may" is one of them only in
 * lower case ({@link MONTH_MAY}).
 */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(`
a about above after again against all am an and any are aren as at be because been before being below
between both but by can cannot could couldn did didn do does doesn doing don down during each few for from
further had hadn has hasn have haven having he her here hers herself him himself his how i if in into is isn
it its itself just let me more most mustn my myself no nor not now of off on once only or other ought our
ours ourselves out over own same shan she should shouldn so some such than that the their theirs them
themselves then there these they this those through to too under until up very was wasn we were weren
what when where which while who whom whose why will with won would wouldn you your yours yourself
yourselves also yet ever may might must shall s t d ll m re ve
get gets getting got gotten go goes going gone went like likely many much say says said
kind kinds type types sort thing things way ways one ones something anything
`.trim().split(/\s+/))

/** The one stop-word kept when written with a capital: the month, not the modal verb. */
export const MONTH_MAY = 'may'

const WORD = /[\p{L}\p{N}\p{M}]+(?:['’][\p{L}]+)?/gu
const CLITIC = /['’](?:s|t|re|ve|ll|d|m)$/u
const SPACELESS = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u
const SPACELESS_RUNS = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}ー]+/gu
const LATIN_WORD = /^[a-z]+$/

/** Lower case, compatibility-normalized, without accents (the form every term and snippet search uses). */
export function foldText(text: string): string {
  // ASCII has no compatibility forms and no accents: folding is lower-casing.
  if (ASCII.test(text)) return text.toLowerCase()
  return text.normalize('NFKC').toLowerCase().normalize('NFD').replace(/\p{M}+/gu, (marks, at: number, whole: string) =>
    // Keep marks that are part of a spaceless script's syllables (Japanese dakuten), drop accents elsewhere.
    at > 0 && SPACELESS.test(whole[at - 1]!) ? marks : '',
  ).normalize('NFC')
}

/**
 * The stem of one folded word: Porter for plain Latin words of 3+ letters, the word itself
 * otherwise. An irregular verb or noun form ({@link IRREGULAR_FORMS}: "went", "children") is
 * stemmed as its base word unless `irregular` is false.
 */
export function stemWord(word: string, irregular = true): string {
  // Only plain Latin words are stemmed (and cached: numbers would crowd real words out of the cache).
  const cache = irregular ? stems : regularStems
  let stem = cache.get(word)
  if (stem !== undefined) return stem
  if (word.length <= 2 || !LATIN_WORD.test(word)) return word
  stem = stemmer(irregular ? IRREGULAR_FORMS.get(word) ?? word : word)
  // A bounded cache: vocabularies repeat, so most words are stemmed once per process.
  if (cache.size >= STEM_CACHE_MAX) cache.clear()
  cache.set(word, stem)
  return stem
}

/**
 * The cached stem of `word` (as {@link stemWord} gives it), or `undefined` when it is not cached.
 * Only plain Latin words of 3+ letters are cached, so a cached word is a plain Latin word: a
 * vocabulary learns both from one lookup.
 */
export function cachedStem(word: string, irregular = true): string | undefined {
  return (irregular ? stems : regularStems).get(word)
}

const ASCII = /^[\x00-\x7f]*$/
const STEM_CACHE_MAX = 50_000
const stems = new Map<string, string>()
const regularStems = new Map<string, string>()

/** One token of a text: the folded word as written (`surface`) and its index term. */
export interface TextToken {
  surface: string
  term: string
}

/**
 * The index terms of `text`, in order (repeats kept: term frequency counts them). Stop-words are
 * dropped. Never throws; `''` gives `[]`.
 */
export function tokenize(text: string): string[] {
  return tokenizeWords(text).map(token => token.term)
}

/** Like {@link tokenize}, with each term's folded surface word (used to correct misspelt query words). */
export function tokenizeWords(text: string): TextToken[] {
  const tokens: TextToken[] = []
  forEachSurface(text, surface => tokens.push({ surface, term: stemWord(surface) }))
  return tokens
}

/**
 * Calls `visit` with the folded surface word of every token of `text`, in order (the `surface`
 * of {@link tokenizeWords}; its term is always `stemWord(surface)`). No objects are made per
 * token: the search index caches a term per surface word with this.
 */
export function forEachSurface(text: string, visit: (surface: string) => void): void {
  if (ASCII.test(text)) {
    // One visitor for every call (no closures made per text); the previous visit is restored for a
    // visit that scans another text.
    const previous = surfaceVisit
    surfaceVisit = visit
    try {
      scanAscii(text, SURFACE_VISITOR)
    }
    finally {
      surfaceVisit = previous
    }
    return
  }
  forEachSurfaceUnicode(text, visit)
}

let surfaceVisit: (surface: string) => void = () => {}
const SURFACE_VISITOR: TokenAndRunVisitor = {
  word: (run) => {
    if (!ENGLISH_STOP_WORDS.has(run)) surfaceVisit(run)
  },
  run: () => {},
  surface: surface => surfaceVisit(surface),
}

/**
 * The general path of {@link forEachSurface}, for any text; {@link forEachSurface} gives the same
 * for ASCII text with a character scanner (exported so tests can compare the two).
 */
export function forEachSurfaceUnicode(text: string, visit: (surface: string) => void): void {
  const capitals = MAY_ANY_CASE.test(text) ? capitalMays(text) : undefined
  let mays = 0
  for (const match of foldText(text).matchAll(WORD)) {
    const word = match[0].replace(CLITIC, '').replace(/['’]/gu, '')
    if (SPACELESS.test(word)) {
      spacelessTerms(word, visit)
      continue
    }
    if (word === MONTH_MAY && capitals?.[mays++] === true) {
      visit(word)
      continue
    }
    if (ENGLISH_STOP_WORDS.has(word)) continue
    visit(word)
  }
}

const MAY_ANY_CASE = /m\p{M}*a\p{M}*y/iu

/** Per word of `text` that folds to "may", in order: whether it starts with a capital. */
function capitalMays(text: string): boolean[] {
  const capitals: boolean[] = []
  for (const match of text.normalize('NFKC').matchAll(WORD)) {
    const word = match[0]
    if (foldText(word).replace(CLITIC, '').replace(/['’]/gu, '') === MONTH_MAY) capitals.push(word[0] !== word[0]!.toLowerCase())
  }
  return capitals
}

/**
 * What {@link forEachTokenAndRun} reports. A "run" is a maximal sequence of letters, digits and
 * marks of the lower-cased text (what the search index's substring rule is answered from).
 */
export interface TokenAndRunVisitor {
  /** A run that is also, as is, the surface word of a token (stop-words included: the caller checks them). */
  word(run: string): void
  /** Any other run. */
  run(run: string): void
  /** Any other token's surface word, as {@link forEachSurface} gives it (stop-words dropped). */
  surface(surface: string): void
}

/**
 * One pass over `text` giving both its token surfaces (those of {@link forEachSurface}, in order)
 * and its runs (those of {@link forEachRunUnicode}, in order). ASCII text is scanned by character
 * code without a lower-cased copy; as most ASCII words are a whole run, they come once through
 * `word`, so the caller can look one string up for both.
 */
export function forEachTokenAndRun(text: string, visitor: TokenAndRunVisitor): void {
  if (ASCII.test(text)) {
    scanAscii(text, visitor)
    return
  }
  forEachSurfaceUnicode(text, surface => visitor.surface(surface))
  forEachRunUnicode(text.toLowerCase(), run => visitor.run(run))
}

/** Calls `visit` with every run of `lower` (already lower case), by regular expression: the general path. */
export function forEachRunUnicode(lower: string, visit: (run: string) => void): void {
  for (const match of lower.matchAll(RUN)) visit(match[0])
}

// Letters, digits and marks (the same class as the search index's RUN).
const RUN = /[\p{L}\p{N}\p{M}]+/gu

const isAsciiLetter = (code: number) => (code >= 97 && code <= 122) || (code >= 65 && code <= 90)
const isAsciiAlphanumeric = (code: number) => (code >= 48 && code <= 57) || isAsciiLetter(code)

/**
 * The ASCII scanner behind {@link forEachSurface} and {@link forEachTokenAndRun}: exactly the
 * matches of `/[a-z0-9]+(?:'[a-z]+)?/g` over the lower-cased text, clitics dropped as the general path does, and
 * the runs of `[a-z0-9]`.
 */
function scanAscii(text: string, visitor: TokenAndRunVisitor): void {
  const length = text.length
  // Where the next word may start: a word ending in "'letters" takes part of the next run.
  let wordFrom = 0
  let at = 0
  while (at < length) {
    let code = text.charCodeAt(at)
    if (!isAsciiAlphanumeric(code)) {
      at++
      continue
    }
    const start = at
    let upper = false
    do {
      if (code <= 90 && code >= 65) upper = true
      code = ++at < length ? text.charCodeAt(at) : 0
    } while (isAsciiAlphanumeric(code))
    const wordStart = wordFrom > start ? wordFrom : start
    if (wordStart >= at) {
      // The whole run was the letters after an apostrophe of the word before.
      visitor.run(lower(text, start, at, upper))
      continue
    }
    const apostrophe = code === 39 && at + 1 < length && isAsciiLetter(text.charCodeAt(at + 1))
    if (!apostrophe && wordStart === start) {
      const run = lower(text, start, at, upper)
      // "May" with a capital is the month: a word, not the stop-word a whole run is checked against.
      if (upper && run === MONTH_MAY && isCapital(text.charCodeAt(start))) {
        visitor.run(run)
        visitor.surface(run)
      }
      else visitor.word(run)
      wordFrom = at
      continue
    }
    const run = lower(text, start, at, upper)
    visitor.run(run)
    let word = wordStart === start ? run : text.slice(wordStart, at).toLowerCase()
    wordFrom = at
    if (apostrophe) {
      let end = at + 1
      while (end < length && isAsciiLetter(text.charCodeAt(end))) end++
      const tail = text.slice(at + 1, end).toLowerCase()
      if (!ASCII_CLITICS.has(tail)) word += tail
      wordFrom = end
    }
    if (!ENGLISH_STOP_WORDS.has(word) || (word === MONTH_MAY && isCapital(text.charCodeAt(wordStart)))) visitor.surface(word)
  }
}

const isCapital = (code: number) => code >= 65 && code <= 90

// The clitics CLITIC drops (with their apostrophe); after another apostrophe suffix only the apostrophe goes.
const ASCII_CLITICS: ReadonlySet<string> = new Set(['s', 't', 're', 've', 'll', 'd', 'm'])

function lower(text: string, start: number, end: number, upper: boolean): string {
  const slice = text.slice(start, end)
  return upper ? slice.toLowerCase() : slice
}

// A word may mix scripts ("iphone用"): Latin parts are words, spaceless runs become bigrams.
function spacelessTerms(word: string, visit: (surface: string) => void): void {
  let last = 0
  for (const run of word.matchAll(SPACELESS_RUNS)) {
    const before = word.slice(last, run.index)
    if (before !== '' && !ENGLISH_STOP_WORDS.has(before)) visit(before)
    const chars = Array.from(run[0])
    if (chars.length === 1) visit(chars[0]!)
    for (let i = 0; i + 1 < chars.length; i++) visit(chars[i]! + chars[i + 1]!)
    last = run.index + run[0].length
  }
  const after = word.slice(last)
  if (after !== '' && !ENGLISH_STOP_WORDS.has(after)) visit(after)
}

/**
 * Damerau-Levenshtein distance (optimal string alignment) of `a` and `b`, or `max + 1` as soon as
 * it exceeds `max`. Used to match a misspelt query word to an indexed word ("educaton" -> "education").
 */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1
  let previousRow: number[] = []
  let row = Array.from({ length: b.length + 1 }, (_, i) => i)
  let beforePrevious: number[] = []
  for (let i = 1; i <= a.length; i++) {
    beforePrevious = previousRow
    previousRow = row
    row = [i]
    let least = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let value = Math.min(previousRow[j]! + 1, row[j - 1]! + 1, previousRow[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, beforePrevious[j - 2]! + 1)
      row[j] = value
      if (value < least) least = value
    }
    if (least > max) return max + 1
  }
  return row[b.length]!
}
