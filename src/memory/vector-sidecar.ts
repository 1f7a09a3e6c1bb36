/**
 * The vector sidecar of a log-backed store: `<log key>.vectors` in the workspace, one canonical
 * JSON line per vector (docs/log-format.md "Vector sidecar"), read and rewritten a chunk at a
 * time so that no step holds the whole value as one string (a sidecar of 100,000 vectors of
 * 1,024 dimensions passes V8's longest string, about 2^29 characters).
 *
 * Three ways in: `read` (every entry since a cursor), `fetch` (the entries of some record ids,
 * by ranged reads at the byte offsets a line index of the sidecar keeps, stored beside it for the
 * next cold process by vector-line-index.ts: the vectors of one scope without decoding every other
 * scope's; those of a large scope from the binary block vector-block.ts keeps beside it for that
 * scope and model, by one read), and `remove` (the erasure rewrite: kept lines streamed
 * into `<key>.rewrite`, swapped in by `Workspace.replaceWith`).
 */
import type { Workspace } from '../workspace/types.ts'
import type { MemoryVectorEntry, MemoryVectorStore } from './types.ts'
import { decodeVector, encodeVector } from '../search/vectors.ts'
import { LINE_INDEX_SAVE_BYTES, lineIndexKeyOf, loadLineIndex, saveLineIndex, type LineIndex } from './vector-line-index.ts'
import { isVectorBlockKey, loadVectorBlockData, loadVectorBlockHead, removeUnfitBlocks, saveVectorBlock, VECTOR_BLOCK_MIN_VECTORS, vectorBlockKeyOf } from './vector-block.ts'

const decoder = new TextDecoder()
const workspaceStores = new WeakMap<Workspace, Map<string, MemoryVectorStore>>()

/** Bytes of the sidecar decoded at a time: far under V8's longest string (about 2^29 characters), which a whole sidecar of 100,000 vectors of 1,024 dimensions passes. */
export const VECTOR_READ_CHUNK_BYTES = 8 * 1024 * 1024

/** Bytes between two wanted lines read through rather than read apart (one ranged read instead of two). */
const FETCH_GAP_BYTES = 16 * 1024

/** The key the erasure rewrite of sidecar `key` builds its replacement in (removed at the start of every rewrite: a crash's leftover never outlives the next erasure). */
export function rewriteKeyOf(key: string): string {
  return `${key}.rewrite`
}

/** What one fetch wants of the scan that brings the line index up to date: the entries of `ids` of `model` whose last line it reads (`undefined`: that line is no vector), and where it started. */
interface Want {
  model: string
  ids: ReadonlySet<string>
  found: Map<string, MemoryVectorEntry | undefined>
  from: number
}

/**
 * The vector sidecar at `key` of `workspace` (one store object per workspace and key, so that
 * every adapter over the same log shares its cache and its line index): one canonical JSON line
 * per entry, `{"dims":512,"id":"mem_…","model":"provider/model","vector":"<base64 float32 LE>"}`,
 * appended (`workspace.append`).
 * - `read(cursor)` takes only the bytes appended since the cursor; a replaced value is read again
 *   whole (`reset`).
 * - `fetch(model, ids)` reads the lines of those ids only: the first call scans the sidecar once
 *   for the byte range of each line (ids and models, no vector decoded), later calls scan only
 *   what was appended since; a replaced value (another identity, a shorter value, a line not
 *   where the index says) is scanned again.
 *   {@link VECTOR_BLOCK_MIN_VECTORS} or more of them read from lines are stored as the block of
 *   `group` (the scope's partition) and model, read at the next cold fetch of that group.
 * - `remove(ids)` streams the kept lines into {@link rewriteKeyOf}`(key)` and swaps it in with
 *   `workspace.replaceWith` only while no other writer appended (else it starts again).
 * Lines that do not parse (a torn last line, an edited line) are skipped: the record is embedded
 * again.
 */
export function workspaceVectorStore(workspace: Workspace, key: string): MemoryVectorStore {
  let byKey = workspaceStores.get(workspace)
  if (!byKey) workspaceStores.set(workspace, byKey = new Map())
  const known = byKey.get(key)
  if (known) return known
  let index: LineIndex | undefined
  let indexing: Promise<LineIndex | undefined> | undefined
  // The `end` of the line index on storage as this process last read or wrote it (0: none).
  let storedEnd = 0
  // The sidecar's size when the line index was last brought up to date (a block is stored only while it still has it).
  let indexedSize = 0

  async function upToDate(stale: boolean, want: Want | undefined): Promise<LineIndex | undefined> {
    const stat = await workspace.stat(key)
    if (!stat) return index = undefined
    let current = index
    if (!current && !stale) {
      // A cold start: the line index on storage, when valid for this sidecar, spares the scan of what it covers.
      current = await loadLineIndex(workspace, key, stat)
      storedEnd = current?.end ?? 0
      // Without a valid line index the scan reads every line, and no block is asked: those that no longer fit this sidecar are removed here (they may name erased ids).
      if (!current) await removeUnfitBlocks(workspace, key, stat)
    }
    if (stale || !current || stat.id !== current.identity || stat.size < current.end || !(await endsALine(workspace, key, current, stat.id))) {
      current = { identity: stat.id, end: 0, lines: new Map(), starts: [], ends: [] }
      storedEnd = 0
    }
    if (want) want.from = current.end
    indexedSize = stat.size
    if (current.end < stat.size) {
      const { lines, starts, ends } = current
      let model = ''
      let ofModel: Map<string, number> | undefined
      current.end = await forEachLineChunk(workspace, key, current.end, stat.size, VECTOR_READ_CHUNK_BYTES, (chunk, at) => {
        const bytes = asBuffer(chunk)
        for (let start = 0; start < bytes.length;) {
          const end = bytes.indexOf(10, start) + 1
          // When the fetch wants most of what is left (a scope as large as the sidecar), every line is decoded and its fields read from the entry.
          const decodeAll = want !== undefined && want.ids.size * 2 >= (stat.size - at - start) / (end - start)
          const entry = decodeAll ? parseEntry(bytes.toString('utf8', start, end - 1)) : undefined
          // A line that is no vector still names its id when its fields before the vector read: it stands for that id, as a later line does.
          const found = entry ?? lineKey(bytes, start, end - 1, model)
          if (found !== undefined) {
            if (found.model !== model || !ofModel) {
              model = found.model
              ofModel = lines.get(model)
              if (!ofModel) lines.set(model, ofModel = new Map())
            }
            ofModel.set(found.id, starts.length)
            starts.push(at + start)
            ends.push(at + end - 1)
            // A wanted line is decoded in this pass: a cold first fetch reads the sidecar once.
            if (want && want.model === model && want.ids.has(found.id)) want.found.set(found.id, entry ?? (decodeAll ? undefined : parseEntry(bytes.toString('utf8', start, end - 1))))
          }
          start = end
        }
      })
      if (workspace.writable && current.end - storedEnd >= LINE_INDEX_SAVE_BYTES) {
        // Stored for the next cold process; a failed write only means that process scans.
        if (await saveLineIndex(workspace, key, current, stat.size).catch(() => false)) storedEnd = current.end
      }
    }
    return index = current
  }

  /** One scan at a time: concurrent fetches share it. */
  function indexed(stale: boolean, want?: Want): Promise<LineIndex | undefined> {
    const run = (indexing ?? Promise.resolve(undefined)).catch(() => undefined).then(() => upToDate(stale, want))
    indexing = run
    return run
  }

  /** The entries of `ids`: decoded by the scan that brings the index up to date where their last line is new to it, else by ranged reads at the offsets the index holds. */
  async function fetchOnce(model: string, ids: readonly string[], group: string | undefined, stale: boolean): Promise<{ entries: MemoryVectorEntry[]; moved: boolean }> {
    const want: Want = { model, ids: new Set(ids), found: new Map(), from: Infinity }
    const lineIndex = await indexed(stale, want)
    if (!lineIndex) return { entries: [], moved: false }
    const entries: MemoryVectorEntry[] = []
    for (const entry of want.found.values()) if (entry) entries.push(entry)
    const ofModel = lineIndex.lines.get(model)
    // Ids whose last line lies before the part this scan read (`want.from`): read where the index says.
    const older = ids.filter(id => !want.found.has(id) && ofModel?.has(id) && lineIndex.starts[ofModel.get(id)!]! < want.from)
    const blockKey = await vectorBlockKeyOf(key, model, group)
    if (older.length === 0) return { entries: await withBlock(lineIndex, model, blockKey, entries, []), moved: false }
    // Many of them: from the group's stored block when it holds most of it (one read), the rest by their lines.
    const blocked = older.length >= VECTOR_BLOCK_MIN_VECTORS ? await fromBlock(lineIndex, model, blockKey, older) : undefined
    const read = await fetchFrom(lineIndex, model, blocked ? blocked.rest : older)
    if (read.moved) return read
    return { entries: await withBlock(lineIndex, model, blockKey, [...entries, ...read.entries], blocked?.entries ?? []), moved: false }
  }

  /** The entries of `ids` (whose last line lies before the line index's end) that the block stored at `blockKey` holds for them, and the ids left to read by their lines; `undefined` when there is no valid block of `model` there or it is not mostly these ids (its body is read whole). */
  async function fromBlock(lineIndex: LineIndex, model: string, blockKey: string, ids: readonly string[]): Promise<{ entries: MemoryVectorEntry[]; rest: string[] } | undefined> {
    const stat = await workspace.stat(key)
    if (!stat || stat.id !== lineIndex.identity) return undefined
    const head = await loadVectorBlockHead(workspace, key, blockKey, stat)
    const ofModel = lineIndex.lines.get(model)
    if (!head || head.model !== model || !ofModel) return undefined
    const slots = new Map<string, number>()
    for (let n = 0; n < head.ids.length; n++) slots.set(head.ids[n]!, n)
    const covered: string[] = []
    const rest: string[] = []
    // A vector of the block stands for its id only while the id's last line lies before the block's end.
    for (const id of ids) (slots.has(id) && lineIndex.starts[ofModel.get(id)!]! < head.end ? covered : rest).push(id)
    if (covered.length * 2 < head.ids.length) return undefined
    const data = await loadVectorBlockData(workspace, head)
    if (!data) return undefined
    const { dims } = head
    return { entries: covered.map((id) => { const n = slots.get(id)!; return { id, model, vector: data.subarray(n * dims, (n + 1) * dims) } }), rest }
  }

  /** `fromLines` and `fromBlock` as one list; `fromLines` of {@link VECTOR_BLOCK_MIN_VECTORS} or more are stored as the block at `blockKey` first (for the next cold process; a failed write only means it reads the lines). */
  async function withBlock(lineIndex: LineIndex, model: string, blockKey: string, fromLines: MemoryVectorEntry[], fromBlock: MemoryVectorEntry[]): Promise<MemoryVectorEntry[]> {
    const entries = fromBlock.length === 0 ? fromLines : [...fromBlock, ...fromLines]
    if (fromLines.length < VECTOR_BLOCK_MIN_VECTORS || !workspace.writable || lineIndex !== index) return entries
    const dims = entries[0]!.vector.length
    const kept = entries.filter(entry => entry.vector.length === dims)
    const data = new Float32Array(kept.length * dims)
    kept.forEach((entry, n) => data.set(entry.vector, n * dims))
    await saveVectorBlock(workspace, key, blockKey, { identity: lineIndex.identity, end: lineIndex.end, model, dims, ids: kept.map(entry => entry.id), data }, indexedSize).catch(() => false)
    return entries
  }

  async function fetchFrom(lineIndex: LineIndex, model: string, ids: readonly string[]): Promise<{ entries: MemoryVectorEntry[]; moved: boolean }> {
    const wanted: Array<{ id: string; start: number; end: number }> = []
    const ofModel = lineIndex.lines.get(model)
    for (const id of ids) {
      const line = ofModel?.get(id)
      if (line !== undefined) wanted.push({ id, start: lineIndex.starts[line]!, end: lineIndex.ends[line]! })
    }
    wanted.sort((a, b) => a.start - b.start)
    const entries: MemoryVectorEntry[] = []
    for (let at = 0; at < wanted.length;) {
      // Lines close together are read in one range, up to a chunk.
      let last = at
      while (last + 1 < wanted.length && wanted[last + 1]!.start - wanted[last]!.end <= FETCH_GAP_BYTES && wanted[last + 1]!.end - wanted[at]!.start <= VECTOR_READ_CHUNK_BYTES) last++
      // From the byte before the first line to the newline after the last: each line's bounds are checked.
      const from = Math.max(0, wanted[at]!.start - 1)
      const bytes = await workspace.readBytes(key, from, wanted[last]!.end + 1)
      for (let i = at; i <= last; i++) {
        const line = wanted[i]!
        const [start, end] = [line.start - from, line.end - from]
        if (!bytes || bytes.length < end + 1) return { entries: [], moved: true }
        // A line lies between two newlines: offsets anywhere else (an edited index) name no line of this sidecar.
        if ((line.start > 0 && bytes[start - 1] !== 10) || bytes[end] !== 10) return { entries: [], moved: true }
        const entry = knownLineEntry(asBuffer(bytes), start, end, line.id, model)
        // A line not where the index put it: the sidecar was replaced since the index was made.
        if (entry && (entry.id !== line.id || entry.model !== model)) return { entries: [], moved: true }
        if (entry) entries.push(entry)
      }
      at = last + 1
    }
    return { entries, moved: false }
  }

  const store: MemoryVectorStore = {
    async read(cursor) {
      const from = cursor as { offset: number; identity?: string } | undefined
      const stat = await workspace.stat(key)
      if (!stat) return { entries: [], cursor: { offset: 0 }, reset: (from?.offset ?? 0) > 0 }
      const reset = from !== undefined && (stat.size < from.offset || stat.id !== from.identity)
      const start = from === undefined || reset ? 0 : from.offset
      const { entries, end } = await readVectorLines(workspace, key, start, stat.size)
      return { entries, cursor: { offset: end, ...(stat.id !== undefined ? { identity: stat.id } : {}) }, reset: reset && from.offset > 0 }
    },
    async fetch(model, ids, group) {
      if (ids.length === 0) return []
      let found = await fetchOnce(model, ids, group, false)
      // A line not where the index put it: the sidecar was replaced; index it again from the start.
      if (found.moved) found = await fetchOnce(model, ids, group, true)
      return found.entries
    },
    async write(entries) {
      if (entries.length === 0 || !workspace.writable) return
      await workspace.append(key, entries.map(entryLine).join(''))
    },
    async remove(ids) {
      if (ids.length === 0 || !workspace.writable) return
      await rewriteWithout(workspace, key, new Set(ids))
      index = undefined
    },
  }
  byKey.set(key, store)
  return store
}

/**
 * Rewrites the sidecar `key` without the lines of `gone`, a chunk at a time: the kept lines are
 * appended to {@link rewriteKeyOf}`(key)` (emptied first, so a crash's leftover goes too), which
 * `workspace.replaceWith` swaps in only while the sidecar still has the size read and the
 * replacement the size written (another writer appended, or another rewrite shares the key:
 * start again). A crash leaves the old sidecar whole or the new one. A torn last line (no newline)
 * is not kept. Cost: one read and one write of the sidecar; nothing when no line is of `gone`.
 */
export async function rewriteWithout(workspace: Workspace, key: string, gone: ReadonlySet<string>, chunkBytes = VECTOR_READ_CHUNK_BYTES): Promise<void> {
  // The stored line index and vector block name the erased ids too: removed before the rewrite, and after it for ones a reader stored meanwhile.
  await removeDerived(workspace, key)
  try {
    await rewriteLines(workspace, key, gone, chunkBytes)
  }
  finally {
    await removeDerived(workspace, key)
  }
}

/**
 * Removes the stored line index and every vector block of the sidecar `key` (one per scope and
 * model), and the leftovers of a crash while one was written (fs writes a sibling `<derived
 * key>.<pid>.<time>.tmp`, then renames it): they may hold erased ids and vectors.
 */
async function removeDerived(workspace: Workspace, key: string): Promise<void> {
  const index = lineIndexKeyOf(key)
  await workspace.remove(index)
  const folder = key.includes(':') ? key.slice(0, key.lastIndexOf(':')) : undefined
  for (const derived of await workspace.keys(folder)) {
    // A crash's leftover `<derived key>.<pid>.<time>.tmp` goes with its derived key.
    const of = derived.replace(/\.\d+\.\d+\.tmp$/, '')
    if (isVectorBlockKey(key, of) || (of !== derived && of === index)) await workspace.remove(derived)
  }
}

async function rewriteLines(workspace: Workspace, key: string, gone: ReadonlySet<string>, chunkBytes: number): Promise<void> {
  const temporary = rewriteKeyOf(key)
  for (;;) {
    await workspace.remove(temporary)
    const stat = await workspace.stat(key)
    if (!stat) return
    let written = 0
    let dropped = 0
    let pending: Promise<unknown> = Promise.resolve()
    await forEachLineChunk(workspace, key, 0, stat.size, chunkBytes, (chunk) => {
      const bytes = asBuffer(chunk)
      // Runs of kept lines are copied as they are; only each line's id is looked at.
      const kept: string[] = []
      let run = 0
      for (let start = 0; start < bytes.length;) {
        const end = bytes.indexOf(10, start) + 1
        if (end - 1 > start && gone.has(lineIdOf(bytes, start, end - 1))) {
          if (start > run) kept.push(decoder.decode(bytes.subarray(run, start)))
          written += start - run
          run = end
          dropped++
        }
        start = end
      }
      if (run < bytes.length) kept.push(decoder.decode(bytes.subarray(run)))
      written += bytes.length - run
      const text = kept.join('')
      if (text === '') return
      pending = pending.then(() => workspace.append(temporary, text))
      return pending
    })
    await pending
    if (dropped === 0) {
      await workspace.remove(temporary)
      return
    }
    if (written === 0) {
      if (await workspace.replace(key, '', { ifSize: stat.size })) return
      continue
    }
    if (await workspace.replaceWith(key, temporary, { ifSize: stat.size, sourceSize: written })) return
  }
}

/**
 * The entries of the complete lines of the sidecar `key` from byte `start` up to `size`, read
 * and decoded `chunkBytes` at a time (a longer line widens the read until it ends), and the byte
 * after the last complete line: a line still being appended is read next time.
 */
export async function readVectorLines(workspace: Workspace, key: string, start: number, size: number, chunkBytes = VECTOR_READ_CHUNK_BYTES): Promise<{ entries: MemoryVectorEntry[]; end: number }> {
  const entries: MemoryVectorEntry[] = []
  const end = await forEachLineChunk(workspace, key, start, size, chunkBytes, (bytes) => {
    for (const line of decoder.decode(bytes).split('\n')) {
      const entry = parseEntry(line)
      if (entry) entries.push(entry)
    }
  })
  return { entries, end }
}

/**
 * Calls `visit` with the complete lines of `key` from byte `start` up to `size`, a run of whole
 * lines (ending in a newline) of about `chunkBytes` at a time, and the byte offset of the run; a
 * line longer than the chunk widens that read until it ends. Returns the byte after the last
 * complete line. `visit` may return a promise: the next read waits for it.
 */
export async function forEachLineChunk(workspace: Workspace, key: string, start: number, size: number, chunkBytes: number, visit: (bytes: Uint8Array, offset: number) => unknown): Promise<number> {
  let offset = start
  for (let window = chunkBytes; offset < size;) {
    const bytes = await workspace.readBytes(key, offset, Math.min(size, offset + window)) ?? new Uint8Array()
    const end = bytes.lastIndexOf(10) + 1
    if (end === 0) {
      // No complete line in the window: the rest is one line still being appended, or a line longer than the window.
      if (offset + bytes.length >= size || bytes.length === 0) break
      window *= 2
      continue
    }
    await visit(bytes.subarray(0, end), offset)
    offset += end
    window = chunkBytes
  }
  return offset
}

/** Whether the byte before `index.end` is still a newline (a value replaced without an identity, on Redis or memory, can have grown past it). */
async function endsALine(workspace: Workspace, key: string, index: LineIndex, identity: string | undefined): Promise<boolean> {
  if (index.end === 0 || identity !== undefined) return true
  const last = await workspace.readBytes(key, index.end - 1, index.end)
  return last !== undefined && last.length === 1 && last[0] === 10
}

const VECTOR_FIELD = Buffer.from(',"vector":"')

/** `bytes` as a Buffer over the same memory (its `indexOf` is a native search; a Uint8Array's is not). */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

const ID_FIELD = Buffer.from('"id":"')
const MODEL_FIELD = Buffer.from('","model":"')

/**
 * The model and record id of the line from `start` to `end` (no newline) of `buffer`, from its
 * fields before the vector (nothing decoded); `undefined` for a line not of that shape. `model`:
 * the model of the line before, whose string is returned again when this line names it too.
 */
function lineKey(buffer: Buffer, start: number, end: number, model: string): { model: string; id: string } | undefined {
  const at = buffer.indexOf(VECTOR_FIELD, start)
  if (at === -1 || at >= end) return undefined
  // The canonical shape `{"dims":N,"id":"…","model":"…","vector":"` without escapes: sliced, not parsed.
  const idAt = buffer.indexOf(ID_FIELD, start)
  const modelAt = idAt === -1 ? -1 : buffer.indexOf(MODEL_FIELD, idAt)
  if (idAt !== -1 && modelAt !== -1 && modelAt < at && buffer[at - 1] === 34 && !buffer.subarray(start, at).includes(92)) {
    const id = buffer.toString('latin1', idAt + ID_FIELD.length, modelAt)
    const modelStart = modelAt + MODEL_FIELD.length
    const sameModel = at - 1 - modelStart === model.length && buffer.toString('latin1', modelStart, at - 1) === model
    if (id !== '' && !id.includes('"') && isAscii(id)) return { model: sameModel ? model : buffer.toString('utf8', modelStart, at - 1), id }
  }
  let head: unknown
  try {
    head = JSON.parse(`${buffer.toString('utf8', start, at)}}`)
  }
  catch {
    return undefined
  }
  const { id, model: named } = head as { id?: unknown; model?: unknown }
  return typeof id === 'string' && id !== '' && typeof named === 'string' ? { model: named, id } : undefined
}

/** Whether `text` (decoded as latin1) is ASCII, so latin1 and UTF-8 read it alike. */
function isAscii(text: string): boolean {
  return !/[^\x00-\x7f]/.test(text)
}

const HEAD_BYTES = 256

/** The record id of the line from `start` to `end` (no newline) of `bytes`: read from its first bytes for a line of the canonical shape, else {@link entryIdOf} of the whole line. */
function lineIdOf(bytes: Uint8Array, start: number, end: number): string {
  const head = decoder.decode(bytes.subarray(start, Math.min(end, start + HEAD_BYTES)))
  const match = /^\{"dims":\d+,"id":"([^"\\]*)",/.exec(head)
  return match ? match[1]! : entryIdOf(decoder.decode(bytes.subarray(start, end)))
}

/** The record id a sidecar line names: its `id` field when it parses as JSON, else the first `"id":"…"` in it. */
function entryIdOf(line: string): string {
  const match = /"id":"([^"\\]*)"/.exec(line)
  try {
    const value = JSON.parse(line) as { id?: unknown }
    if (value !== null && typeof value === 'object' && typeof value.id === 'string') return value.id
  }
  catch {
    // Not JSON: the first id-looking field decides.
  }
  return match ? match[1]! : ''
}

const DIMS_FIELD = '{"dims":'

/**
 * The entry of the line from `start` to `end` (no newline) of `buffer` that the line index says
 * is `id`'s of `model`: a line of the canonical shape naming them is sliced (its vector decoded
 * from the bytes, no JSON parse of the whole line), any other is parsed as {@link parseEntry} does.
 */
function knownLineEntry(buffer: Buffer, start: number, end: number, id: string, model: string): MemoryVectorEntry | undefined {
  const head = `,"id":${JSON.stringify(id)},"model":${JSON.stringify(model)},"vector":"`
  let at = start + DIMS_FIELD.length
  let dims = 0
  while (at < end && buffer[at]! >= 48 && buffer[at]! <= 57 && at - start < DIMS_FIELD.length + 6) dims = dims * 10 + buffer[at++]! - 48
  const vectorAt = at + head.length
  const canonical = buffer.toString('latin1', start, start + DIMS_FIELD.length) === DIMS_FIELD && buffer[start + DIMS_FIELD.length] !== 48
    && buffer.toString('latin1', at, vectorAt) === head && end - vectorAt >= 2 && buffer[end - 2] === 34 && buffer[end - 1] === 125
    // No quote or backslash inside the vector's string: the line is then that JSON object and nothing else.
    && !buffer.subarray(vectorAt, end - 2).includes(34) && !buffer.subarray(vectorAt, end - 2).includes(92)
  const vector = canonical && dims > 0 ? decodeVector(buffer.toString('latin1', vectorAt, end - 2), dims) : undefined
  return vector ? { id, model, vector } : parseEntry(buffer.toString('utf8', start, end))
}

/** The sidecar line of an entry: canonical JSON (keys in sorted order), like the log's. */
export function entryLine(entry: MemoryVectorEntry): string {
  return `${JSON.stringify({ dims: entry.vector.length, id: entry.id, model: entry.model, vector: encodeVector(entry.vector) })}\n`
}

/** The entry of one sidecar line, or `undefined` for a line that is not one (torn, edited, of the wrong length). */
export function parseEntry(line: string): MemoryVectorEntry | undefined {
  if (line === '') return undefined
  let value: unknown
  try {
    value = JSON.parse(line)
  }
  catch {
    return undefined
  }
  if (value === null || typeof value !== 'object') return undefined
  const { dims, id, model, vector } = value as Record<string, unknown>
  if (typeof id !== 'string' || id === '' || typeof model !== 'string' || typeof dims !== 'number') return undefined
  const decoded = decodeVector(vector, dims)
  return decoded ? { id, model, vector: decoded } : undefined
}
