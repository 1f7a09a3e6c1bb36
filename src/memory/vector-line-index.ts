/**
 * The vector sidecar's line index kept on storage: `<sidecar key>.index`, one JSON value saying,
 * per model and record id, where the id's last line lies in the sidecar, up to a byte `end`. A
 * cold process that finds it valid scans only the bytes appended after `end` instead of the whole
 * sidecar, so a scope's first hybrid search reads its own vectors only (docs/log-format.md
 * "Vector sidecar").
 *
 * Valid means: same identity as the sidecar (where the driver has one), the sidecar at least
 * `end` bytes long with a newline at `end - 1`, and the SHA-256 of its last up to 4,096 bytes
 * before `end` as recorded. A line read through it is still checked (id and model) before use;
 * one not where the index says makes the sidecar scanned again. Holds record ids and offsets, no
 * vector; the erasure rewrite removes it before and after its swap (vector-sidecar.ts).
 */
import type { Workspace, WorkspaceValueStat } from '../workspace/types.ts'
import { sha256Hex } from '../log/digest.ts'

/** Where each entry's line lies in the sidecar: per model, record id → line number, whose bytes are `starts[n]` to `ends[n]` (no newline); `end` is the byte after the last complete line indexed. */
export interface LineIndex {
  identity: string | undefined
  end: number
  lines: Map<string, Map<string, number>>
  starts: number[]
  ends: number[]
}

/** The format number of the stored index; another number is not read. */
export const LINE_INDEX_FORMAT = 1

/** Bytes of the sidecar before `end` whose SHA-256 the stored index keeps. */
const TAIL_BYTES = 4096

/** Bytes a scan must have indexed past the stored index before the index is stored again (smaller growth is scanned at each cold open). */
export const LINE_INDEX_SAVE_BYTES = 1024 * 1024

/** The key of the stored line index of the sidecar `key`. */
export function lineIndexKeyOf(key: string): string {
  return `${key}.index`
}

interface StoredModel { model: string; ids: string[]; starts: string; lengths: string }
interface StoredIndex { format: number; identity: string | null; end: number; tail: string; models: StoredModel[] }

/** The SHA-256 (hex) of the last up to 4,096 bytes of the sidecar `key` before byte `end`, or `undefined` when they do not end a line: what the stored line index and vector block record to tell that the sidecar is still the one they were made of. */
export async function sidecarTailDigest(workspace: Workspace, key: string, end: number): Promise<string | undefined> {
  const bytes = await workspace.readBytes(key, Math.max(0, end - TAIL_BYTES), end)
  if (!bytes || bytes.length !== Math.min(end, TAIL_BYTES) || bytes[bytes.length - 1] !== 10) return undefined
  return sha256Hex(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1'))
}

/**
 * The stored line index of the sidecar `key`, when there is one of this format that is valid for
 * the sidecar as `stat` describes it (see the module comment), else `undefined`.
 */
export async function loadLineIndex(workspace: Workspace, key: string, stat: WorkspaceValueStat): Promise<LineIndex | undefined> {
  let stored: StoredIndex | undefined
  try {
    stored = await workspace.readJson<StoredIndex>(lineIndexKeyOf(key))
  }
  catch {
    stored = { format: -1 } as StoredIndex
  }
  if (stored === undefined) return undefined
  const index = await validIndex(workspace, key, stat, stored)
  // One that does not fit this sidecar (a crash between an erasure's swap and its removal of the index) is removed: it may name erased ids.
  if (!index && workspace.writable) await workspace.remove(lineIndexKeyOf(key)).catch(() => {})
  return index
}

async function validIndex(workspace: Workspace, key: string, stat: WorkspaceValueStat, stored: StoredIndex): Promise<LineIndex | undefined> {
  if (typeof stored !== 'object' || stored === null || stored.format !== LINE_INDEX_FORMAT || !Number.isSafeInteger(stored.end) || stored.end <= 0 || stored.end > stat.size || !Array.isArray(stored.models)) return undefined
  if ((stored.identity ?? undefined) !== stat.id) return undefined
  if (await sidecarTailDigest(workspace, key, stored.end) !== stored.tail) return undefined
  const index: LineIndex = { identity: stat.id, end: stored.end, lines: new Map(), starts: [], ends: [] }
  for (const { model, ids, starts, lengths } of stored.models) {
    const at = Buffer.from(starts, 'base64')
    const length = Buffer.from(lengths, 'base64')
    if (typeof model !== 'string' || !Array.isArray(ids) || at.length !== ids.length * 8 || length.length !== ids.length * 4) return undefined
    const startOf = new Float64Array(at.buffer.slice(at.byteOffset, at.byteOffset + at.length))
    const lengthOf = new Uint32Array(length.buffer.slice(length.byteOffset, length.byteOffset + length.length))
    const ofModel = new Map<string, number>()
    for (let n = 0; n < ids.length; n++) {
      const end = startOf[n]! + lengthOf[n]!
      if (typeof ids[n] !== 'string' || !(end < index.end)) return undefined
      ofModel.set(ids[n]!, index.starts.length)
      index.starts.push(startOf[n]!)
      index.ends.push(end)
    }
    index.lines.set(model, ofModel)
  }
  return index
}

/**
 * Stores `index` for the sidecar `key` (whole-value replace), only while the sidecar is still
 * `size` bytes long, checked against its writers (`ifSizeOf`): an index of a sidecar that an
 * erasure has rewritten since is never written. Returns whether it was written.
 */
export async function saveLineIndex(workspace: Workspace, key: string, index: LineIndex, size: number): Promise<boolean> {
  const tail = await sidecarTailDigest(workspace, key, index.end)
  if (tail === undefined) return false
  const models: StoredModel[] = []
  for (const [model, ofModel] of index.lines) {
    const ids = [...ofModel.keys()]
    const starts = new Float64Array(ids.length)
    const lengths = new Uint32Array(ids.length)
    ids.forEach((id, n) => {
      const line = ofModel.get(id)!
      starts[n] = index.starts[line]!
      lengths[n] = index.ends[line]! - index.starts[line]!
    })
    models.push({ model, ids, starts: Buffer.from(starts.buffer).toString('base64'), lengths: Buffer.from(lengths.buffer).toString('base64') })
  }
  const stored: StoredIndex = { format: LINE_INDEX_FORMAT, identity: index.identity ?? null, end: index.end, tail, models }
  return workspace.replace(lineIndexKeyOf(key), JSON.stringify(stored), { ifSizeOf: { key, size } })
}
