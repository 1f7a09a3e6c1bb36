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
   * is there on drivers with a native append (fs: `O_APPEND`; memory: the driver's instance).
   * Other drivers fall back to a read-modify-write guarded by a per-key lock in this process.
   * Appends to one key are serialized within the process, in call order.
   */
  append(key: string, text: string): Promise<void>
  /** Shortens the text value at `key` to its first `length` bytes (UTF-8). Used to move a torn last line aside. */
  truncate(key: string, length: number): Promise<void>
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
}

/** Options of {@link createWorkspace}. */
export interface WorkspaceOptions {
  /** An unstorage `Storage` to use. Default: the fs driver rooted at `dir`. */
  storage?: Storage
  /** Folder for the default fs driver. Default: `.agent/workspace` under `process.cwd()`. */
  dir?: string
  /** Set `false` to make the workspace read-only. Default `true`. */
  writable?: boolean
}
