import { parseInstant } from '../instant.ts'
import { PostingClasses } from './posting-classes.ts'
import { RecordTokens } from './record-tokens.ts'
import { RunIndex } from './runs.ts'
import { FIELDS, Slots } from './slots.ts'
import { TermBounds } from './term-bounds.ts'
import type { SearchDocument, SearchText } from './types.ts'
import { TF_BITS, TF_INLINE_MAX, Vocabulary } from './vocabulary.ts'

const SHARED_TOKENS = new RecordTokens()

/** Distinct words a record adds to a small index's vocabulary, about (100 notes of 130 characters: 13). */
const WORDS_PER_RECORD = 16
/** Most words {@link IndexState.reserve} makes room for (a large index's vocabulary grows by doubling). */
const RESERVED_WORDS_MAX = 4096

/**
 * The structures of one index and the two operations that change them: adding a record to a new
 * slot and tombstoning a record's slot. A removal tokenizes the old record again to take back its
 * statistics (no per-record term maps and no lower-case copies of text are kept).
 */
export class IndexState<D extends SearchDocument> {
  slots: Slots<D>
  vocabulary: Vocabulary
  runs: RunIndex
  /** The position the next new record gets. */
  nextPosition = 0
  /** Tokenizer scratch, shared by every index (tokenizing is synchronous and its result is read before the next record is tokenized). */
  readonly tokens = SHARED_TOKENS
  /** Per-term bounds of the points of a posting (for top-k pruning), kept in step with the postings lazily. */
  readonly bounds = new TermBounds()
  /** Per-class bounds of the points of a term's postings (for the match-mask pass), kept in step lazily. */
  readonly classes = new PostingClasses()

  /** An empty state, or one of the structures `parts` gives (a decoded snapshot's). */
  constructor(readonly text: SearchText<D>, readonly irregular = true, parts?: { slots: Slots<D>; vocabulary: Vocabulary; runs: RunIndex }) {
    this.slots = parts?.slots ?? new Slots<D>()
    this.vocabulary = parts?.vocabulary ?? new Vocabulary(irregular)
    this.runs = parts?.runs ?? new RunIndex()
  }

  /** Tokenizes `record` again without runs or new words (the statistics of an indexed record). */
  retokenize(record: D): RecordTokens {
    this.tokens.tokenize(record, this.text, this.vocabulary, this.runs, false, false)
    return this.tokens
  }

  /**
   * Makes room for `records` more records of about {@link WORDS_PER_RECORD} distinct words each
   * (at most {@link RESERVED_WORDS_MAX} words in all): a batch indexed into an empty state grows
   * few arrays.
   */
  reserve(records: number): void {
    const words = Math.min(RESERVED_WORDS_MAX, WORDS_PER_RECORD * records)
    this.vocabulary.reserve(words, 2 * WORDS_PER_RECORD * records)
    this.runs.reserve(words, 2 * WORDS_PER_RECORD * records)
  }

  /** Indexes `record` (active) in a new slot at `position`. */
  add(record: D, position: number): void {
    const { tokens, vocabulary } = this
    tokens.tokenize(record, this.text, vocabulary, this.runs, true, true)
    const slot = this.slots.add(record, record.id, position, parseInstant(record.createdAt) ?? Number.NaN, tokens.lengths)
    for (const term of tokens.termIds) {
      const local = tokens.localOf(term)
      let packed = 0
      for (let field = 0; field < FIELDS; field++) {
        let count = tokens.termCounts[local + field]!
        if (count >= TF_INLINE_MAX) {
          vocabulary.largeCounts.set(slot * FIELDS + field, count)
          count = TF_INLINE_MAX
        }
        packed |= count << (field * TF_BITS)
      }
      vocabulary.termPostings.push(term, slot, packed)
      vocabulary.holdTerm(term)
    }
    for (const run of tokens.runIds) this.runs.postings.push(run, slot, tokens.runCounts[run]!)
    for (const sid of tokens.surfaces) vocabulary.holdSurface(sid)
  }

  /** Tombstones the slot of record `id`; returns its position, or `undefined` when it has none. */
  remove(id: string): number | undefined {
    const slot = this.slots.ids.get(id)
    if (slot === undefined) return undefined
    const tokens = this.retokenize(this.slots.records[slot]!)
    const vocabulary = this.vocabulary
    for (const term of tokens.termIds) vocabulary.releaseTerm(term)
    for (const sid of tokens.surfaces) vocabulary.releaseSurface(sid)
    this.slots.remove(id)
    return this.slots.positions[slot]
  }

  /** Drops tombstones: indexes the live records again, in slot order, keeping their positions. */
  rebuild(): void {
    const { slots } = this
    const kept: Array<[D, number]> = []
    for (let slot = 0; slot < slots.count; slot++) if (slots.alive[slot]) kept.push([slots.records[slot]!, slots.positions[slot]!])
    this.slots = new Slots<D>()
    this.vocabulary = new Vocabulary(this.irregular)
    this.runs = new RunIndex()
    for (const [record, position] of kept) this.add(record, position)
  }
}
