/**
 * Where `history()` keeps its lines (source: the conversation-memory document, seed 004: "Three
 * built-in implementations: InMemoryStore, SQLiteStore, FileStore"; "When `None`, defaults to an
 * ephemeral `InMemoryStore`"; "`close()`: Close the underlying store connection").
 *
 * Every store gives the same small backend (read a value's text, append a line, cut a torn tail,
 * a lock per key), so the line format, folding and summaries of store.ts are one code path for
 * all three.
 */
import { resolve } from 'node:path'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { agentError, isAgentError } from '../errors.ts'
import { importOptional, nativeAddonLoadError } from '../optional-dependency.ts'
import { createWorkspace } from '../workspace/workspace.ts'
import type { Workspace } from '../workspace/types.ts'

/** What a history value needs from storage: the subset of a {@link Workspace} that store.ts uses. */
export type HistoryBackend = Pick<Workspace, 'readText' | 'append' | 'truncate' | 'withLock' | 'writable'>

/**
 * A history backend that erasure can rewrite: its value keys and an atomic replace (as a
 * workspace has). Stores that keep history outside the agent workspace register theirs, so that
 * erasing memory also erases its copies in conversation history (docs/security.md).
 */
export type ScrubbableHistoryBackend = HistoryBackend & Pick<Workspace, 'keys' | 'replace'>

const outsideWorkspace = new Set<WeakRef<ScrubbableHistoryBackend>>()

/** The history backends kept outside agent workspaces (in-memory and SQLite stores) that are still alive. */
export function historyBackendsOutsideWorkspaces(): ScrubbableHistoryBackend[] {
  const live: ScrubbableHistoryBackend[] = []
  for (const ref of outsideWorkspace) {
    const backend = ref.deref()
    if (backend) live.push(backend)
    else outsideWorkspace.delete(ref)
  }
  return live
}

function register<T extends ScrubbableHistoryBackend>(backend: T): T {
  outsideWorkspace.add(new WeakRef(backend))
  return backend
}

/** What a store's `open` receives: the agent and its workspace (if any). */
export interface HistoryStoreContext {
  agent: string
  workspace?: Workspace
}

/** A history store: `history({ store })`. */
export interface HistoryStore {
  /** `'in-memory'`, `'workspace'` or `'sqlite'` (custom stores: any other name). */
  readonly kind: string
  /** The backend the agent's history values live in. Throws an AgentError when the store cannot serve this agent. */
  open(context: HistoryStoreContext): HistoryBackend | Promise<HistoryBackend>
  /** Closes the store's connection (SQLite); the next operation reopens it. Nothing to do for the others. */
  close(): Promise<void>
}

/**
 * The default store: history values in this process's memory, lost on restart, shared by every
 * agent and invocation of the `history()` that holds it. Needs no workspace.
 */
export function inMemoryHistoryStore(): HistoryStore {
  let workspace: Workspace | undefined
  return {
    kind: 'in-memory',
    open: () => (workspace ??= register(createWorkspace({ storage: createStorage({ driver: memoryDriver() }) }))),
    async close() {},
  }
}

/**
 * History values as JSONL files under `history/` of the agent workspace (the seed's file store).
 *
 * `open` throws `HISTORY_WORKSPACE_REQUIRED` when the agent has no workspace and
 * `HISTORY_WORKSPACE_READ_ONLY` when it is read-only.
 */
export function workspaceHistoryStore(): HistoryStore {
  return {
    kind: 'workspace',
    open({ agent, workspace }) {
      if (!workspace) {
        throw agentError('HISTORY_WORKSPACE_REQUIRED', `history({ store: workspaceHistoryStore() }) keeps the conversation in the agent workspace, and agent "${agent}" has none`, 'pass `workspace: createWorkspace()` to defineAgent(), or leave `store` out for the in-memory store')
      }
      if (!workspace.writable) {
        throw agentError('HISTORY_WORKSPACE_READ_ONLY', `history() stores messages after each response, and the workspace of agent "${agent}" is read-only`, 'give the agent a writable workspace, or use another history store')
      }
      return workspace
    },
    async close() {},
  }
}

/** Options of {@link sqliteHistoryStore}. */
export interface SqliteHistoryStoreOptions {
  /** Database file path (relative paths resolve against the working directory). Created when missing; its folder must exist. */
  file: string
}

type Database = import('better-sqlite3').Database

/**
 * History values in a SQLite file: table `history_lines (key, seq, line)`, one row per line,
 * written in a transaction under the lock (SQLite's write lock across processes, one queue
 * inside this one). better-sqlite3 is loaded on first use, so agents without this store never
 * load the native module.
 *
 * @throws AgentError `HISTORY_OPTIONS_INVALID` (now) for a missing or blank `file`; operations
 * throw `HISTORY_SQLITE_FAILED` when the file cannot be opened or a statement fails, and
 * `DEPENDENCY_MISSING` when better-sqlite3 is not installed.
 */
export function sqliteHistoryStore(options: SqliteHistoryStoreOptions): HistoryStore {
  if (!options || typeof options.file !== 'string' || options.file.trim() === '' || options.file === ':memory:') {
    throw agentError('HISTORY_OPTIONS_INVALID', 'sqliteHistoryStore() needs `file`, the path of a database file', 'pass sqliteHistoryStore({ file: "./.agent/history.db" }); for a store in memory leave `store` out')
  }
  const file = resolve(options.file)
  let db: Promise<Database> | undefined
  // One connection, so one transaction at a time: locked tasks of every key queue up here.
  let queue: Promise<unknown> = Promise.resolve()

  const failed = (error: unknown) => isAgentError(error) ? error : nativeAddonLoadError('better-sqlite3', 'sqliteHistoryStore()', error) ?? agentError('HISTORY_SQLITE_FAILED', `the history database "${file}" failed: ${error instanceof Error ? error.message : String(error)}`, 'check that the folder exists and the file is a writable SQLite database', { file }, error)

  async function open(): Promise<Database> {
    db ??= (async () => {
      const { default: Sqlite } = await importOptional<{ default: typeof import('better-sqlite3') }>('better-sqlite3', 'sqliteHistoryStore()')
      const handle = new Sqlite(file)
      handle.pragma('journal_mode = WAL')
      handle.pragma('busy_timeout = 5000')
      handle.exec('CREATE TABLE IF NOT EXISTS history_lines (key TEXT NOT NULL, seq INTEGER NOT NULL, line TEXT NOT NULL, PRIMARY KEY (key, seq))')
      return handle
    })().catch((error) => {
      db = undefined
      throw failed(error)
    })
    return db
  }

  async function run<T>(task: (handle: Database) => T): Promise<T> {
    const handle = await open()
    try {
      return task(handle)
    } catch (error) {
      throw failed(error)
    }
  }

  const backend: ScrubbableHistoryBackend = {
    writable: true,
    keys: async () => run(handle => (handle.prepare('SELECT DISTINCT key FROM history_lines ORDER BY key').all() as Array<{ key: string }>).map(row => row.key)),
    // Erasure's rewrite: the value's lines replaced at once, when it is still `ifSize` bytes long.
    replace: (key, text, options) => run(handle => handle.transaction(() => {
      const current = (handle.prepare('SELECT line FROM history_lines WHERE key = ? ORDER BY seq').all(key) as Array<{ line: string }>).map(row => row.line).join('')
      if (options?.ifSize !== undefined && Buffer.byteLength(current, 'utf8') !== options.ifSize) return false
      handle.prepare('DELETE FROM history_lines WHERE key = ?').run(key)
      const insert = handle.prepare('INSERT INTO history_lines (key, seq, line) VALUES (?, ?, ?)')
      text.split(/(?<=\n)/).filter(line => line !== '').forEach((line, index) => insert.run(key, index + 1, line))
      return true
    })()),
    readText: key => run(handle => {
      const rows = handle.prepare('SELECT line FROM history_lines WHERE key = ? ORDER BY seq').all(key) as Array<{ line: string }>
      return rows.length === 0 ? undefined : rows.map(row => row.line).join('')
    }),
    append: (key, text) => run(handle => {
      handle.prepare('INSERT INTO history_lines (key, seq, line) VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM history_lines WHERE key = ?), ?)').run(key, key, text)
      return true
    }),
    // Rows are whole lines written in one statement: there is never a torn tail to cut.
    truncate: async () => true,
    async withLock(_key, task) {
      const next = queue.catch(() => undefined).then(async () => {
        const handle = await open()
        // BEGIN IMMEDIATE takes SQLite's write lock, so other processes wait for this read-then-append.
        await run(h => h.exec('BEGIN IMMEDIATE'))
        try {
          const result = await task()
          handle.exec('COMMIT')
          return result
        } catch (error) {
          if (handle.inTransaction) handle.exec('ROLLBACK')
          throw error
        }
      })
      queue = next
      return next
    },
  }
  let registered = false
  return {
    kind: 'sqlite',
    open: () => {
      // Known to erasure once an agent uses it (never opens a file nobody used).
      if (!registered) register(backend)
      registered = true
      return backend
    },
    async close() {
      const pending = db
      db = undefined
      if (pending) (await pending.catch(() => undefined))?.close()
    },
  }
}
