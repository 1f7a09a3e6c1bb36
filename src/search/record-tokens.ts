import { grow } from './arrays.ts'
import type { RunIndex } from './runs.ts'
import { DATES_FIELD } from './slots.ts'
import { ENGLISH_STOP_WORDS, forEachTokenAndRun } from './text.ts'
import type { TokenAndRunVisitor } from './text.ts'
import type { SearchDocument, SearchText } from './types.ts'
import { DATE_TEXTS_MAX, type Vocabulary } from './vocabulary.ts'

/**
 * The tokens of one record, tokenized into reusable scratch (no map per record): its distinct
 * term ids in first-use order with their 4 field counts (title, content, tags, dates), its distinct run ids in first-use order
 * with their occurrences, its distinct plain Latin surfaces, and its field lengths. Entries are
 * marked with a per-record mark, never reset (marks of older records stay below it).
 */
export class RecordTokens {
  /** Distinct term ids of the record, in first-use order. */
  readonly termIds: number[] = []
  /** {@link FIELDS} field counts per distinct term, at {@link termLocal}. */
  readonly termCounts: number[] = []
  /** Distinct run ids of the record, in first-use order (when tokenized with runs; never of the dates field). */
  readonly runIds: number[] = []
  /** Occurrences per run id (valid for {@link runIds}). */
  runCounts = new Int32Array(16)
  /** Distinct plain Latin surface ids of the record. */
  readonly surfaces: number[] = []
  /** Tokens per field. */
  readonly lengths: [number, number, number, number] = [0, 0, 0, 0]

  private termMarks = new Int32Array(16)
  private termLocals = new Int32Array(16)
  private runMarks = new Int32Array(16)
  private mark = 0
  private field = 0
  private create = true
  // While a dates text is tokenized: its surface ids, and whether a word had none (not noted then).
  private dateSids: number[] | undefined
  private missed = false
  // Runs of the current field are counted: the substring rule reads title, content and tags only.
  private fieldRuns = true
  private vocabulary!: Vocabulary
  private runs!: RunIndex
  private readonly visitor: TokenAndRunVisitor

  constructor() {
    // One visitor for every record and field (no closure per record or field).
    this.visitor = {
      word: run => this.word(run),
      run: run => {
        if (this.fieldRuns) this.countRun(this.runs.id(run))
      },
      surface: surface => this.visitSurface(surface),
    }
  }

  /**
   * Tokenizes `record` (its fields as `text` gives them; the dates field only when `text` has
   * `dates`) against `vocabulary` and `runs`. Runs are counted only when `withRuns`, and never in
   * the dates field; new terms, surfaces and runs are made only when `create` (a record already
   * indexed knows every word).
   */
  tokenize<D extends SearchDocument>(record: D, text: SearchText<D>, vocabulary: Vocabulary, runs: RunIndex, withRuns: boolean, create: boolean): void {
    this.termIds.length = 0
    this.termCounts.length = 0
    this.runIds.length = 0
    this.surfaces.length = 0
    vocabulary.nextSurfaceMark()
    if (++this.mark >= 0x7fffffff) {
      this.termMarks.fill(0)
      this.runMarks.fill(0)
      this.mark = 1
    }
    this.vocabulary = vocabulary
    this.runs = runs
    this.lengths[0] = this.lengths[1] = this.lengths[2] = this.lengths[3] = 0
    this.create = create
    this.fieldRuns = withRuns
    const tags = text.tags(record)
    for (let field = 0; field < 3; field++) {
      const value = field === 0 ? text.title(record) : field === 1 ? text.content(record) : tags.length === 0 ? '' : tags.join(' \n ')
      if (value === '') continue
      this.field = field
      forEachTokenAndRun(value, this.visitor)
    }
    const dates = text.dates?.(record) ?? ''
    if (dates !== '') this.tokenizeDates(dates)
  }

  /** The dates field: its surfaces as last found for the same text, else tokenized (no runs) and noted when every word was known. */
  private tokenizeDates(dates: string): void {
    this.field = DATES_FIELD
    const vocabulary = this.vocabulary
    const known = vocabulary.dateSurfaces.get(dates)
    if (known !== undefined) {
      for (const sid of known) this.countSurface(sid)
      return
    }
    this.fieldRuns = false
    this.dateSids = []
    this.missed = false
    forEachTokenAndRun(dates, this.visitor)
    if (!this.missed) {
      if (vocabulary.dateSurfaces.size >= DATE_TEXTS_MAX) vocabulary.dateSurfaces.clear()
      vocabulary.dateSurfaces.set(dates, this.dateSids)
    }
    this.dateSids = undefined
  }

  /** The offset of term `id` in {@link termCounts} for the record last tokenized, else `undefined`. */
  termLocal(id: number): number | undefined {
    return this.termMarks[id] === this.mark ? this.termLocals[id] : undefined
  }

  /** The offset of a term of {@link termIds} in {@link termCounts}. */
  localOf(id: number): number {
    return this.termLocals[id]!
  }

  /** A whole run that is a token: one lookup of the run gives both (most words of ASCII text). */
  private word(run: string): void {
    const runs = this.runs
    const id = this.fieldRuns ? runs.id(run) : runs.known(run)
    if (id === undefined) {
      if (!ENGLISH_STOP_WORDS.has(run)) this.visitSurface(run)
      return
    }
    if (this.fieldRuns) this.countRun(id)
    if (id >= runs.surfaces.length) runs.surfaces = grow(runs.surfaces, id + 1)
    let known = runs.surfaces[id]!
    if (known === 0) {
      if (ENGLISH_STOP_WORDS.has(run)) known = 1
      else {
        const sid = this.vocabulary.surfaceId(run, this.create, true)
        if (sid === -1) {
          this.missed = true
          return
        }
        known = sid + 2
      }
      runs.surfaces[id] = known
    }
    if (known !== 1) this.countSurface(known - 2)
  }

  /** A surface word that is not a whole run (or any word without runs): looked up by itself. */
  private visitSurface(surface: string): void {
    // A surface made as a whole run's is noted at that run (the vocabulary keeps no text map of those).
    const runs = this.runs
    const run = runs.known(surface)
    const noted = run === undefined || run >= runs.surfaces.length ? 0 : runs.surfaces[run]!
    const sid = noted >= 2 ? noted - 2 : this.vocabulary.surfaceId(surface, this.create, false)
    if (sid !== -1) this.countSurface(sid)
    else this.missed = true
  }

  /** Counts one token of surface `sid` in the current field. */
  private countSurface(sid: number): void {
    this.dateSids?.push(sid)
    const vocabulary = this.vocabulary
    const id = vocabulary.surfaceTerms[sid]!
    if (id >= this.termMarks.length) {
      this.termMarks = grow(this.termMarks, id + 1)
      this.termLocals = grow(this.termLocals, id + 1)
    }
    let local: number
    if (this.termMarks[id] !== this.mark) {
      this.termMarks[id] = this.mark
      this.termLocals[id] = local = this.termCounts.length
      this.termIds.push(id)
      this.termCounts.push(0, 0, 0, 0)
    }
    else local = this.termLocals[id]!
    this.termCounts[local + this.field]!++
    this.lengths[this.field]!++
    if (vocabulary.surfaceLatin[sid] === 1 && vocabulary.surfaceMarks[sid] !== vocabulary.surfaceMark) {
      vocabulary.surfaceMarks[sid] = vocabulary.surfaceMark
      this.surfaces.push(sid)
    }
  }

  /** Counts one occurrence of run `id`. */
  private countRun(id: number): void {
    if (id >= this.runMarks.length) {
      this.runMarks = grow(this.runMarks, id + 1)
      this.runCounts = grow(this.runCounts, id + 1)
    }
    if (this.runMarks[id] !== this.mark) {
      this.runMarks[id] = this.mark
      this.runCounts[id] = 1
      this.runIds.push(id)
    }
    else this.runCounts[id]!++
  }
}
