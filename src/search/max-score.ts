/**
 * Top-k BM25F over the term postings, document at a time with MaxScore pruning (Turtle and Flood,
 * 1995): the query's posting lists are walked together in slot order; once the heap of the best
 * `limit` is full, the lists whose summed bounds (term-bounds.ts) cannot reach its floor are
 * "non-essential": a record found only in them is never scored, and a record of the essential
 * lists is looked up in them (a seek) only while its score can still reach the floor.
 *
 * Pruning never changes the result: every record that could enter the top `limit` is scored in
 * full, and a score is the sum of the per-term points in the order of the query's terms, the same
 * additions as an exhaustive pass (`scoreSlot`).
 */
import type { Bm25fParams, FieldNorms } from './bm25f.ts'
import { fieldNorms, idf, postingTf, termPoints } from './bm25f.ts'
import { FIELDS } from './slots.ts'
import { TF_BITS, TF_INLINE_MAX } from './vocabulary.ts'
import { passesFilters } from './filters.ts'
import type { CheckedQuery } from './query.ts'
import type { ScoredSlot } from './slots.ts'
import type { IndexState } from './state.ts'
import { TopK } from './top-k.ts'
import type { SearchDocument } from './types.ts'

/** A candidate of a ranking: its slot, its BM25F score, and how many of the query's first terms it holds. */
export interface RankedSlot extends ScoredSlot {
  matched: number
}

/** What one top-k pass keeps and skips. */
export interface TopKPass {
  /** Most candidates kept. */
  readonly limit: number
  /** The query whose filters a candidate must pass. */
  readonly checked: CheckedQuery
  /** Slots never kept (the substring rule's own hits). */
  readonly excluded?: ReadonlySet<number>
  /** `matched` counts the terms among the first `counted` of `terms` (the query's own, before lent ones). */
  readonly counted: number
  /** False walks every posting (the exhaustive pass pruning must equal). Default true. */
  readonly prune?: boolean
}

// Bounds are raised by this share so that rounding in their sums never prunes a record that
// reaches the floor exactly.
const BOUND_SLACK = 1 + 1e-9
const END = 0x7fffffff

/**
 * Cursors over the posting lists of weighted terms, one per known term in the order of the
 * terms, each with its term's idf × weight and its bound (the most points one posting can give).
 */
class PostingCursors<D extends SearchDocument> {
  readonly count: number
  /** Per cursor: the place of its term among all the terms given. */
  readonly places: Int32Array
  readonly termIdfs: Float64Array
  readonly bounds: Float64Array
  /** Per cursor: the slot it stands on ({@link END} past the end), its pair offset, its block range and the range's end. */
  readonly current: Int32Array
  private readonly offset: Int32Array
  private readonly range: Int32Array
  private readonly ends: Int32Array
  private readonly ranges: Array<readonly number[]> = []
  private readonly data: Int32Array
  private readonly norms: FieldNorms

  /** The slots of the state the cursors read. */
  readonly slots: IndexState<D>['slots']

  constructor(private readonly state: IndexState<D>, params: Bm25fParams, terms: ReadonlyMap<string, number>) {
    const { slots, vocabulary } = state
    this.slots = slots
    const norms = this.norms = fieldNorms(state, params)
    const slope = norms.slope
    const places: number[] = []
    const termIdfs: number[] = []
    const bounds: number[] = []
    let place = 0
    for (const [term, weight] of terms) {
      const at = place++
      const id = vocabulary.termIds.get(term)
      if (id === undefined) continue
      const frequency = vocabulary.termFrequency[id]!
      if (frequency === 0) continue
      const termIdf = weight * idf(slots.live, frequency)
      const maxTf = state.bounds.maxTf(vocabulary, slots, id, params.weights, norms.base, slope)
      places.push(at)
      termIdfs.push(termIdf)
      bounds.push(termPoints(termIdf, maxTf, norms.k1) * BOUND_SLACK)
      this.ranges.push(vocabulary.termPostings.blockRanges(id))
    }
    this.count = places.length
    this.places = Int32Array.from(places)
    this.termIdfs = Float64Array.from(termIdfs)
    this.bounds = Float64Array.from(bounds)
    this.data = vocabulary.termPostings.data
    this.current = new Int32Array(this.count)
    this.offset = new Int32Array(this.count)
    this.range = new Int32Array(this.count)
    this.ends = new Int32Array(this.count)
    for (let list = 0; list < this.count; list++) {
      const own = this.ranges[list]!
      this.offset[list] = own[0]!
      this.ends[list] = own[1]!
      this.current[list] = this.data[own[0]!]!
    }
  }

  /**
   * Writes the points of the posting cursor `list` stands on (the additions of `accumulate`) at
   * its term's place in `points`: a double stored, not returned, is not boxed on the heap.
   */
  pointsInto(list: number, points: Float64Array): void {
    const data = this.data
    const at = this.offset[list]!
    const slot = data[at]!
    const packed = data[at + 1]!
    const norms = this.norms
    const c0 = packed & TF_INLINE_MAX
    const c1 = (packed >>> TF_BITS) & TF_INLINE_MAX
    const c2 = (packed >>> (2 * TF_BITS)) & TF_INLINE_MAX
    const c3 = packed >>> (3 * TF_BITS)
    if (c0 === TF_INLINE_MAX || c1 === TF_INLINE_MAX || c2 === TF_INLINE_MAX || c3 === TF_INLINE_MAX) {
      points[this.places[list]!] = termPoints(this.termIdfs[list]!, postingTf(norms, this.state.vocabulary, this.state.slots.lengths, packed, slot), norms.k1)
      return
    }
    // `termPoints(idf, postingTf(...), k1)` written out (the same operations in the same order):
    // a double returned from a call that is not inlined is a heap number, and this runs per posting scored.
    const lengths = this.state.slots.lengths
    const field = slot * FIELDS
    const tf = (c0 === 0 ? 0 : norms.w0 * c0 / (norms.base + norms.a0 * lengths[field]!))
      + (c1 === 0 ? 0 : norms.w1 * c1 / (norms.base + norms.a1 * lengths[field + 1]!))
      + (c2 === 0 ? 0 : norms.w2 * c2 / (norms.base + norms.a2 * lengths[field + 2]!))
      + (c3 === 0 ? 0 : norms.w3 * c3 / (norms.base + norms.a3 * lengths[field + 3]!))
    points[this.places[list]!] = this.termIdfs[list]! * tf * (norms.k1 + 1) / (tf + norms.k1)
  }

  /** Postings of cursor `list`'s term (tombstones included). */
  length(list: number): number {
    const own = this.ranges[list]!
    let pairs = 0
    for (let at = 0; at < own.length; at += 2) pairs += (own[at + 1]! - own[at]!) / 2
    return pairs
  }

  /** Moves cursor `list` back to its first posting. */
  rewind(list: number): void {
    const own = this.ranges[list]!
    this.range[list] = 0
    this.offset[list] = own[0]!
    this.ends[list] = own[1]!
    this.current[list] = this.data[own[0]!]!
  }

  /** Moves cursor `list` to its next posting. */
  advance(list: number): void {
    let at = this.offset[list]! + 2
    if (at >= this.ends[list]!) {
      const own = this.ranges[list]!
      const next = this.range[list]! + 2
      if (next >= own.length) {
        this.current[list] = END
        return
      }
      this.range[list] = next
      at = own[next]!
      this.ends[list] = own[next + 1]!
    }
    this.offset[list] = at
    this.current[list] = this.data[at]!
  }

  /** Moves cursor `list` to its first posting of a slot at least `slot` (whole blocks skipped, then a gallop and a binary search). */
  seek(list: number, slot: number): void {
    if (this.current[list]! >= slot) return
    const data = this.data
    const own = this.ranges[list]!
    let next = this.range[list]!
    while (data[own[next + 1]! - 2]! < slot) {
      next += 2
      if (next >= own.length) {
        this.current[list] = END
        return
      }
    }
    let low = next === this.range[list]! ? this.offset[list]! : own[next]!
    let high = own[next + 1]! - 2
    this.range[list] = next
    this.ends[list] = own[next + 1]!
    // Galloping (Bentley and Yao): slots asked in increasing order are mostly a few pairs ahead,
    // so the bracket doubles from `low` before the binary search (a search over a whole block of
    // 512 pairs costs 9 probes; a target 3 pairs ahead, 2 or 3).
    for (let step = 2; low < high && data[low]! < slot; step <<= 1) {
      const probe = low + step
      if (probe >= high || data[probe]! >= slot) {
        if (probe < high) high = probe
        low += 2
        break
      }
      low = probe + 2
    }
    // Pair offsets are even: the first pair at or after `slot` lies in [low, high].
    while (low < high) {
      const middle = low + (((high - low) >> 1) & ~1)
      if (data[middle]! < slot) low = middle + 2
      else high = middle
    }
    this.offset[list] = low
    this.current[list] = data[low]!
  }
}

/**
 * The best `pass.limit` live slots by BM25F of `terms` (term -> weight, points added in the map's
 * order) that pass the filters and are not excluded, best first under `slots.compare`.
 *
 * Lists that each dwarf all the lists of greater bound ({@link SEED_RATIO}: a common word beside
 * rarer ones) are left out of a first walk, which scores the records of the other lists (looking
 * them up in the long ones) and so fills the heap; the long lists are then walked only when the
 * heap's floor is still within their bounds, for the records the first walk did not score.
 */
export function topByMaxScore<D extends SearchDocument>(state: IndexState<D>, params: Bm25fParams, terms: ReadonlyMap<string, number>, pass: TopKPass): RankedSlot[] {
  const { slots } = state
  if (slots.live === 0 || pass.limit <= 0) return []
  const top = new TopK<RankedSlot>(pass.limit, slots.compare)
  const cursors = new PostingCursors(state, params, terms)
  const count = cursors.count
  if (count === 0) return []
  // Cursors in increasing order of bound; `upTo[i]` = the sum of the bounds of the first i + 1.
  const order = Array.from({ length: count }, (_, list) => list).sort((x, y) => cursors.bounds[x]! - cursors.bounds[y]!)
  const lists = Int32Array.from(order)
  const upTo = new Float64Array(count)
  for (let at = 0, sum = 0; at < count; at++) upTo[at] = sum += cursors.bounds[lists[at]!]!
  const { current, places } = cursors
  const points = new Float64Array(terms.size)
  const prune = pass.prune !== false
  const { checked, excluded, counted } = pass
  const alive = slots.alive
  // Cursors before `essential` (in `lists`) cannot lift a record to the floor on their own.
  let essential = 0
  let floor = Number.NEGATIVE_INFINITY
  const raise = () => {
    const lowest = top.floor()
    if (prune && lowest !== undefined && lowest.score > floor) {
      floor = lowest.score
      while (essential < count && upTo[essential]! < floor) essential++
    }
  }
  // `scored`: slots a first walk scored (increasing), skipped by the second; `into` collects them.
  const walk = (scored: readonly number[] | undefined, into: number[] | undefined) => {
    let next = 0
    for (;;) {
      let slot = END
      for (let at = essential; at < count; at++) if (current[lists[at]!]! < slot) slot = current[lists[at]!]!
      if (slot === END) break
      if (scored !== undefined) while (next < scored.length && scored[next]! < slot) next++
      if (alive[slot] === 0 || (excluded !== undefined && excluded.has(slot)) || (scored !== undefined && scored[next] === slot)) {
        for (let at = essential; at < count; at++) if (current[lists[at]!] === slot) cursors.advance(lists[at]!)
        continue
      }
      let score = 0
      for (let at = essential; at < count; at++) {
        const list = lists[at]!
        if (current[list] !== slot) continue
        cursors.pointsInto(list, points)
        score += points[places[list]!]!
        cursors.advance(list)
      }
      let reachable = true
      for (let at = essential - 1; at >= 0; at--) {
        if (score + upTo[at]! < floor) {
          reachable = false
          break
        }
        const list = lists[at]!
        cursors.seek(list, slot)
        if (current[list] !== slot) continue
        cursors.pointsInto(list, points)
        score += points[places[list]!]!
      }
      if (reachable) {
        into?.push(slot)
        const { score: exact, matched } = inOrder(points, counted)
        offerRanked(state, top, slot, exact, matched, checked)
        if (into === undefined) raise()
      }
      points.fill(0)
    }
  }
  const long = prune ? longLists(cursors, lists) : 0
  if (long === 0) {
    walk(undefined, undefined)
    return top.sorted()
  }
  // First walk: the records of the shorter lists, every one scored in full (no floor yet).
  essential = long
  const scored: number[] = []
  walk(undefined, scored)
  essential = 0
  raise()
  if (essential >= long) return top.sorted()
  for (let at = 0; at < long; at++) cursors.rewind(lists[at]!)
  walk(scored, undefined)
  return top.sorted()
}

/**
 * A list of the query this many times longer than all lists of greater bound together is walked
 * after them (see {@link topByMaxScore}).
 */
const SEED_RATIO = 4

/** How many of the first `lists` (in increasing order of bound) each dwarf the lists after them. */
function longLists<D extends SearchDocument>(cursors: PostingCursors<D>, lists: Int32Array): number {
  const lengths = Array.from(lists, list => cursors.length(list))
  let after = lengths.reduce((sum, length) => sum + length, 0)
  let long = 0
  while (long < lists.length - 1) {
    after -= lengths[long]!
    if (lengths[long]! <= SEED_RATIO * after) break
    long++
  }
  return long
}

/**
 * The scores of `slots` (live, increasing) for `terms`, as an exhaustive pass adds them, with the
 * terms among the first `counted` each holds; slots no term holds score 0. With `bases` (aligned
 * with `slots`: each slot's score by the terms an exhaustive pass adds before these), the points
 * of `terms` are added to them in order, the same additions as scoring every term at once.
 */
export function scoreSlots<D extends SearchDocument>(state: IndexState<D>, params: Bm25fParams, terms: ReadonlyMap<string, number>, counted: number, slots: readonly number[], bases?: readonly number[]): RankedSlot[] {
  if (slots.length === 0) return []
  return scoreSlotsWith(new PostingCursors(state, params, terms), terms.size, counted, slots, bases)
}

/**
 * A scorer of slots for one set of terms (`scoreSlots` with its cursors made once): each call
 * takes slots in increasing order, any number of calls. `held`, when given, says per slot which
 * known terms (bit i: the i-th known term of `terms`) it holds: the others are not looked up.
 */
export function slotScorer<D extends SearchDocument>(state: IndexState<D>, params: Bm25fParams, terms: ReadonlyMap<string, number>, counted: number): (slots: ArrayLike<number>, held?: ArrayLike<number>, into?: TopK<RankedSlot>) => RankedSlot[] {
  let cursors: PostingCursors<D> | undefined
  return (slots, held, into) => {
    if (slots.length === 0) return []
    if (cursors === undefined) cursors = new PostingCursors(state, params, terms)
    else for (let list = 0; list < cursors.count; list++) cursors.rewind(list)
    return scoreSlotsWith(cursors, terms.size, counted, slots, undefined, held, into)
  }
}

let pointScratch = new Float64Array(16)

/**
 * The scores of `slots` by the cursors' terms; with `into`, each offered to that heap instead
 * (what `into.push` of each would keep; nothing returned), a slot that cannot enter making no
 * object.
 */
function scoreSlotsWith<D extends SearchDocument>(cursors: PostingCursors<D>, size: number, counted: number, slots: ArrayLike<number>, bases?: readonly number[], held?: ArrayLike<number>, into?: TopK<RankedSlot>): RankedSlot[] {
  if (pointScratch.length < size) pointScratch = new Float64Array(Math.max(size, 2 * pointScratch.length))
  const points = pointScratch.subarray(0, size)
  const { current, count } = cursors
  const { created, positions } = cursors.slots
  const out: RankedSlot[] = []
  for (let at = 0; at < slots.length; at++) {
    const slot = slots[at]!
    const lists = held === undefined ? -1 : held[at]!
    for (let list = 0; list < count; list++) {
      if (((lists >>> list) & 1) === 0) continue
      cursors.seek(list, slot)
      if (current[list] === slot) cursors.pointsInto(list, points)
    }
    const { score, matched } = inOrder(points, counted, bases === undefined ? 0 : bases[at]!)
    points.fill(0)
    if (into === undefined) {
      out.push({ slot, score, matched })
      continue
    }
    // `into.push` keeps an item that beats the floor under `slots.compare`.
    const floor = into.floor()
    if (floor !== undefined && !(score > floor.score || (score === floor.score && (created[slot]! - created[floor.slot]! || positions[slot]! - positions[floor.slot]!) > 0))) continue
    // The item a push left out is filled again for the next (only this function makes the heap's items).
    let item = spare
    if (item === undefined) item = { slot, score, matched }
    else {
      item.slot = slot
      item.score = score
      item.matched = matched
    }
    spare = into.push(item)
  }
  return out
}

/** An item of a `scoreSlotsWith` heap that the heap left out, to be filled again (searches are synchronous). */
let spare: RankedSlot | undefined

const summed = { score: 0, matched: 0 }

/** `base` plus `points` in the order of the terms (the additions of an exhaustive pass), and how many of the first `counted` are given. */
function inOrder(points: Float64Array, counted: number, base = 0): { score: number; matched: number } {
  let score = base
  let matched = 0
  for (let place = 0; place < points.length; place++) {
    const value = points[place]!
    if (value === 0) continue
    score += value
    if (place < counted) matched++
  }
  summed.score = score
  summed.matched = matched
  return summed
}

/** Offers a candidate: compared with the heap's floor first, then filtered. */
function offerRanked<D extends SearchDocument>(state: IndexState<D>, top: TopK<RankedSlot>, slot: number, score: number, matched: number, checked: CheckedQuery): void {
  const slots = state.slots
  const lowest = top.floor()
  if (lowest && !(score > lowest.score || (score === lowest.score && (slots.created[slot]! - slots.created[lowest.slot]! || slots.positions[slot]! - slots.positions[lowest.slot]!) > 0))) return
  if (passesFilters(slots.records[slot]!, slots.created[slot]!, checked)) top.push({ slot, score, matched })
}
