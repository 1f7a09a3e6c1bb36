/**
 * Durable record vectors: where the vectors of a store live, and the in-process cache
 * that embeds what is missing, keeps what was loaded, and serves per-partition exact search.
 *
 * A record's content never changes after it is written (a change is a new record that
 * supersedes it), so one vector per record id and embedding model stays valid for the record's
 * life. Vectors are stored next to the records ({@link MemoryVectorStore}): the log-backed stores
 * keep them in a sidecar of the log in the workspace (`<log key>.vectors`, one JSON line per
 * vector, see docs/log-format.md "Vector sidecar"); a database store keeps them in a table or a
 * column behind the same three methods, and may add `fetch` (the cache then loads the vectors of
 * the records it searches, by id, and drops those of scopes that leave memory: the sidecar,
 * vector-sidecar.ts, and the Postgres store) or `missing` and `nearest` (the store scores
 * them itself and none are held here: the Postgres store with `scoreInDatabase`). Every entry
 * names its model, so a changed model re-embeds and never mixes vectors of two models.
 */
import { embed, embedMany } from 'ai'
import type { EmbeddingModel } from 'ai'
import type { MemoryRecord, MemoryVectorEntry, MemoryVectorStore } from './types.ts'
import { createVectorIndex, normalizeVector, type ExactVectorKernel, type VectorIndex } from '../search/vectors.ts'
import { loadVectorKernel } from './vector-kernel.ts'

export type { MemoryVectorEntry, MemoryVectorRead, MemoryVectorStore } from './types.ts'
export { readVectorLines, VECTOR_READ_CHUNK_BYTES, workspaceVectorStore } from './vector-sidecar.ts'

/**
 * The id recorded with each vector: `provider/modelId` of an AI SDK model object, or the model
 * id string itself (gateway ids such as `"openai/text-embedding-3-small"`).
 */
export function embeddingModelId(model: EmbeddingModel): string {
  if (typeof model === 'string') return model
  const { provider, modelId } = model as { provider?: unknown; modelId?: unknown }
  return `${typeof provider === 'string' ? provider : 'unknown'}/${typeof modelId === 'string' ? modelId : 'unknown'}`
}

/** A vector store in process memory (for adapters that bring none): lost with the process. */
export function memoryVectorStore(): MemoryVectorStore {
  let entries: MemoryVectorEntry[] = []
  let generation = 0
  return {
    async read(cursor) {
      const from = cursor as { generation: number; count: number } | undefined
      const reset = from !== undefined && from.generation !== generation
      const start = from === undefined || reset ? 0 : from.count
      return { entries: entries.slice(start), cursor: { generation, count: entries.length }, reset }
    },
    async write(added) {
      entries.push(...added)
    },
    async remove(ids) {
      const gone = new Set(ids)
      if (!entries.some(entry => gone.has(entry.id))) return
      entries = entries.filter(entry => !gone.has(entry.id))
      generation++
    },
  }
}

/** Most characters of a record sent to the embedder (title, content and tags joined). */
export const EMBED_INPUT_CHARS = 8192

/** Most vector entries handed to one `MemoryVectorStore.write`. */
const WRITE_SLICE = 1024

/** Query vectors kept per embedding model (least recently used dropped first). */
export const QUERY_CACHE_SIZE = 512

/** The text embedded for a record: title, content and tags, cut at {@link EMBED_INPUT_CHARS} on a code point boundary. */
export function embeddingText(record: Pick<MemoryRecord, 'title' | 'content' | 'tags'>): string {
  const text = [record.title, record.content, record.tags.length > 0 ? record.tags.join(', ') : undefined].filter(Boolean).join('\n')
  return Array.from(text).slice(0, EMBED_INPUT_CHARS).join('')
}

/** Counters of one {@link RecordVectors} (for tests and the benchmark). */
export interface RecordVectorStats {
  /** Record texts sent to the embedder. */
  embeddedRecords: number
  /** Query texts sent to the embedder (cache misses). */
  embeddedQueries: number
  /** Vectors taken in from the store. */
  loaded: number
}

/**
 * The vectors of one store and embedding model in this process: loaded from its
 * {@link MemoryVectorStore} on first use (and then only what other writers added), missing ones
 * embedded in batches (`embedMany`, chunked by the model's `maxEmbeddingsPerCall`) and written
 * back, one exact {@link VectorIndex} per partition (scanned by usearch from 2,000 vectors when it is
 * installed, `src/memory/vector-kernel.ts`).
 */
export interface RecordVectors {
  readonly model: string
  readonly stats: RecordVectorStats
  /**
   * Makes sure every record of `records` has a vector: reads what the store gained, embeds the
   * rest in one batch and stores them. Concurrent calls in one tick share one embedder call.
   * `partition`: the partition key of the scope the records are of, when they are of one (passed
   * to the store's `fetch` as its group).
   *
   * @throws what the embedder throws (nothing is stored then; the next call tries again).
   */
  ensure(records: readonly MemoryRecord[], abortSignal?: AbortSignal, partition?: string): Promise<void>
  /**
   * Counts the times the cache started over because the store was replaced (its `read` answered
   * `reset`): every partition index was dropped then, so whoever placed records in one places
   * them again.
   */
  readonly generation: number
  /** The index of one partition, with the vectors of `records` added (call {@link ensure} first); `undefined` before any vector is known, and always for a store that scores vectors itself. */
  index(partition: string, records: Iterable<MemoryRecord>): VectorIndex | undefined
  /** Takes these ids out of the partition's index (records no longer active); their vectors stay held unless the store reads vectors by id (`fetch`). */
  discard(partition: string, ids: Iterable<string>): void
  /** Drops the partition's index; the next {@link index} call starts it empty. */
  dropIndex(partition: string): void
  /**
   * Drops the partition's index and, when the store reads vectors by id (`fetch`: the sidecar,
   * the database stores), the vectors of `ids` (the partition's records) held in process memory:
   * a scope that left memory costs nothing here, and its next search reads them again (by id,
   * embedding nothing). A store without `fetch` keeps them (they could not be read back alone).
   */
  release(partition: string, ids: Iterable<string>): void
  /** Vectors held in process memory (for tests and the benchmark). */
  heldVectors(): number
  /**
   * At most `limit` records of the partition by cosine similarity to the unit vector `query`,
   * highest first, ties to the earlier record, among the ids `candidates.accept` takes: the
   * partition's index (holding what {@link index} placed in it), or the store's own `nearest`
   * over `candidates.ids()` when it scores vectors where it keeps them.
   */
  search(partition: string, query: Float32Array, limit: number, candidates: { accept: (id: string) => boolean; ids: () => readonly string[] }): Promise<Array<{ id: string; similarity: number }>>
  /** The unit query vector of `text` (cached, at most {@link QUERY_CACHE_SIZE} texts). */
  query(text: string, abortSignal?: AbortSignal): Promise<Float32Array>
  /** Drops ids from this cache (after the store removed them). */
  forget(ids: readonly string[]): void
  /** Partitions whose vector index is held now. */
  indexedPartitions(): number
}

const caches = new WeakMap<MemoryVectorStore, Map<string, RecordVectors>>()

/** The {@link RecordVectors} of `store` and `model`, one per pair in this process. */
export function recordVectors(store: MemoryVectorStore, model: EmbeddingModel): RecordVectors {
  let byModel = caches.get(store)
  if (!byModel) caches.set(store, byModel = new Map())
  const id = embeddingModelId(model)
  let vectors = byModel.get(id)
  if (!vectors) byModel.set(id, vectors = createRecordVectors(store, model, id))
  return vectors
}

/** The {@link RecordVectors} of `store` this process holds, one per embedding model. */
export function cachedRecordVectors(store: MemoryVectorStore): Iterable<RecordVectors> {
  return caches.get(store)?.values() ?? []
}

/**
 * Removes the vectors of `ids` from `store` (every model) and from this process's caches of it:
 * the erasure path (hard delete, scope erase, retention expiry).
 */
export async function eraseRecordVectors(store: MemoryVectorStore, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return
  await store.remove(ids)
  for (const vectors of caches.get(store)?.values() ?? []) vectors.forget(ids)
}

/** Fewest vectors of one block (vector-block.ts) that a new partition index takes as they lie in it instead of copying them. */
const BLOCK_ROWS_MIN = 1024

/**
 * The rows of one stored block that hold the vectors of `records`, for a new index to take
 * without a copy: the vectors a store's `fetch` read from one block are views of one
 * `Float32Array` (vector-block.ts), each `dimensions` values at a multiple of them. The rows from
 * the first to the last such vector, each named by its record's id (`undefined`: a row of no
 * record here); `undefined` when fewer than {@link BLOCK_ROWS_MIN} records have one, or the rows
 * would be more than twice them (a scope whose records are a small part of the block).
 */
function blockRows(records: readonly MemoryRecord[], byId: ReadonlyMap<string, Float32Array>, dimensions: number): { ids: Array<string | undefined>; data: Float32Array } | undefined {
  if (records.length < BLOCK_ROWS_MIN) return undefined
  const rowBytes = dimensions * 4
  let buffer: ArrayBufferLike | undefined
  const offsets = new Float64Array(records.length).fill(-1)
  let first = Infinity
  let last = -Infinity
  let count = 0
  for (let n = 0; n < records.length; n++) {
    const vector = byId.get(records[n]!.id)
    if (!vector) continue
    // A view into a larger array: a block's (the first such vector names it).
    if (!buffer && vector.buffer.byteLength >= BLOCK_ROWS_MIN * rowBytes) buffer = vector.buffer
    if (vector.buffer !== buffer) continue
    const offset = vector.byteOffset
    offsets[n] = offset
    if (offset < first) first = offset
    if (offset > last) last = offset
    count++
  }
  const rows = (last - first) / rowBytes + 1
  if (!buffer || count < BLOCK_ROWS_MIN || rows > 2 * count) return undefined
  const ids = new Array<string | undefined>(rows).fill(undefined)
  for (let n = 0; n < records.length; n++) {
    if (offsets[n]! < 0) continue
    const offset = offsets[n]! - first
    // Not on a row boundary: not vectors of one block.
    if (offset % rowBytes !== 0) return undefined
    ids[offset / rowBytes] = records[n]!.id
  }
  return { ids, data: new Float32Array(buffer, first, rows * dimensions) }
}

function createRecordVectors(store: MemoryVectorStore, model: EmbeddingModel, id: string): RecordVectors {
  // A store that answers `missing` and `nearest` keeps and scores the vectors itself: none are held here.
  const native = typeof store.missing === 'function' && typeof store.nearest === 'function'
  const byId = new Map<string, Float32Array>()
  const indexes = new Map<string, VectorIndex>()
  const queries = new Map<string, Float32Array>()
  const stats: RecordVectorStats = { embeddedRecords: 0, embeddedQueries: 0, loaded: 0 }
  let cursor: unknown
  let generation = 0
  let dimensions: number | undefined
  let pending: { records: Map<string, MemoryRecord>; done: Promise<void> } | undefined
  // The native scan (usearch) when installed: loaded before the first index is made.
  let kernel: ExactVectorKernel | undefined
  let kernelLoaded = false

  function take(entries: readonly MemoryVectorEntry[]): void {
    for (const entry of entries) {
      if (entry.model !== id) continue
      // The first vector seen fixes the length: a model whose output changed length is a new model id in practice.
      dimensions ??= entry.vector.length
      if (entry.vector.length !== dimensions) continue
      // An index holds only ids of byId (index() takes its vectors from it; every delete from byId deletes from the indexes): a new id is in none.
      const held = byId.has(entry.id)
      byId.set(entry.id, entry.vector)
      stats.loaded++
      if (held && indexes.size > 0) for (const index of indexes.values()) if (index.has(entry.id)) index.set(entry.id, entry.vector)
    }
  }

  async function refresh(): Promise<void> {
    const read = await store.read(cursor)
    if (read.reset) {
      byId.clear()
      indexes.clear()
      generation++
    }
    cursor = read.cursor
    take(read.entries)
  }

  async function embedBatch(records: readonly MemoryRecord[], abortSignal?: AbortSignal): Promise<void> {
    const { embeddings } = await embedMany({ model, values: records.map(embeddingText), maxRetries: 0, ...(abortSignal ? { abortSignal } : {}) })
    stats.embeddedRecords += records.length
    const entries = records.map((record, i) => ({ id: record.id, model: id, vector: normalizeVector(embeddings[i]!) }))
    const length = entries[0]?.vector.length
    if (length !== undefined) dimensions ??= length
    const fitting = entries.filter(entry => entry.vector.length === dimensions)
    if (!native) for (const entry of fitting) byId.set(entry.id, entry.vector)
    // In slices: a scope embedded whole (an import of 100,000 records) never builds one huge write.
    for (let at = 0; at < fitting.length; at += WRITE_SLICE) await store.write(fitting.slice(at, at + WRITE_SLICE))
  }

  async function absent(records: readonly MemoryRecord[], partition: string | undefined): Promise<MemoryRecord[]> {
    if (native) {
      const ids = new Set(await store.missing!(id, records.map(record => record.id)))
      return records.filter(record => ids.has(record.id))
    }
    if (records.every(record => byId.has(record.id))) return []
    if (store.fetch) take(await store.fetch(id, records.filter(record => !byId.has(record.id)).map(record => record.id), partition))
    else await refresh()
    return records.filter(record => !byId.has(record.id))
  }

  return {
    model: id,
    stats,
    get generation() { return generation },
    async ensure(records, abortSignal, partition) {
      if (!kernelLoaded) {
        kernel = await loadVectorKernel()
        kernelLoaded = true
      }
      const missing = await absent(records, partition)
      if (missing.length === 0) return
      if (!pending) {
        const batch = new Map<string, MemoryRecord>()
        const done = new Promise<void>((resolve, reject) => {
          // A macrotask later: every write of this turn of the event loop joins the batch.
          setTimeout(() => {
            pending = undefined
            embedBatch([...batch.values()], abortSignal).then(resolve, reject)
          }, 0)
        })
        pending = { records: batch, done }
      }
      for (const record of missing) pending.records.set(record.id, record)
      await pending.done
    },
    async search(partition, query, limit, candidates) {
      if (native) return store.nearest!(id, candidates.ids().filter(candidates.accept), query, limit)
      const index = indexes.get(partition)
      if (!index) return []
      return index.search(query, limit, candidates.accept)
    },
    discard(partition, ids) {
      const index = indexes.get(partition)
      for (const gone of ids) {
        index?.delete(gone)
        // A record leaves the active set for good (superseded, deleted, erased): a store that reads vectors by id need not keep its vector.
        if (store.fetch) byId.delete(gone)
      }
    },
    dropIndex(partition) {
      indexes.delete(partition)
    },
    release(partition, ids) {
      indexes.delete(partition)
      if (store.fetch) for (const gone of ids) byId.delete(gone)
    },
    heldVectors: () => byId.size,
    index(partition, records) {
      if (native || dimensions === undefined) return undefined
      let index = indexes.get(partition)
      if (!index) {
        const list = Array.isArray(records) ? records as readonly MemoryRecord[] : [...records]
        records = list
        const base = blockRows(list, byId, dimensions)
        indexes.set(partition, index = createVectorIndex(dimensions, { ...(kernel ? { kernel } : {}), ...(base ? { base } : {}) }))
      }
      for (const record of records) {
        if (index.has(record.id)) continue
        const vector = byId.get(record.id)
        if (vector) index.set(record.id, vector)
      }
      return index
    },
    async query(text, abortSignal) {
      const known = queries.get(text)
      if (known) {
        queries.delete(text)
        queries.set(text, known)
        return known
      }
      const { embedding } = await embed({ model, value: text, maxRetries: 0, ...(abortSignal ? { abortSignal } : {}) })
      stats.embeddedQueries++
      const vector = normalizeVector(embedding)
      queries.set(text, vector)
      if (queries.size > QUERY_CACHE_SIZE) queries.delete(queries.keys().next().value!)
      return vector
    },
    forget(ids) {
      for (const gone of ids) {
        byId.delete(gone)
        for (const index of indexes.values()) index.delete(gone)
      }
    },
    indexedPartitions: () => indexes.size,
  }
}
