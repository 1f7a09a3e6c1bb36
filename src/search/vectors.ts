/**
 * Exact vector search over typed arrays: the vectors of one partition in one
 * contiguous `Float32Array`, L2-normalized when added, ranked by dot product (= cosine
 * similarity) with a bounded heap. From {@link KERNEL_MIN_VECTORS} vectors on, an index given an
 * {@link ExactVectorKernel} (a native SIMD scan, such as usearch's `exactSearch`) lets it do the
 * scan: the same exact ranking, about 10x faster at 100,000 vectors. Measured on the project's
 * 2-core machines (`npm run bench:recall`, 512 dimensions; docs/search-and-recall.md, "Vector
 * search at scale"): an approximate index (HNSW) took minutes to build at 100,000 vectors and
 * missed a quarter of the exact top 10, so none is used.
 */

/** One ranked vector: the record id and its cosine similarity to the query, in [-1, 1]. */
export interface VectorMatch {
  id: string
  similarity: number
}

/** The vectors of one partition, by record id, all of one length. */
export interface VectorIndex {
  /** Vector length. */
  readonly dimensions: number
  /** Number of vectors held. */
  readonly size: number
  has(id: string): boolean
  /** Adds or replaces the vector of `id` (normalized on the way in). @throws RangeError for a vector of another length. */
  set(id: string, vector: ArrayLike<number>): void
  /**
   * Removes the vector of `id`; `false` when there was none. The others keep their order: the
   * slot is left empty, and the index is compacted once empty slots are more than half of them.
   * Cost: O(dimensions), amortized.
   */
  delete(id: string): boolean
  /**
   * The `k` vectors most similar to `query` (normalized first), best first, among those whose id
   * `accept` takes (all when omitted); ties by insertion order (with a kernel: among the candidates it returned). Cost: one dot product per vector
   * held, and O(log k) per candidate kept.
   */
  search(query: ArrayLike<number>, k: number, accept?: (id: string) => boolean): VectorMatch[]
}

/**
 * `vector` scaled to unit length, as a new `Float32Array` (a zero vector stays zero, and so
 * matches nothing: its similarity to anything is 0).
 */
export function normalizeVector(vector: ArrayLike<number>): Float32Array {
  const out = new Float32Array(vector.length)
  normalizeInto(vector, out, 0)
  return out
}

/** Squared lengths this close to 1 are unit already (float32 rounding of a unit vector): such a vector is copied as it is, not scaled. */
const UNIT_TOLERANCE = 1e-5

/** The sum of squares of the `length` values of `values` from `offset`: four sums side by side, one pass at about the speed of a copy. */
function squaredLength(values: Float32Array, offset: number, length: number): number {
  let a = 0, b = 0, c = 0, d = 0
  let i = offset
  const last = offset + length
  for (; i + 3 < last; i += 4) {
    const w = values[i]!, x = values[i + 1]!, y = values[i + 2]!, z = values[i + 3]!
    a += w * w
    b += x * x
    c += y * y
    d += z * z
  }
  for (; i < last; i++) a += values[i]! * values[i]!
  return a + b + c + d
}

/** Whether the `length` values of `values` from `offset` are of unit length within {@link UNIT_TOLERANCE}, or all zero (a zero vector stays zero). */
function isUnit(values: Float32Array, offset: number, length: number): boolean {
  const norm = squaredLength(values, offset, length)
  return norm === 0 || Math.abs(norm - 1) <= UNIT_TOLERANCE
}

/** Writes `vector` scaled to unit length into `out` from `offset`, as {@link normalizeVector} computes it (the same float32 values), without a new array. A vector already of unit length (within {@link UNIT_TOLERANCE}, as stored vectors are) costs one copy and one pass. */
function normalizeInto(vector: ArrayLike<number>, out: Float32Array, offset: number): void {
  const length = vector.length
  if (vector instanceof Float32Array) out.set(vector, offset)
  else for (let i = 0; i < length; i++) out[offset + i] = vector[i]!
  const norm = squaredLength(out, offset, length)
  if (norm === 0 || Math.abs(norm - 1) <= UNIT_TOLERANCE) return
  if (!Number.isFinite(norm)) {
    out.fill(0, offset, offset + length)
    return
  }
  const scale = 1 / Math.sqrt(norm)
  for (let i = 0; i < length; i++) out[offset + i]! *= scale
}

/** A vector as base64 of its little-endian float32 bytes (4 bytes per dimension). */
export function encodeVector(vector: Float32Array): string {
  const bytes = new Uint8Array(vector.length * 4)
  const view = new DataView(bytes.buffer)
  for (let i = 0; i < vector.length; i++) view.setFloat32(i * 4, vector[i]!, true)
  return bytesToBase64(bytes)
}

// Base64 without Node's Buffer where it is missing (edge runtimes), with it where it is there (faster).
const NodeBuffer = (globalThis as { Buffer?: { from(data: Uint8Array | ArrayBuffer | string, encoding?: string): Uint8Array & { toString(encoding: string): string; write(text: string, encoding: string): number } } }).Buffer

function bytesToBase64(bytes: Uint8Array): string {
  if (NodeBuffer) return NodeBuffer.from(bytes).toString('base64')
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}

function base64ToBytes(text: string): Uint8Array | undefined {
  if (NodeBuffer) return NodeBuffer.from(text, 'base64')
  try {
    const binary = atob(text)
    const bytes = new Uint8Array(binary.length)
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
    return bytes
  }
  catch {
    return undefined
  }
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

/** Characters of the padded base64 of `bytes` bytes. */
function base64Length(bytes: number): number {
  return Math.ceil(bytes / 3) * 4
}

function allFinite(values: Float32Array): boolean {
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!
    // NaN and ±Infinity are the values whose difference with themselves is not 0.
    if (value - value !== 0) return false
  }
  return true
}

/** The vector {@link encodeVector} wrote, or `undefined` when `text` is not `dimensions` float32 values in base64 or holds a non-finite value. */
export function decodeVector(text: unknown, dimensions: number): Float32Array | undefined {
  if (typeof text !== 'string' || !Number.isSafeInteger(dimensions) || dimensions < 1) return undefined
  if (NodeBuffer && LITTLE_ENDIAN && text.length === base64Length(dimensions * 4)) {
    // Node on a little-endian CPU (nearly all): the base64 decoded straight into the vector's bytes, then checked.
    const out = new Float32Array(dimensions)
    // Buffer.from(ArrayBuffer) is a view over the same memory, not a copy.
    const written = NodeBuffer.from(out.buffer).write(text, 'base64')
    if (written === dimensions * 4 && allFinite(out)) return out
  }
  const bytes = base64ToBytes(text)
  if (!bytes || bytes.length !== dimensions * 4) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const out = new Float32Array(dimensions)
  for (let i = 0; i < dimensions; i++) {
    const value = view.getFloat32(i * 4, true)
    if (!Number.isFinite(value)) return undefined
    out[i] = value
  }
  return out
}

/**
 * A native exact scan of unit vectors by dot product, for large indexes (see
 * {@link createVectorIndex}); `src/memory/vector-kernel.ts` binds usearch's `exactSearch`.
 */
export interface ExactVectorKernel {
  /**
   * The `k` rows (1 <= k <= `count`) of `matrix` (`count` rows of `dimensions` float32 values,
   * row-major) with the greatest dot product with `query`, best first: their row numbers and dot
   * products.
   */
  topK(matrix: Float32Array, count: number, dimensions: number, query: Float32Array, k: number): { rows: ArrayLike<number | bigint>; scores: ArrayLike<number> }
}

/** Options of {@link createVectorIndex}. */
export interface VectorIndexOptions {
  /**
   * Unit vectors the index starts with, taken as they are (no copy, no rescale; the index never
   * writes into `data`): row `n`, the `dimensions` values of `data` from `n × dimensions`, is the
   * vector of `ids[n]`, an `undefined` id an empty row. The rows come first in insertion order.
   * Vectors set later go to an array of the index's own; replacing or deleting a base row's
   * vector empties that row, and a compaction copies the rows kept into the index's own array.
   * A row not of unit length (beyond float32 rounding) is copied and scaled into the index's own
   * array instead (the check reads each row once). The caller keeps the values unchanged.
   */
  base?: { ids: ReadonlyArray<string | undefined>; data: Float32Array }
  /** A native scan used from {@link VectorIndexOptions.kernelFrom} vectors on; without it, the scan is in JavaScript. */
  kernel?: ExactVectorKernel
  /** Fewest vectors for which {@link VectorIndexOptions.kernel} scans; default {@link KERNEL_MIN_VECTORS}. */
  kernelFrom?: number
}

/**
 * Fewest vectors from which an index hands its scan to an {@link ExactVectorKernel}: below it the
 * JavaScript scan costs under a millisecond (measured at 512 dimensions: about 1 ms at 1,000
 * vectors, against 0.8 ms for usearch at 10,000), so the native call would gain nothing.
 */
export const KERNEL_MIN_VECTORS = 2_000

/** Candidates asked of the kernel beyond `k`: for an `accept` function that rejects some, and for ties at the cut. */
const KERNEL_SLACK = 64

/**
 * A new empty {@link VectorIndex} of `dimensions`-long vectors. With `options.kernel`, searches of
 * an index holding at least `kernelFrom` vectors ask the kernel for the best `k` + 64 and keep the
 * best `k` accepted ones (equal scores: the vector added first); when fewer than `k` are accepted
 * among them, the JavaScript scan runs instead, so the result is always the exact top `k` of the
 * accepted vectors. Similarities from the kernel equal the scan's up to float rounding.
 *
 * @throws RangeError for a length that is not a positive integer.
 */
export function createVectorIndex(dimensions: number, options: VectorIndexOptions = {}): VectorIndex {
  if (!Number.isSafeInteger(dimensions) || dimensions < 1) throw new RangeError(`a vector index needs a positive whole number of dimensions, got ${dimensions}`)
  const kernel = options.kernel
  const kernelFrom = Math.max(1, options.kernelFrom ?? KERNEL_MIN_VECTORS)
  // Slots below `baseRows` are rows of `base` (read only); slot `s` from it is row `s - baseRows` of `data`, the index's own.
  let base = options.base?.data
  let baseRows = options.base ? options.base.ids.length : 0
  if (base && base.length < baseRows * dimensions) throw new RangeError(`a base of ${baseRows} vectors of ${dimensions} dimensions needs ${baseRows * dimensions} values, got ${base.length}`)
  let data = new Float32Array(dimensions * 64)
  // `undefined`: an empty slot left by a delete (its vector zeros in `data`; as it was in `base`), until the next compaction.
  let ids: Array<string | undefined> = options.base ? [...options.base.ids] : []
  let empty = 0
  const slots = new Map<string, number>()
  const rescaled: string[] = []
  for (let slot = 0; slot < ids.length; slot++) {
    const id = ids[slot]
    if (id === undefined || slots.has(id)) {
      ids[slot] = undefined
      empty++
    }
    else {
      slots.set(id, slot)
      if (!isUnit(base!, slot * dimensions, dimensions)) rescaled.push(id)
    }
  }

  // Copies the kept vectors, in order, into an array of the index's own: insertion order, and so ties, stay as they were.
  function compact(): void {
    const kept: string[] = []
    const into = new Float32Array(Math.max(64, ids.length - empty) * dimensions)
    for (let slot = 0; slot < ids.length; slot++) {
      const id = ids[slot]
      if (id === undefined) continue
      const [from, at] = rowOf(slot)
      into.set(from.subarray(at, at + dimensions), kept.length * dimensions)
      slots.set(id, kept.length)
      kept.push(id)
    }
    data = into
    base = undefined
    baseRows = 0
    ids = kept
    empty = 0
  }

  /** The array holding slot `slot`'s vector and its offset there. */
  function rowOf(slot: number): [Float32Array, number] {
    return slot < baseRows ? [base!, slot * dimensions] : [data, (slot - baseRows) * dimensions]
  }

  function emptySlot(slot: number): void {
    ids[slot] = undefined
    empty++
    if (empty > 32 && empty * 2 > ids.length) compact()
  }

  const index: VectorIndex = {
    dimensions,
    get size() { return ids.length - empty },
    has: id => slots.has(id),
    set(id, vector) {
      if (vector.length !== dimensions) throw new RangeError(`expected a vector of ${dimensions} dimensions, got ${vector.length}`)
      let slot = slots.get(id)
      if (slot !== undefined && slot < baseRows) {
        // A base row is never written: the id moves to a slot of the index's own.
        slots.delete(id)
        emptySlot(slot)
        slot = undefined
      }
      if (slot === undefined) {
        slot = ids.length
        if ((slot - baseRows + 1) * dimensions > data.length) {
          const grown = new Float32Array(data.length * 2)
          grown.set(data)
          data = grown
        }
        ids.push(id)
        slots.set(id, slot)
      }
      normalizeInto(vector, data, (slot - baseRows) * dimensions)
    },
    delete(id) {
      const slot = slots.get(id)
      if (slot === undefined) return false
      slots.delete(id)
      if (slot >= baseRows) data.fill(0, (slot - baseRows) * dimensions, (slot - baseRows + 1) * dimensions)
      if (slot === ids.length - 1 && slot >= baseRows) ids.pop()
      else emptySlot(slot)
      return true
    },
    search(query, k, accept) {
      if (query.length !== dimensions) throw new RangeError(`expected a query vector of ${dimensions} dimensions, got ${query.length}`)
      const q = normalizeVector(query)
      const wanted = Math.max(0, Math.floor(k))
      const count = ids.length
      if (kernel && count >= kernelFrom && wanted > 0) {
        const found = kernelSearch(kernel, count, q, wanted, accept)
        if (found) return found
      }
      const heap = new TopK(wanted)
      // The base rows, then the index's own.
      for (const [matrix, from, to] of [[base, 0, Math.min(baseRows, count)], [data, baseRows, count]] as const) {
        if (!matrix) continue
        for (let slot = from; slot < to; slot++) {
          const dot = dotAt(q, matrix, (slot - from) * dimensions, dimensions)
          if (!heap.admits(dot)) continue
          const id = ids[slot]
          if (id === undefined || (accept && !accept(id))) continue
          heap.push(dot, slot)
        }
      }
      return heap.sorted().map(({ score, slot }) => ({ id: ids[slot]!, similarity: score }))
    },
  }
  // Base rows not of unit length: their ids move to slots of the index's own, scaled there.
  for (const id of rescaled) {
    const [from, at] = rowOf(slots.get(id)!)
    index.set(id, from.slice(at, at + dimensions))
  }
  return index

  // The exact top `k` of the accepted vectors from the kernel (each array of vectors scanned apart), or undefined when its candidates of an array hold fewer than k accepted ones while it has more rows.
  function kernelSearch(native: ExactVectorKernel, count: number, q: Float32Array, k: number, accept?: (id: string) => boolean): VectorMatch[] | undefined {
    const kept: Array<{ slot: number; score: number }> = []
    for (const [matrix, from, to] of [[base, 0, Math.min(baseRows, count)], [data, baseRows, count]] as const) {
      const rowCount = to - from
      if (!matrix || rowCount <= 0) continue
      // Slack beyond k also for ties at the cut: among equal scores the earlier vector wins, as in the scan.
      const asked = Math.min(rowCount, k + KERNEL_SLACK)
      const { rows, scores } = native.topK(matrix.subarray(0, rowCount * dimensions), rowCount, dimensions, q, asked)
      let accepted = 0
      for (let i = 0; i < rows.length; i++) {
        const slot = from + Number(rows[i])
        const id = ids[slot]
        if (id === undefined || (accept && !accept(id))) continue
        kept.push({ slot, score: scores[i]! })
        accepted++
      }
      // Every accepted vector of this array outside the candidates ranks below k accepted ones, or there is none.
      if (accepted < k && asked < rowCount) return undefined
    }
    return kept.sort((a, b) => b.score - a.score || a.slot - b.slot).slice(0, k).map(({ slot, score }) => ({ id: ids[slot]!, similarity: score }))
  }
}

/** Dot product of `q` and the `length` values of `matrix` from `base`, four lanes at a time (about 3x a plain loop on V8). */
function dotAt(q: Float32Array, matrix: Float32Array, base: number, length: number): number {
  let a = 0, b = 0, c = 0, d = 0
  let i = 0
  for (; i + 3 < length; i += 4) {
    a += q[i]! * matrix[base + i]!
    b += q[i + 1]! * matrix[base + i + 1]!
    c += q[i + 2]! * matrix[base + i + 2]!
    d += q[i + 3]! * matrix[base + i + 3]!
  }
  for (; i < length; i++) a += q[i]! * matrix[base + i]!
  return a + b + c + d
}

/** A bounded min-heap of the `k` best (score, slot) pairs; lower slot wins a tie. */
class TopK {
  private readonly scores: number[] = []
  private readonly slots: number[] = []
  constructor(private readonly k: number) {}

  /** Whether a candidate of `score` would enter the heap (a tie with the floor does not: earlier slots win). */
  admits(score: number): boolean {
    return this.k > 0 && (this.scores.length < this.k || score > this.scores[0]!)
  }

  push(score: number, slot: number): void {
    if (this.scores.length < this.k) {
      this.scores.push(score)
      this.slots.push(slot)
      this.up(this.scores.length - 1)
      return
    }
    this.scores[0] = score
    this.slots[0] = slot
    this.down(0)
  }

  sorted(): Array<{ score: number; slot: number }> {
    return this.scores.map((score, i) => ({ score, slot: this.slots[i]! })).sort((a, b) => b.score - a.score || a.slot - b.slot)
  }

  private less(a: number, b: number): boolean {
    // The heap's top is the worst kept: the lowest score, and among equal scores the latest slot.
    return this.scores[a]! < this.scores[b]! || (this.scores[a] === this.scores[b] && this.slots[a]! > this.slots[b]!)
  }

  private swap(a: number, b: number): void {
    [this.scores[a], this.scores[b]] = [this.scores[b]!, this.scores[a]!];
    [this.slots[a], this.slots[b]] = [this.slots[b]!, this.slots[a]!]
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.less(i, parent)) break
      this.swap(i, parent)
      i = parent
    }
  }

  private down(i: number): void {
    const n = this.scores.length
    for (;;) {
      const left = 2 * i + 1
      const right = left + 1
      let smallest = i
      if (left < n && this.less(left, smallest)) smallest = left
      if (right < n && this.less(right, smallest)) smallest = right
      if (smallest === i) break
      this.swap(i, smallest)
      i = smallest
    }
  }
}
