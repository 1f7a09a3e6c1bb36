import type { Storage } from 'unstorage'

/**
 * The agent workspace: a small key/value + append-only-text facade over an unstorage `Storage`.
 *
 * Keys are unstorage keys (`:`-separated; `/` is accepted and normalized to `:`). Values written
 * with {@link Workspace.writeJson} are JSON; logs are plain UTF-8 text grown with
 * {@link Workspace.append}.
 */
export interface Workspace {
  /** The underlying unstorage instance (escape hatch; prefer the methods below). */
  readonly storage: Storage
  /** Folder of the fs driver when the workspace lives on disk, else `undefined`. */
  readonly dir: string | undefined
  /** Whether writes are allowed. A read-only workspace rejects `append`, `writeJson`, `remove` and `truncate`. */
  readonly writable: boolean
  /** Reads a text value; `undefined` when the key does not exist. */
  readText(key: string): Promise<string | undefined>
  /** Reads and parses a JSON value; `undefined` when the key does not exist. Throws `WORKSPACE_CORRUPT_JSON` on bad JSON. */
  readJson<T>(key: string): Promise<T | undefined>
  /** Writes a JSON value (whole-value replace). */
  writeJson(key: string, value: unknown): Promise<void>
  /**
   * Appends `text` to the text value at `key`, creating it when missing, without rewriting what
   * is there on drivers with a native append (fs: `O_APPEND`; memory: the driver's instance;
   * Redis: `APPEND` on the driver's client). Other drivers fall back to a read-modify-write
   * guarded by a per-key lock in this process. Appends to one key are serialized within the
   * process, in call order.
   *
   * With `ifSize`, the append is conditional: it happens only when the value is exactly `ifSize`
   * UTF-8 bytes long (0 for a missing value), atomically across processes on fs (under the
   * key's cross-process lease, a kernel byte-range lock: see docs/workspace.md) and across clients on Redis (a Lua script);
   * within this process only on other drivers. Returns `false` when the size differed (nothing
   * written), else `true`. `fsync: true` (fs only) flushes the file to disk before returning.
   */
  append(key: string, text: string, options?: WorkspaceWriteOptions): Promise<boolean>
  /**
   * A conditional {@link append} (`options.ifSize` given) done in this turn where the driver can
   * without waiting: fs, when this process holds the key's lease or takes it free now (a burst of
   * appends). Returns what {@link append} would resolve to, or `undefined`, having written
   * nothing, when it cannot answer now (no `ifSize`, another write of the key queued in this
   * process, the lease held elsewhere, the path replaced, other drivers): then call {@link append}.
   *
   * @throws AgentError as {@link append}.
   */
  appendNow?(key: string, text: string, options: WorkspaceWriteOptions): boolean | undefined
  /**
   * Shortens the text value at `key` to its first `length` bytes (UTF-8). Used to move a torn
   * last line aside. With `ifSize`, only when the value has that size (see {@link append}).
   * Returns `false` when the size differed.
   */
  truncate(key: string, length: number, options?: WorkspaceWriteOptions): Promise<boolean>
  /**
   * Replaces the whole text value at `key` atomically: fs writes a sibling file and renames it
   * over the value (a new inode); Redis `SET`s it in a Lua script; memory sets it. With `ifSize`,
   * only when the value has that size (see {@link append}). Returns `false` when it differed.
   * Used by log compaction.
   */
  replace(key: string, text: string, options?: WorkspaceWriteOptions): Promise<boolean>
  /**
   * Replaces the whole value at `key` with the value at `source`, atomically, and `source` is gone
   * afterwards: fs renames the file over the value (a new inode; a crash leaves the old value or
   * the new one); Redis `RENAME`s in a Lua script; memory moves the entry; other drivers copy and
   * remove in this process. With `ifSize`, only when the value at `key` has that size (see
   * {@link append}); with `sourceSize`, only when the value at `source` has that size. Returns
   * `false` (nothing changed) when a size differed or `source` does not exist. Lets a writer build
   * a replacement larger than one string (appended to `source` piece by piece) and swap it in.
   */
  replaceWith(key: string, source: string, options?: WorkspaceReplaceWithOptions): Promise<boolean>
  /**
   * {@link replace} with bytes kept as they are (a binary value, read back with
   * {@link readBytes}), only while the value at `options.ifSizeOf.key` is `options.ifSizeOf.size`
   * bytes long, checked atomically against that key's writers as `replace` does. Only where the
   * value is a file (fs); `undefined`, having written nothing, on the other drivers (they hold
   * text: store text there).
   */
  replaceBytes?(key: string, bytes: Uint8Array, options: WorkspaceWriteOptions & { ifSizeOf: { key: string; size: number } }): Promise<boolean | undefined>
  /**
   * Size of the text value at `key` in UTF-8 bytes and, where the driver can tell, an identity
   * that changes when the value is replaced rather than grown (fs: device and inode); `undefined`
   * when the key does not exist. Cheap: fs `stat`, Redis `STRLEN`, memory a cached length.
   */
  stat(key: string): Promise<WorkspaceValueStat | undefined>
  /**
   * {@link stat} answered in the same turn where the driver can without waiting on I/O (fs: a
   * synchronous `stat` of the file; memory: the cached length); `false` when it cannot (Redis and
   * other drivers: use {@link stat}). Lets a reader that only needs to know whether a value
   * changed answer without a promise turn.
   *
   * @throws AgentError `WORKSPACE_KEY_INVALID` for a bad key, `WORKSPACE_READ_FAILED` when fs
   * `stat` fails other than for a missing file.
   */
  statNow?(key: string): WorkspaceValueStat | undefined | false
  /**
   * The bytes of the text value at `key` from byte `start` (default 0) to byte `end` (exclusive;
   * default and at most the end of the value), empty when `start` is at or past that end;
   * `undefined` when the key does not exist. Used to tail a log and to read one section of a
   * checkpoint: fs reads that range of the file, Redis `GETRANGE start end-1`, memory slices.
   */
  readBytes(key: string, start?: number, end?: number): Promise<Uint8Array | undefined>
  /** Removes a key (no error when it does not exist). */
  remove(key: string): Promise<void>
  /** Whether a key exists. */
  has(key: string): Promise<boolean>
  /** Keys under a prefix (unstorage `getKeys`). */
  keys(prefix?: string): Promise<string[]>
  /**
   * Runs `task` while holding this process's lock for `key`, so that read-modify-write work on one
   * key (approvals, transcripts, logs) is serialized. Not re-entrant: do not nest `withLock` on one key.
   */
  withLock<T>(key: string, task: () => Promise<T>): Promise<T>
  /**
   * Takes this process's lock for `key` (the one {@link withLock} holds) in this turn when nobody
   * holds it or waits for it, and returns its release: call it exactly once, when the work is
   * done (it hands the lock to the first {@link withLock} queued meanwhile). `undefined`, nothing
   * taken, when the lock is held. Lets a write that needs no waiting run without a promise.
   */
  lockNow?(key: string): (() => void) | undefined
}

/** Options of {@link Workspace.append}, {@link Workspace.truncate} and {@link Workspace.replace}. */
export interface WorkspaceWriteOptions {
  /** Write only when the value is exactly this many UTF-8 bytes long (0 = missing or empty). */
  ifSize?: number
  /** fs driver: `fsync` the file before returning (durability at a cost, see docs/workspace.md). Default `false`. */
  fsync?: boolean
  /**
   * `replace` only: write only when the value at another key is exactly `size` UTF-8 bytes long
   * (0 = missing), checked atomically with the write against that key's writers (fs: under that
   * file's cross-process lease; Redis: one Lua script over both keys, so both must be in one hash
   * slot on a cluster; memory and other drivers: in this process). The log engine writes a
   * checkpoint this way, only while the log is still at the offset the checkpoint covers.
   */
  ifSizeOf?: { key: string; size: number }
}

/** Options of {@link Workspace.replaceWith}. */
export interface WorkspaceReplaceWithOptions {
  /** Replace only when the value at the destination key is exactly this many UTF-8 bytes long (0 = missing or empty). */
  ifSize?: number
  /** Replace only when the value at `source` is exactly this many UTF-8 bytes long. */
  sourceSize?: number
  /** fs driver: `fsync` the source file before the rename. Default `false`. */
  fsync?: boolean
}

/** What {@link Workspace.stat} returns. */
export interface WorkspaceValueStat {
  /** Size in UTF-8 bytes. */
  size: number
  /** Changes when the value is replaced (fs: `<dev>:<ino>`); absent where the driver cannot tell. */
  id?: string
}

/** Options of {@link createWorkspace}. */
export interface WorkspaceOptions {
  /**
   * An unstorage `Storage` to use, of any value type (the workspace writes its own text and JSON).
   * Default: the fs driver rooted at `dir`. `Storage<never>` besides `Storage` so that
   * `createStorage()` written inline type-checks in an app: the published declarations bundle a
   * copy of unstorage's types, against which its `createStorage()` would infer a value type that
   * `Storage` (of `StorageValue`) does not accept.
   */
  storage?: Storage | Storage<never>
  /** Folder for the default fs driver. Default: `.agent/workspace` under `process.cwd()`. */
  dir?: string
  /** Set `false` to make the workspace read-only. Default `true`. */
  writable?: boolean
}
