import { grow } from './arrays.ts'

/** A slot with its score in one search. */
export interface ScoredSlot {
  slot: number
  score: number
}

/** Number of fields an index keeps per slot (title, content, tags, dates). */
export const FIELDS = 4

/** The field number of the dates field: ranked, never read by the substring rule, proximity or snippets. */
export const DATES_FIELD = 3

/**
 * The records of one index as numbered slots, in indexing order: per slot the record (or
 * `undefined` for a tombstone), its position (ties in ranking go to the greater one), its creation
 * time in ms, its four field lengths in tokens, and whether it is live. Field statistics
 * (`lengthSums`, `fieldCounts`: records with a non-empty field) are over the live slots.
 */
export class Slots<D> {
  records: Array<D | undefined> = []
  positions: Int32Array
  created: Float64Array
  /** Field lengths, slot × {@link FIELDS} + field. */
  lengths: Uint32Array
  alive: Uint8Array
  /** Slots used, live and tombstoned. */
  count = 0
  live = 0
  /**
   * Slot of each live record id, made from {@link records} on first use (a restored index's first
   * searches never need it: only an update or a removal looks a record up by id).
   */
  private idMap: Map<string, number> | undefined
  readonly lengthSums = [0, 0, 0, 0]
  /** Live records with a non-empty field, per field: average lengths are over these (a missing title is no short title). */
  readonly fieldCounts = [0, 0, 0, 0]

  /** Room for `capacity` slots (the four per-slot arrays share one buffer: a restore allocates little). */
  constructor(capacity = 256) {
    const buffer = new ArrayBuffer(capacity * (8 + 4 + 4 * FIELDS + 1))
    this.created = new Float64Array(buffer, 0, capacity)
    this.positions = new Int32Array(buffer, 8 * capacity, capacity)
    this.lengths = new Uint32Array(buffer, 12 * capacity, capacity * FIELDS)
    this.alive = new Uint8Array(buffer, (12 + 4 * FIELDS) * capacity, capacity)
  }

  /** Slot of each live record id (made when first asked for). */
  get ids(): ReadonlyMap<string, number> {
    return this.slotsById()
  }

  private slotsById(): Map<string, number> {
    if (this.idMap === undefined) {
      const map = new Map<string, number>()
      const { records, alive } = this
      for (let slot = 0; slot < this.count; slot++) if (alive[slot] === 1) map.set(this.idOf(records[slot]!), slot)
      this.idMap = map
    }
    return this.idMap
  }

  /** The id of a live record (its `id` field: every document of an index has one). */
  private idOf(record: D): string {
    return (record as { id: string }).id
  }

  /** A new live slot for `record`; returns it. */
  add(record: D, id: string, position: number, created: number, lengths: readonly number[]): number {
    const slot = this.count++
    if (slot >= this.alive.length) {
      this.positions = grow(this.positions, slot + 1)
      this.created = grow(this.created, slot + 1)
      this.lengths = grow(this.lengths, (slot + 1) * FIELDS)
      this.alive = grow(this.alive, slot + 1)
    }
    this.records[slot] = record
    this.positions[slot] = position
    this.created[slot] = created
    this.alive[slot] = 1
    this.slotsById().set(id, slot)
    this.live++
    for (let field = 0; field < FIELDS; field++) {
      const length = lengths[field]!
      this.lengths[slot * FIELDS + field] = length
      this.countField(field, length, 1)
    }
    return slot
  }

  /** Tombstones the slot of `id`; returns the slot, or `undefined` when `id` has none. */
  remove(id: string): number | undefined {
    const ids = this.slotsById()
    const slot = ids.get(id)
    if (slot === undefined) return undefined
    ids.delete(id)
    for (let field = 0; field < FIELDS; field++) this.countField(field, this.lengths[slot * FIELDS + field]!, -1)
    this.alive[slot] = 0
    this.records[slot] = undefined
    this.live--
    return slot
  }

  /** Adds (`sign` 1) or takes back (-1) a live field length in the field statistics. */
  countField(field: number, length: number, sign: 1 | -1): void {
    this.lengthSums[field]! += sign * length
    if (length > 0) this.fieldCounts[field]! += sign
  }

  /** Average length per field over the live records where it is not empty (never 0). */
  averageLengths(): [number, number, number, number] {
    const average = (field: number) => Math.max(this.lengthSums[field]! / Math.max(this.fieldCounts[field]!, 1), 1e-9)
    return [average(0), average(1), average(2), average(3)]
  }

  /**
   * The ranking order of two scored slots, lesser first: score, then creation time, then position
   * (ties go to the newest). Only the sign is given (-1, 0 or 1): a small integer, where a
   * difference of doubles returned from a call that is not inlined is a heap number per compare.
   */
  readonly compare = (a: ScoredSlot, c: ScoredSlot): number => {
    // The signs of the differences, in the order of `a - c || ...` (a NaN difference, like 0, gives way to the next).
    const score = a.score - c.score
    if (score > 0) return 1
    if (score < 0) return -1
    const created = this.created[a.slot]! - this.created[c.slot]!
    if (created > 0) return 1
    if (created < 0) return -1
    const position = this.positions[a.slot]! - this.positions[c.slot]!
    return position > 0 ? 1 : position < 0 ? -1 : 0
  }
}
