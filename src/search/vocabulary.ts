import { grow, idsByText, popcount, withRoom } from './arrays.ts'
import { PairLists } from './postings.ts'
import { FIELDS } from './slots.ts'
import { cachedStem, stemWord } from './text.ts'

/** Bits of a posting's packed value per field count (4 fields in 28 bits). */
export const TF_BITS = 7

/** Highest term frequency a posting stores inline ({@link TF_BITS} bits per field); larger counts live in {@link Vocabulary.largeCounts}. */
export const TF_INLINE_MAX = (1 << TF_BITS) - 1

/** Most dates texts {@link Vocabulary.dateSurfaces} keeps. */
export const DATE_TEXTS_MAX = 4096

/** A plain Latin word: the words fuzzy matching and compound splitting consider. */
export const LATIN_SURFACE = /^[a-z]+$/

/**
 * The words of one index.
 *
 * Terms (stems): id by text, names by id, live document frequency, and postings of (slot, packed
 * field counts: {@link TF_BITS} bits per field, title lowest, {@link TF_INLINE_MAX} meaning "see `largeCounts`").
 *
 * Surfaces (folded words as written, stop-words excepted): id by text, with their term id, whether
 * they are plain Latin words, and for those how many live records hold them (the vocabulary fuzzy
 * matching reads). `surfaceMarks` is per-record scratch of the tokenizer (a surface is counted once
 * per record).
 */
export class Vocabulary {
  /**
   * @param irregular Whether irregular verb and noun forms are stemmed as their base (`stemWord`).
   * @param room Room for `terms` terms and `surfaces` surfaces (at least 256 each), and the term
   * postings to start from (a decoded snapshot's; default none). The per-surface arrays share one
   * buffer: a restore allocates few arrays.
   */
  constructor(readonly irregular = true, room: { terms?: number; surfaces?: number; termPostings?: PairLists } = {}) {
    this.termFrequency = new Int32Array(room.terms === undefined ? 256 : withRoom(room.terms))
    this.termPostings = room.termPostings ?? new PairLists()
    const surfaces = room.surfaces === undefined ? 256 : withRoom(room.surfaces)
    const buffer = new ArrayBuffer(13 * surfaces)
    this.surfaceTerms = new Int32Array(buffer, 0, surfaces)
    this.surfaceCounts = new Int32Array(buffer, 4 * surfaces, surfaces)
    this.surfaceMarks = new Int32Array(buffer, 8 * surfaces, surfaces)
    this.surfaceLatin = new Uint8Array(buffer, 12 * surfaces, surfaces)
  }

  termIds = new Map<string, number>()
  termNames: string[] = []
  termFrequency: Int32Array
  termPostings: PairLists
  /** Field counts above {@link TF_INLINE_MAX}: slot × `FIELDS` + field -> count. */
  largeCounts = new Map<number, number>()
  /**
   * The surface ids of a dates field's text, in token order (tokenizer scratch: records of one
   * day share a text, and a surface id never changes in a vocabulary). At most
   * {@link DATE_TEXTS_MAX} texts; emptied when full.
   */
  readonly dateSurfaces = new Map<string, readonly number[]>()

  /** Surface text by id. */
  surfaceNames: string[] = []
  surfaceTerms: Int32Array
  surfaceLatin: Uint8Array
  surfaceCounts: Int32Array
  surfaceMarks: Int32Array
  surfaceMark = 0
  /**
   * Surface id by text, made on first use ({@link surfaceIds}) and kept current from then on.
   * Until then a surface that is a whole run of the index's run index is found through that run
   * (`RunIndex.surfaces`), and any other in {@link offRun}: an index build makes no map entry
   * for most of its words.
   */
  private surfaceMap: Map<string, number> | undefined
  /** Surfaces made while {@link surfaceMap} is not made, that no whole run stands for (a word with an apostrophe suffix, "May", non-ASCII words). */
  private readonly offRun = new Map<string, number>()
  /** Set by {@link restoreSurfaces}: every surface is in {@link surfaceNames} (none in {@link offRun}), the map is made from them on first use. */
  private restored = false
  /**
   * Plain Latin surfaces by length, and a 26-bit mask of each one's letters: fuzzy matching in a
   * large vocabulary visits only these (made on first use).
   */
  private latin: LatinSurfaces | undefined
  /**
   * Per surface id: a plain Latin surface's letter mask and length ({@link latinKey}), else 0, for
   * the surfaces below {@link latinKeyed}. Fuzzy matching in a small vocabulary reads this one array
   * (a few cache lines) instead of the buckets. A new surface's key is made with it (the word is at
   * hand then); a restored vocabulary's are made by the restore ({@link keyLatinSurfaces}), while
   * its words are at hand too: made on a first search instead, they would read every word of a
   * scope whose memory is no longer in the CPU's caches.
   */
  private latinKeys = NO_KEYS
  private latinKeyed = 0
  /**
   * Changes when a plain Latin surface comes to be held by a live record or stops being held
   * (`surfaceCounts` from or to 0): what fuzzy matching and compound splitting read.
   */
  latinGeneration = 0
  /** Changes when a term comes to be held by a live record or stops being held (`termFrequency` from or to 0). */
  termGeneration = 0
  /** The near terms of recent query words the vocabulary does not use (query-terms.ts), valid at their `generation`. */
  readonly nearTerms = new Map<string, NearTerms>()

  /** Surface id by text (made when first asked for). */
  get surfaceIds(): ReadonlyMap<string, number> {
    return this.surfaceMap ??= idsByText(this.surfaceNames)
  }

  /** Sets the surfaces (a decoded snapshot's): `names` by id, distinct. Their map by text is made when first needed. */
  restoreSurfaces(names: string[]): void {
    this.surfaceNames = names
    this.surfaceMap = undefined
    this.restored = true
    this.latin = undefined
    this.latinKeyed = 0
  }

  /** Makes room for `words` terms and surfaces with `postings` term postings in all. */
  reserve(words: number, postings: number): void {
    if (words > this.termFrequency.length) this.termFrequency = grow(this.termFrequency, words)
    if (words > this.surfaceTerms.length) {
      this.surfaceTerms = grow(this.surfaceTerms, words)
      this.surfaceLatin = grow(this.surfaceLatin, words)
      this.surfaceCounts = grow(this.surfaceCounts, words)
      this.surfaceMarks = grow(this.surfaceMarks, words)
    }
    this.termPostings.reserve(words, postings)
  }

  /** The id of term `term`, made when new. */
  termId(term: string): number {
    let id = this.termIds.get(term)
    if (id === undefined) {
      id = this.termIds.size
      this.termIds.set(term, id)
      this.termNames.push(term)
      this.termPostings.create()
      if (id >= this.termFrequency.length) this.termFrequency = grow(this.termFrequency, id + 1)
    }
    return id
  }

  /**
   * The id of `surface` (a token's folded word, not a stop-word), made when `create`; -1 when
   * unknown. `wholeRun`: the surface is a whole run of the index's run index whose surface is not
   * noted there yet (so it can only have been made as another kind of surface); else the caller
   * looked its run up first.
   */
  surfaceId(surface: string, create: boolean, wholeRun = false): number {
    const sid = this.surfaceMap !== undefined || this.restored ? this.surfaceIds.get(surface) : this.offRun.get(surface)
    if (sid !== undefined) return sid
    return create ? this.newSurface(surface, wholeRun) : -1
  }

  private newSurface(surface: string, wholeRun: boolean): number {
    // A cached stem is a plain Latin word's: one lookup gives the term and the script.
    const cached = cachedStem(surface, this.irregular)
    const id = this.termId(cached ?? stemWord(surface, this.irregular))
    const sid = this.surfaceNames.length
    this.surfaceNames.push(surface)
    if (this.surfaceMap !== undefined) this.surfaceMap.set(surface, sid)
    else if (!wholeRun) this.offRun.set(surface, sid)
    if (sid >= this.surfaceTerms.length) {
      this.surfaceTerms = grow(this.surfaceTerms, sid + 1)
      this.surfaceLatin = grow(this.surfaceLatin, sid + 1)
      this.surfaceCounts = grow(this.surfaceCounts, sid + 1)
      this.surfaceMarks = grow(this.surfaceMarks, sid + 1)
    }
    this.surfaceTerms[sid] = id
    this.surfaceLatin[sid] = cached !== undefined || LATIN_SURFACE.test(surface) ? 1 : 0
    if (this.surfaceLatin[sid] === 1) this.latin?.add(surface, sid)
    if (this.latinKeyed === sid) {
      if (sid >= this.latinKeys.length) this.latinKeys = grow(this.latinKeys, Math.max(256, sid + 1))
      this.latinKeys[sid] = this.surfaceLatin[sid] === 1 ? latinKey(surface) : 0
      this.latinKeyed++
    }
    return sid
  }

  /**
   * Calls `visit(sid, word)` for every plain Latin surface held by a live record whose length is
   * within `max` of `word`'s and whose letters differ from `word`'s in at most `2 × max` letters
   * (a necessary condition of an edit distance of at most `max`): the candidates of fuzzy matching.
   */
  forEachNearLatin(word: string, max: number, visit: (sid: number, surface: string) => void): void {
    if (this.surfaceNames.length > FLAT_SCAN_MAX) {
      this.latinSurfaces().forEachNear(word, max, this.surfaceCounts, visit)
      return
    }
    const keys = this.keyedLatin()
    const names = this.surfaceNames
    const counts = this.surfaceCounts
    const mask = letterMask(word)
    const limit = 2 * max
    for (let sid = 0; sid < names.length; sid++) {
      const key = keys[sid]!
      if (key === 0 || Math.abs(keyLength(key, names, sid) - word.length) > max || popcount((key & LETTERS) ^ mask) > limit || counts[sid] === 0) continue
      visit(sid, names[sid]!)
    }
  }

  /** Makes the {@link latinKeys} of every surface (a restore calls it once `surfaceLatin` is set). */
  keyLatinSurfaces(): void {
    this.keyedLatin()
  }

  /** {@link latinKeys}, made for every surface. */
  private keyedLatin(): Int32Array {
    const names = this.surfaceNames
    if (this.latinKeyed < names.length) {
      if (this.latinKeys.length < names.length) this.latinKeys = grow(this.latinKeys, names.length)
      for (let sid = this.latinKeyed; sid < names.length; sid++) this.latinKeys[sid] = this.surfaceLatin[sid] === 1 ? latinKey(names[sid]!) : 0
      this.latinKeyed = names.length
    }
    return this.latinKeys
  }

  private latinSurfaces(): LatinSurfaces {
    if (this.latin === undefined) {
      this.latin = new LatinSurfaces()
      const names = this.surfaceNames
      for (let sid = 0; sid < names.length; sid++) if (this.surfaceLatin[sid] === 1) this.latin.add(names[sid]!, sid)
    }
    return this.latin
  }

  /** Notes a record's hold of term `id` (one per record holding it). */
  holdTerm(id: number): void {
    if (this.termFrequency[id]!++ === 0) this.termGeneration++
  }

  /** Notes that a record holding term `id` left. */
  releaseTerm(id: number): void {
    if (--this.termFrequency[id]! === 0) this.termGeneration++
  }

  /** Notes a record's hold of surface `sid` (once per record). */
  holdSurface(sid: number): void {
    if (this.surfaceCounts[sid]!++ === 0 && this.surfaceLatin[sid] === 1) this.latinGeneration++
  }

  /** Notes that a record holding surface `sid` left. */
  releaseSurface(sid: number): void {
    if (--this.surfaceCounts[sid]! === 0 && this.surfaceLatin[sid] === 1) this.latinGeneration++
  }

  /** Keeps the near terms of a query word (a few dozen words at most: the oldest are forgotten together). */
  rememberNearTerms(surface: string, near: NearTerms): void {
    if (this.nearTerms.size >= MAX_NEAR_WORDS) this.nearTerms.clear()
    this.nearTerms.set(surface, near)
  }

  /** A new surface mark for the next record tokenized (marks of older records stay below it). */
  nextSurfaceMark(): number {
    if (++this.surfaceMark >= 0x7fffffff) {
      this.surfaceMarks.fill(0)
      this.surfaceMark = 1
    }
    return this.surfaceMark
  }

  /** The term of an indexed plain Latin surface word held by a live record, else `undefined`. */
  latinSurface(word: string): string | undefined {
    // A small vocabulary without its surface map looks through its Latin keys instead of making the map.
    const sid = this.surfaceMap === undefined && this.surfaceNames.length <= FLAT_SCAN_MAX ? this.findLatin(word) : this.surfaceIds.get(word)
    return sid === undefined || this.surfaceLatin[sid] === 0 || this.surfaceCounts[sid] === 0 ? undefined : this.termNames[this.surfaceTerms[sid]!]
  }

  /** The surface id of plain Latin word `word` by a scan of {@link latinKeys}, or `undefined`. */
  private findLatin(word: string): number | undefined {
    const keys = this.keyedLatin()
    const names = this.surfaceNames
    const key = latinKey(word)
    for (let sid = 0; sid < names.length; sid++) if (keys[sid] === key && names[sid] === word) return sid
    return undefined
  }

  /** Count of `field` in a posting's packed value for `slot` (large counts looked up). */
  fieldCount(packed: number, slot: number, field: number): number {
    const count = (packed >>> (field * TF_BITS)) & TF_INLINE_MAX
    return count === TF_INLINE_MAX ? this.largeCounts.get(slot * FIELDS + field)! : count
  }
}

/** The Latin keys of a vocabulary that has made none yet (shared, never written: keys grow out of it). */
const NO_KEYS = new Int32Array(0)

/** Most surfaces of a vocabulary that fuzzy matching and compound splitting scan whole (a larger one: buckets by length, the surface map). */
const FLAT_SCAN_MAX = 2048

const LETTERS = 0x3ffffff
/** Lengths a {@link latinKey} holds; a longer word's key holds this and its length is read from the word. */
const KEY_LENGTH_MAX = 31

/** The letter mask of a plain Latin word (26 bits) and its length up to {@link KEY_LENGTH_MAX} (5 bits above). Never 0. */
function latinKey(word: string): number {
  return letterMask(word) | (Math.min(word.length, KEY_LENGTH_MAX) << 26)
}

function keyLength(key: number, names: readonly string[], sid: number): number {
  const length = key >>> 26
  return length === KEY_LENGTH_MAX ? names[sid]!.length : length
}

/** Query words whose near terms a vocabulary keeps. */
const MAX_NEAR_WORDS = 64

/** The terms a query word the vocabulary does not use was likely meant as (query-terms.ts), at a {@link Vocabulary.latinGeneration}. */
export interface NearTerms {
  readonly generation: number
  /** The word is two indexed words written together (`terms` are both, weight 1), else `terms` are the nearest spellings. */
  readonly split: boolean
  readonly terms: readonly string[]
}

/** Plain Latin surface words bucketed by length, each with a mask of the letters it holds. */
class LatinSurfaces {
  private readonly byLength: Array<{ sids: number[]; masks: number[]; words: string[] }> = []

  add(surface: string, sid: number): void {
    let bucket = this.byLength[surface.length]
    if (bucket === undefined) this.byLength[surface.length] = bucket = { sids: [], masks: [], words: [] }
    bucket.sids.push(sid)
    bucket.masks.push(letterMask(surface))
    bucket.words.push(surface)
  }

  forEachNear(word: string, max: number, counts: Int32Array, visit: (sid: number, surface: string) => void): void {
    const mask = letterMask(word)
    const limit = 2 * max
    for (let length = Math.max(1, word.length - max); length <= word.length + max; length++) {
      const bucket = this.byLength[length]
      if (bucket === undefined) continue
      const { sids, masks, words } = bucket
      for (let at = 0; at < sids.length; at++) {
        if (popcount(masks[at]! ^ mask) > limit || counts[sids[at]!] === 0) continue
        visit(sids[at]!, words[at]!)
      }
    }
  }
}

/** Bit `c - 'a'` set for each letter `c` of a plain Latin word. */
function letterMask(word: string): number {
  let mask = 0
  for (let at = 0; at < word.length; at++) mask |= 1 << (word.charCodeAt(at) - 97)
  return mask
}

