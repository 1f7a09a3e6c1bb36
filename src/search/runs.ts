import { grow, idsByText } from './arrays.ts'
import { ImpactOrders, type ImpactCopy } from './impact-order.ts'
import { CharacterPairs } from './pairs.ts'
import { PairLists } from './postings.ts'
import type { Slots } from './slots.ts'
import { countLower } from './substring-rule.ts'

/**
 * Letters, digits and marks: the characters of a run. An occurrence of a query made only of them
 * lies inside one run of the lower-cased text, so the substring rule can be answered from the
 * runs alone.
 */
export const RUN = /[\p{L}\p{N}\p{M}]+/gu
/** A text that is one run. */
export const ONLY_RUN = /^[\p{L}\p{N}\p{M}]+$/u

// Recent runs of any index -> run id, direct-mapped (searches and updates are synchronous, so
// indexes share it: each entry carries the tag of the run index that wrote it).
const HOT_RUN_MASK = 4095
const hotRunTexts: Array<string | undefined> = new Array<string | undefined>(HOT_RUN_MASK + 1).fill(undefined)
const hotRunIds = new Int32Array(HOT_RUN_MASK + 1)
const hotRunTags = new Float64Array(HOT_RUN_MASK + 1)
let hotRunOwners = 0

/**
 * Linear scans of the run vocabulary a run index allows, in multiples of its size, before it builds
 * its trigram index: a scan costs tens of nanoseconds a run, a trigram build about twenty times
 * that, so a small or rarely searched index never pays for trigrams and a busy one pays once.
 */
const SCANS_BEFORE_TRIGRAMS = 16
/** A vocabulary larger than this is never scanned for a piece of 3+ characters: its trigram index is built at the first need. */
const SCAN_MAX_RUNS = 4096

/**
 * The substring index of one index: runs (maximal letter/digit/mark sequences of the lower-cased
 * fields) by id with their texts, and postings of (slot, occurrences in the record). The runs
 * containing a piece of text are found by scanning the run vocabulary, or, once scans have cost
 * {@link SCANS_BEFORE_TRIGRAMS} times the vocabulary or at once for a vocabulary of more than
 * {@link SCAN_MAX_RUNS} runs, through a trigram index over it (trigram -> runs holding it), built
 * then and kept current from then on.
 */
export class RunIndex {
  texts: string[] = []
  /** Run id by text; a restored index's is made on first use ({@link ids}): its first searches scan {@link texts}. */
  private idMap: Map<string, number> | undefined = new Map()
  /**
   * Run id -> what the run is as a token: 0 not known yet, 1 a stop-word, else surface id + 2
   * (valid with the vocabulary this index was made with: both are replaced together).
   */
  surfaces = new Int32Array(16)
  /** This index's tag in the shared cache of recent runs. */
  private readonly owner = ++hotRunOwners
  private trigrams: Trigrams | undefined
  /** Runs visited by linear scans so far. */
  private scanned = 0
  /** Impact-ordered copies of long lists of {@link postings} (made again when the postings are replaced). */
  private impact: ImpactOrders | undefined
  /** The pairs of adjacent characters of every run (pairs.ts): a piece holding a pair no run holds is in no run. */
  private readonly pairs = new CharacterPairs()

  /** @param postings The postings to start from (a decoded snapshot's), else none. */
  constructor(public postings = new PairLists()) {}

  /** Run id by text (made when first asked for, for a restored index). */
  get ids(): ReadonlyMap<string, number> {
    return this.runsById()
  }

  private runsById(): Map<string, number> {
    return this.idMap ??= idsByText(this.texts)
  }

  /**
   * Sets the runs (a decoded snapshot's: `texts` by id, distinct; the postings are given to the
   * constructor). The id map and the character pairs are made when first needed.
   */
  restore(texts: string[]): void {
    this.texts = texts
    this.idMap = undefined
  }

  /** Makes room for `count` runs with `postings` postings in all. */
  reserve(count: number, postings: number): void {
    if (count > this.surfaces.length) this.surfaces = grow(this.surfaces, count)
    this.postings.reserve(count, postings)
  }

  /** The id of an indexed run, else `undefined` (a small direct-mapped cache before the map: words repeat). */
  known(run: string): number | undefined {
    const length = run.length
    const hot = (length * 40503 + run.charCodeAt(0) * 31 + run.charCodeAt(length - 1) * 977 + run.charCodeAt(length >> 1) * 7919) & HOT_RUN_MASK
    if (hotRunTags[hot] === this.owner && hotRunTexts[hot] === run) return hotRunIds[hot]
    const id = this.runsById().get(run)
    if (id !== undefined) {
      hotRunTags[hot] = this.owner
      hotRunTexts[hot] = run
      hotRunIds[hot] = id
    }
    return id
  }

  /** The id of `run`, made when new. */
  id(run: string): number {
    let id = this.known(run)
    if (id === undefined) {
      id = this.texts.length
      this.runsById().set(run, id)
      this.texts.push(run)
      this.pairs.extend(this.texts)
      this.postings.create()
      this.trigrams?.add(run, id)
    }
    return id
  }

  /** The impact-ordered copy of run `run`'s postings (impact-order.ts), made when missing or stale. */
  impactCopy(run: number, slots: Slots<unknown>): ImpactCopy {
    if (this.impact?.lists !== this.postings) this.impact = new ImpactOrders(this.postings)
    return this.impact.copy(run, slots)
  }

  /** True once the trigram index is built. */
  get hasTrigrams(): boolean {
    return this.trigrams !== undefined
  }

  /** Calls `visit(run, occurrences)` for every indexed run that contains `piece` (lower case, non-empty). */
  forEachContaining(piece: string, visit: (run: number, occurrences: number) => void): void {
    const texts = this.texts
    if (piece.length >= 3) {
      if (this.trigrams === undefined && (texts.length > SCAN_MAX_RUNS || this.scanned > SCANS_BEFORE_TRIGRAMS * texts.length)) this.trigrams = Trigrams.of(texts)
      if (this.trigrams !== undefined) {
        this.trigrams.forEachCandidate(piece, (run) => {
          const occurrences = countLower(texts[run]!, piece)
          if (occurrences > 0) visit(run, occurrences)
        })
        return
      }
    }
    // A word of other scopes (most rare words): no run holds one of its pairs, nothing is read.
    // The pairs are made at the first scan (a few microseconds at 100 records, about what one
    // scan costs): the first search of every other word in the scope then reads no run.
    if (!this.pairs.mayHold(texts, piece)) return
    this.scanned += texts.length
    for (let run = 0; run < texts.length; run++) {
      const text = texts[run]!
      if (text.length < piece.length || !text.includes(piece)) continue
      visit(run, countLower(text, piece))
    }
  }
}

/** Trigrams of a run vocabulary: trigram -> the runs holding it. */
class Trigrams {
  private readonly ids = new Map<string, number>()
  private readonly runs = new PairLists()

  static of(texts: readonly string[]): Trigrams {
    const trigrams = new Trigrams()
    for (let id = 0; id < texts.length; id++) trigrams.add(texts[id]!, id)
    return trigrams
  }

  /** Notes each distinct trigram of run `id` once (short runs: an earlier occurrence is found by indexOf). */
  add(run: string, id: number): void {
    const seen = run.length > 64 ? new Set<string>() : undefined
    for (let at = 0; at + 3 <= run.length; at++) {
      const gram = run.slice(at, at + 3)
      if (seen) {
        if (seen.has(gram)) continue
        seen.add(gram)
      }
      else if (at > 0 && run.indexOf(gram) < at) continue
      let gramId = this.ids.get(gram)
      if (gramId === undefined) {
        this.ids.set(gram, gramId = this.ids.size)
        this.runs.create()
      }
      this.runs.push(gramId, id, 0)
    }
  }

  /** Calls `visit(run)` for every run holding the rarest trigram of `piece` (3+ characters): a superset of the runs containing it. */
  forEachCandidate(piece: string, visit: (run: number) => void): void {
    let rarest = -1
    for (let at = 0; at + 3 <= piece.length; at++) {
      const gram = this.ids.get(piece.slice(at, at + 3))
      if (gram === undefined) return
      if (rarest === -1 || this.runs.length(gram) < this.runs.length(rarest)) rarest = gram
    }
    this.runs.forEach(rarest, visit)
  }
}
