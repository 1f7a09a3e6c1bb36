/**
 * The vector blocks of a sidecar kept on storage: `<sidecar key>.block.<name>`, one per group of
 * ids (a scope's partition) and model, each the vectors of one large fetch of that group as one
 * run of little-endian float32 values, so that a cold process gets them by one read and one
 * native base64 decode into a `Float32Array` instead of a JSON line and a base64 string per
 * vector (docs/log-format.md "Vector sidecar"). `<name>` is the first 32 hex digits of the
 * SHA-256 of the model and group: two large scopes read in turn each keep their own block, and
 * every block of a sidecar starts with {@link vectorBlockPrefixOf}, which the erasure rewrite
 * removes.
 *
 * One value: a JSON header line `{ format: 1, identity, end, tail, model, dims, ids, encoding,
 * body }`, then the `ids.length × dims` float32 values, vector `n` of `ids[n]`: `encoding`
 * `"float32le"`, their little-endian bytes as they are (`body` bytes) where the workspace keeps
 * bytes (`Workspace.replaceBytes`: fs, the default), read straight into a `Float32Array`;
 * `"base64"`, `body` characters of base64 of those bytes on the drivers that hold text (memory,
 * Redis, others), decoded natively. Like the line index
 * (vector-line-index.ts) it is derived data valid for the sidecar up to byte `end`: same
 * identity, the sidecar at least `end` bytes long, the SHA-256 of its last up to 4,096 bytes
 * before `end` as recorded; a vector of the block stands for its id only while the id's last line
 * lies before `end`. Written only while the sidecar still has the size it was indexed at
 * (`replace` with `ifSizeOf`), removed by the erasure rewrite before and after its swap
 * (vector-sidecar.ts), removed when found invalid.
 */
import type { Workspace, WorkspaceValueStat } from '../workspace/types.ts'
import { sha256Hex } from '../log/digest.ts'
import { sidecarTailDigest } from './vector-line-index.ts'

/** The format number of the stored block; another number is not read. */
export const VECTOR_BLOCK_FORMAT = 1

/** Fewest vectors a fetch reads from sidecar lines before it stores them as a block (smaller scopes are read by their lines: a few ranged reads). */
export const VECTOR_BLOCK_MIN_VECTORS = 4096

/** Most base64 characters of a block's body (written as one string: far under V8's longest, about 2^29); a larger fetch stores no block. */
const MAX_BODY_CHARS = 256 * 1024 * 1024

/** Bytes of the body decoded at a time (a multiple of 4: whole base64 quads). */
const DECODE_CHUNK_CHARS = 8 * 1024 * 1024

/** What every block key of the sidecar `key` starts with (`<key>.block.`): the erasure rewrite removes every value under it. */
export function vectorBlockPrefixOf(key: string): string {
  return `${key}.block.`
}

/** The key of the stored vector block of the sidecar `key` for the ids of `group` (a scope's partition; `undefined`: a fetch that names none) and `model`. */
export async function vectorBlockKeyOf(key: string, model: string, group: string | undefined): Promise<string> {
  return `${vectorBlockPrefixOf(key)}${(await sha256Hex(JSON.stringify([model, group ?? null]))).slice(0, 32)}`
}

/** Whether `candidate` is the key of a block of the sidecar `key` (`<key>.block.<name>`, or `<key>.block`: a block without a name), not a leftover `.tmp` of one being written. */
export function isVectorBlockKey(key: string, candidate: string): boolean {
  const prefix = vectorBlockPrefixOf(key)
  return candidate === prefix.slice(0, -1) || (candidate.startsWith(prefix) && /^[0-9a-f]{32}$/.test(candidate.slice(prefix.length)))
}

type BlockEncoding = 'float32le' | 'base64'

interface BlockHead { format: number; identity: string | null; end: number; tail: string; model: string; dims: number; ids: readonly string[]; encoding: BlockEncoding; body: number }

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

/** A stored block's header, valid for the sidecar: which vectors it holds, and where its body starts in the block's value. */
export interface VectorBlockHead {
  /** The block's key. */
  key: string
  end: number
  model: string
  dims: number
  ids: readonly string[]
  /** How the body holds the values; its byte offset in the block's value, and its length in bytes. */
  encoding: BlockEncoding
  bodyAt: number
  body: number
}

function base64Length(bytes: number): number {
  return Math.ceil(bytes / 3) * 4
}

function bodyLength(encoding: BlockEncoding, values: number): number {
  return encoding === 'float32le' ? values * 4 : base64Length(values * 4)
}

/**
 * The header of the block stored at `blockKey` for the sidecar `key`, when there is one of this
 * format that is valid for the sidecar as `stat` describes it (see the module comment), else
 * `undefined`; a block that is not valid is removed (it may name erased ids). Reads the header
 * line only.
 */
export async function loadVectorBlockHead(workspace: Workspace, key: string, blockKey: string, stat: WorkspaceValueStat): Promise<VectorBlockHead | undefined> {
  const blockStat = await workspace.stat(blockKey)
  if (!blockStat) return undefined
  const head = await readHead(workspace, blockKey, blockStat.size).catch(() => undefined)
  const valid = head && await validHead(workspace, key, stat, head.stored, head.bodyAt, blockStat.size)
  if (!valid && workspace.writable) await workspace.remove(blockKey).catch(() => {})
  return valid ? { ...valid, key: blockKey } : undefined
}

/** Removes every block of the sidecar `key` that is not valid for it as `stat` describes it (a crash between an erasure's swap and its removal of the blocks leaves such blocks, which may hold erased vectors); reads their header lines only. */
export async function removeUnfitBlocks(workspace: Workspace, key: string, stat: WorkspaceValueStat): Promise<void> {
  if (!workspace.writable) return
  const folder = key.includes(':') ? key.slice(0, key.lastIndexOf(':')) : undefined
  for (const candidate of await workspace.keys(folder)) {
    if (isVectorBlockKey(key, candidate)) await loadVectorBlockHead(workspace, key, candidate, stat)
  }
}

async function readHead(workspace: Workspace, blockKey: string, size: number): Promise<{ stored: BlockHead; bodyAt: number } | undefined> {
  for (let window = 64 * 1024; ; window *= 2) {
    const bytes = await workspace.readBytes(blockKey, 0, Math.min(size, window))
    if (!bytes) return undefined
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    const newline = buffer.indexOf(10)
    if (newline !== -1) return { stored: JSON.parse(buffer.toString('utf8', 0, newline)) as BlockHead, bodyAt: newline + 1 }
    if (window >= size) return undefined
  }
}

async function validHead(workspace: Workspace, key: string, stat: WorkspaceValueStat, stored: BlockHead, bodyAt: number, blockSize: number): Promise<Omit<VectorBlockHead, 'key'> | undefined> {
  if (typeof stored !== 'object' || stored === null || stored.format !== VECTOR_BLOCK_FORMAT || !Number.isSafeInteger(stored.end) || stored.end <= 0 || stored.end > stat.size) return undefined
  if ((stored.identity ?? undefined) !== stat.id || typeof stored.model !== 'string' || !Number.isSafeInteger(stored.dims) || stored.dims < 1 || !Array.isArray(stored.ids)) return undefined
  if ((stored.encoding !== 'float32le' && stored.encoding !== 'base64') || stored.body !== bodyLength(stored.encoding, stored.ids.length * stored.dims) || bodyAt + stored.body !== blockSize || !stored.ids.every(id => typeof id === 'string' && id !== '')) return undefined
  if (await sidecarTailDigest(workspace, key, stored.end) !== stored.tail) return undefined
  return { end: stored.end, model: stored.model, dims: stored.dims, ids: stored.ids, encoding: stored.encoding, bodyAt, body: stored.body }
}

/**
 * The vectors of a block whose header {@link loadVectorBlockHead} gave: one read of the body,
 * taken as one `Float32Array` (vector `n` at `n × dims`; base64 decoded a chunk at a time);
 * `undefined` when the body is not what the header says (shorter, not base64, a value that is
 * not a finite float32): the block is removed then.
 */
export async function loadVectorBlockData(workspace: Workspace, head: VectorBlockHead): Promise<Float32Array | undefined> {
  const blockKey = head.key
  const values = head.ids.length * head.dims
  const bytes = await workspace.readBytes(blockKey, head.bodyAt, head.bodyAt + head.body)
  const data = bytes && bytes.length === head.body && LITTLE_ENDIAN ? bodyValues(head.encoding, bytes, values) : undefined
  if (data && allFinite(data)) return data
  if (workspace.writable) await workspace.remove(blockKey).catch(() => {})
  return undefined
}

/** Whether every value is finite: `x * 0` is 0 for a finite `x` and NaN for an infinite or NaN one, so one sum without a branch tells. */
function allFinite(data: Float32Array): boolean {
  let a = 0, b = 0
  let i = 0
  for (; i + 1 < data.length; i += 2) {
    a += data[i]! * 0
    b += data[i + 1]! * 0
  }
  if (i < data.length) a += data[i]! * 0
  return a + b === 0
}

/** The `values` float32 values of a body read whole: a view of its bytes (a copy when they do not start at a multiple of 4), or base64 decoded; `undefined` when the base64 gives fewer. */
function bodyValues(encoding: BlockEncoding, bytes: Uint8Array, values: number): Float32Array | undefined {
  if (encoding === 'float32le') return bytes.byteOffset % 4 === 0 ? new Float32Array(bytes.buffer, bytes.byteOffset, values) : new Float32Array(bytes.slice().buffer, 0, values)
  const data = new Float32Array(values)
  const out = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let written = 0
  for (let at = 0; at < text.length && written < out.length; at += DECODE_CHUNK_CHARS) written += out.write(text.toString('latin1', at, Math.min(text.length, at + DECODE_CHUNK_CHARS)), written, 'base64')
  return written === out.length ? data : undefined
}

/** What {@link saveVectorBlock} stores: the sidecar's identity and the byte up to which it was indexed, and the vectors (`ids.length × dims` values). */
export interface VectorBlockContent {
  identity: string | undefined
  end: number
  model: string
  dims: number
  ids: readonly string[]
  data: Float32Array
}

/**
 * Stores `block` at `blockKey` for the sidecar `key` (whole-value replace), only while the sidecar is still
 * `size` bytes long, checked against its writers (`ifSizeOf`): a block of a sidecar that an
 * erasure has rewritten since is never written. Bytes as they are where the workspace keeps bytes
 * (`replaceBytes`), else base64 text. Returns whether it was written (not on a big-endian CPU,
 * nor as base64 past {@link MAX_BODY_CHARS}).
 */
export async function saveVectorBlock(workspace: Workspace, key: string, blockKey: string, block: VectorBlockContent, size: number): Promise<boolean> {
  if (!LITTLE_ENDIAN || block.data.length !== block.ids.length * block.dims) return false
  const tail = await sidecarTailDigest(workspace, key, block.end)
  if (tail === undefined) return false
  const head = (encoding: BlockEncoding): string => `${JSON.stringify({ format: VECTOR_BLOCK_FORMAT, identity: block.identity ?? null, end: block.end, tail, model: block.model, dims: block.dims, ids: block.ids, encoding, body: bodyLength(encoding, block.data.length) } satisfies BlockHead)}\n`
  const values = Buffer.from(block.data.buffer, block.data.byteOffset, block.data.byteLength)
  const guard = { ifSizeOf: { key, size } }
  const written = await workspace.replaceBytes?.(blockKey, Buffer.concat([Buffer.from(head('float32le'), 'utf8'), values]), guard)
  if (written !== undefined) return written
  if (base64Length(values.length) > MAX_BODY_CHARS) return false
  return workspace.replace(blockKey, `${head('base64')}${values.toString('base64')}`, guard)
}
