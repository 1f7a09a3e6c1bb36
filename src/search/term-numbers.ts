/**
 * The index terms of an ASCII text in token order as process-wide numbers, without making a
 * string per word: what the proximity re-rank reads of each candidate (rerank.ts).
 *
 * A term is a pure function of its folded word (`stemWord`; a stop-word has none), so one table
 * of the process serves every index: a word's characters, hashed as they are scanned, find its
 * term, and the term its number. Only a word not in the table yet is made a string, classified
 * and added (in a full window of slots it replaces a word, so the table is never emptied). Only
 * the terms a caller asks for ({@link termNumber}: the query's) are numbered; every other term
 * reads as {@link UNASKED_TERM}, so words met once (ids, amounts) add no numbers. The scan
 * follows the ASCII scanner of text.ts (`forEachSurface`) token for token; a property test
 * (test/search/term-numbers.test.ts) holds it to it.
 */
import { ENGLISH_STOP_WORDS, MONTH_MAY, stemWord } from './text.ts'

/**
 * Table slots (a power of two), and the slots a word may take from its hash on (a lookup reads
 * at most these; a word met when all of them are taken replaces one, so the table is never
 * emptied as a whole).
 */
const CAPACITY = 1 << 15
const WINDOW = 8
/** Asked terms (numbered by {@link termNumber}) past which a new numbering starts at the next {@link beginTermNumbers}. */
const MOST_ASKED = 1 << 16
/** The number of a stop-word (no term). */
const STOP = -1
/**
 * What {@link termNumbers} gives a token whose term was never asked for: no {@link termNumber}
 * numbered it, so it is none of the terms a caller looks for (they ask for theirs first).
 */
export const UNASKED_TERM = -2

/** One table per `irregular` setting (a word's term depends on it). */
class WordTable {
  readonly hashes = new Int32Array(CAPACITY)
  /** Per slot: the folded word, or `undefined` when free. */
  readonly words: Array<string | undefined> = new Array<string | undefined>(CAPACITY).fill(undefined)
  /** Per slot: the word's term, or `undefined` for a stop-word. */
  readonly terms: Array<string | undefined> = new Array<string | undefined>(CAPACITY).fill(undefined)
  /** Per slot: the term's number, {@link STOP} or {@link UNASKED_TERM}, as of {@link WordTable.resolved}. */
  readonly numbers = new Int32Array(CAPACITY)
  /** Per slot: the {@link asked} count its number was read at (another count: read it again). */
  readonly resolved = new Int32Array(CAPACITY)
  /** Which slot of a full window the next new word takes (turns, so the words replaced vary). */
  turn = 0
  constructor(readonly irregular: boolean) {}
}

const tables = [new WordTable(true), new WordTable(false)] as const
/**
 * Term text -> number, for every term asked for ({@link termNumber}) in this numbering. A table
 * slot keeps its word's term, not its number: after a new numbering, or once more terms are
 * asked, it reads its number here again (one map lookup, no string, no stemming).
 */
let numbers = new Map<string, number>()
/** Terms asked in this numbering, over all numberings (a slot's number holds while this stays its `resolved`). */
let asked = 0

/** Numberings started before this one: numbers given before a change of it are void. */
let generation = 0

/** The current generation of term numbers (a number of {@link termNumber} is valid while this stays the same). */
export function termGeneration(): number {
  return generation
}

/**
 * The process-wide number of index term `term` (0 or more), valid while {@link termGeneration}
 * stays the same; numbering a term not numbered yet makes {@link termNumbers} give it, instead of
 * {@link UNASKED_TERM}, from then on.
 */
export function termNumber(term: string): number {
  let number = numbers.get(term)
  if (number === undefined) {
    number = numbers.size
    numbers.set(term, number)
    asked = (asked + 1) | 0
  }
  return number
}

/**
 * Starts a use of term numbers (a search): starts a new numbering (a new {@link termGeneration})
 * once {@link MOST_ASKED} terms were asked for in this one; numbers are never voided otherwise.
 * The words' tables are kept either way.
 */
export function beginTermNumbers(): void {
  if (numbers.size < MOST_ASKED) return
  numbers = new Map()
  asked = (asked + 1) | 0
  generation++
}

/** A growable buffer of term numbers. */
export interface TermBuffer {
  numbers: Int32Array
}

/**
 * Writes into `out` the term number of every token of `text` (the tokens `forEachSurface` gives,
 * in order; a token's term is `stemWord(surface, irregular)`; {@link UNASKED_TERM} for a term no
 * {@link termNumber} numbered in this generation) and returns how many, or -1 when `text` is not
 * ASCII (the caller takes the general path).
 */
export function termNumbers(text: string, irregular: boolean, out: TermBuffer): number {
  const table = tables[irregular ? 0 : 1]
  const length = text.length
  let count = 0
  // Where the next word may start: a word ending in "'letters" takes part of the next run.
  let wordFrom = 0
  let at = 0
  while (at < length) {
    let code = text.charCodeAt(at)
    if (!isAlphanumeric(code)) {
      if (code > 0x7f) return -1
      at++
      continue
    }
    const start = at
    let upper = false
    let digits = true
    let hash = 0x811c9dc5 | 0
    do {
      if (code > 57) {
        digits = false
        if (code <= 90) upper = true
      }
      // Letters and digits of ASCII: `| 0x20` lower-cases a letter and keeps a digit.
      hash = Math.imul(hash ^ (code | 0x20), 0x01000193)
      code = ++at < length ? text.charCodeAt(at) : 0
    } while (isAlphanumeric(code))
    const wordStart = wordFrom > start ? wordFrom : start
    // The whole run was the letters after an apostrophe of the word before.
    if (wordStart >= at) continue
    const apostrophe = code === 39 && at + 1 < length && isLetter(text.charCodeAt(at + 1))
    let number: number
    if (!apostrophe && wordStart === start) {
      wordFrom = at
      // "May" with a capital is the month, a word; any other "may" is the stop-word.
      if (upper && at - start === 3 && isCapital(text.charCodeAt(start)) && (text.charCodeAt(start + 1) | 0x20) === 97 && (text.charCodeAt(start + 2) | 0x20) === 121 && (text.charCodeAt(start) | 0x20) === 109) number = classify(table, MONTH_MAY, true)
      else number = runNumber(table, text, start, at, upper, digits, hash)
    }
    else {
      // A word glued to an apostrophe suffix: as text.ts's scanner spells it.
      let word = text.slice(wordStart, at).toLowerCase()
      wordFrom = at
      if (apostrophe) {
        let end = at + 1
        while (end < length && isLetter(text.charCodeAt(end))) end++
        const tail = text.slice(at + 1, end).toLowerCase()
        if (!CLITICS.has(tail)) word += tail
        wordFrom = end
      }
      number = classify(table, word, word === MONTH_MAY && isCapital(text.charCodeAt(wordStart)))
    }
    if (number === STOP) continue
    if (count >= out.numbers.length) {
      const next = new Int32Array(out.numbers.length * 2)
      next.set(out.numbers)
      out.numbers = next
    }
    out.numbers[count++] = number
  }
  return count
}

/**
 * The number of the run `text[start, end)` (`hash`: its folded characters' hash; `digits`: it is
 * digits only), found in `table` or added to it.
 */
function runNumber(table: WordTable, text: string, start: number, end: number, upper: boolean, digits: boolean, hash: number): number {
  const { hashes, words } = table
  const size = end - start
  let slot = hash & (CAPACITY - 1)
  let free = -1
  for (let probe = 0; probe < WINDOW; probe++, slot = (slot + 1) & (CAPACITY - 1)) {
    const word = words[slot]
    if (word === undefined) {
      free = slot
      break
    }
    if (hashes[slot] === hash && word.length === size && sameFolded(word, text, start)) return slotNumber(table, slot)
  }
  const slice = text.slice(start, end)
  const word = upper ? slice.toLowerCase() : slice
  // A number is its own term and never a stop-word: no stemming and no lookups for it (numbers
  // are the words most often met once: ids, amounts, dates).
  const term = digits ? word : termOf(table, word, false)
  // A full window: the new word takes one of its slots (the table is never emptied).
  if (free === -1) free = (hash + (table.turn = (table.turn + 1) & (WINDOW - 1))) & (CAPACITY - 1)
  hashes[free] = hash
  words[free] = word
  table.terms[free] = term
  table.resolved[free] = asked - 1
  return slotNumber(table, free)
}

/** The number of the term of table slot `slot` (read again when terms were asked since it was last read). */
function slotNumber(table: WordTable, slot: number): number {
  if (table.resolved[slot] === asked) return table.numbers[slot]!
  const term = table.terms[slot]
  const number = term === undefined ? STOP : (numbers.get(term) ?? UNASKED_TERM)
  table.numbers[slot] = number
  table.resolved[slot] = asked
  return number
}

/** The number of a folded `word`, {@link STOP} or {@link UNASKED_TERM} (`month`: a "May" that is the month, never the stop-word). */
function classify(table: WordTable, word: string, month: boolean): number {
  const term = termOf(table, word, month)
  return term === undefined ? STOP : (numbers.get(term) ?? UNASKED_TERM)
}

/** The term of a folded `word`, or `undefined` for a stop-word (`month`: a "May" that is the month). */
function termOf(table: WordTable, word: string, month: boolean): string | undefined {
  return !month && ENGLISH_STOP_WORDS.has(word) ? undefined : stemWord(word, table.irregular)
}

/** Whether `text` from `start` folds to `word` (ASCII letters and digits, `word.length` of them). */
function sameFolded(word: string, text: string, start: number): boolean {
  for (let at = 0; at < word.length; at++) if ((text.charCodeAt(start + at) | 0x20) !== word.charCodeAt(at)) return false
  return true
}

const isLetter = (code: number) => (code >= 97 && code <= 122) || (code >= 65 && code <= 90)
const isAlphanumeric = (code: number) => (code >= 48 && code <= 57) || isLetter(code)
const isCapital = (code: number) => code >= 65 && code <= 90
// The clitics text.ts drops (with their apostrophe).
const CLITICS: ReadonlySet<string> = new Set(['s', 't', 're', 've', 'll', 'd', 'm'])
