import { PairLists } from './postings.ts'
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
 * The substring index of one index: runs (maximal letter/digit/mark sequences of the lower-cased
 * fields) by id with their texts, postings of (slot, occurrences in the record), and a trigram
 * index over the run vocabulary (trigram -> runs holding it) that finds the runs containing a
 * piece of text.
 */
export class RunIndex {
  ids = new Map<string, number>()
  texts: string[] = []
  postings = new PairLists()
  trigramIds = new Map<string, number>()
  trigramRuns = new PairLists()
  /**
   * Run id -> what the run is as a token: 0 not known yet, 1 a stop-word, else surface id + 2
   * (valid with the vocabulary this index was made with: both are replaced together).
   */
  surfaces = new Int32Array(16)
  /** This index's tag in the shared cache of recent runs. */
  private readonly owner = ++hotRunOwners

  /** The id of an indexed run, else `undefined` (a small direct-mapped cache before the map: words repeat). */
  known(run: string): number | undefined {
    const length = run.length
    const hot = (length * 40503 + run.charCodeAt(0) * 31 + run.charCodeAt(length - 1) * 977 + run.charCodeAt(length >> 1) * 7919) & HOT_RUN_MASK
    if (hotRunTags[hot] === this.owner && hotRunTexts[hot] === run) return hotRunIds[hot]
    const id = this.ids.get(run)
    if (id !== undefined) {
      hotRunTags[hot] = this.owner
      hotRunTexts[hot] = run
      hotRunIds[hot] = id
    }
    return id
  }

  /** The id of `run`, made (with its trigrams) when new. */
  id(run: string): number {
    let id = this.known(run)
    if (id === undefined) {
      id = this.texts.length
      this.ids.set(run, id)
      this.texts.push(run)
      this.postings.create()
      // Each distinct trigram of the run once (short runs: an earlier occurrence is found by indexOf).
      const seen = run.length > 64 ? new Set<string>() : undefined
      for (let at = 0; at + 3 <= run.length; at++) {
        const gram = run.slice(at, at + 3)
        if (seen) {
          if (seen.has(gram)) continue
          seen.add(gram)
        }
        else if (at > 0 && run.indexOf(gram) < at) continue
        let gramId = this.trigramIds.get(gram)
        if (gramId === undefined) {
          this.trigramIds.set(gram, gramId = this.trigramIds.size)
          this.trigramRuns.create()
        }
        this.trigramRuns.push(gramId, id, 0)
      }
    }
    return id
  }

  /** Calls `visit(run, occurrences)` for every indexed run that contains `piece` (lower case, non-empty). */
  forEachContaining(piece: string, visit: (run: number, occurrences: number) => void): void {
    const texts = this.texts
    const check = (run: number) => {
      const occurrences = countLower(texts[run]!, piece)
      if (occurrences > 0) visit(run, occurrences)
    }
    if (piece.length < 3) {
      for (let run = 0; run < texts.length; run++) check(run)
      return
    }
    // The rarest trigram of the piece: every run holding the piece holds it.
    let rarest = -1
    for (let at = 0; at + 3 <= piece.length; at++) {
      const gram = this.trigramIds.get(piece.slice(at, at + 3))
      if (gram === undefined) return
      if (rarest === -1 || this.trigramRuns.length(gram) < this.trigramRuns.length(rarest)) rarest = gram
    }
    this.trigramRuns.forEach(rarest, check)
  }
}
