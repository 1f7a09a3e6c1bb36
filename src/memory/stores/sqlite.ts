/**
 * `sqliteMemoryStore({ file })`: the memory event log kept in a SQLite table (better-sqlite3),
 * for apps that want one database file, several processes writing at once, and SQL to look inside.
 *
 * Source: issue 5, "`sqliteMemoryStore({ file })` on better-sqlite3 (WAL mode, busy timeout),
 * same contract and conformance suite as the JSONL store, keeping the same event history in a
 * table so that both stores are interchangeable and exportable".
 *
 * ## Design
 *
 * The table `memory_events` holds the very lines of the JSONL log (docs/log-format.md): one row
 * per event, `seq` as the primary key and the canonical JSON line, with its `v`, `seq`, `prev`,
 * `digest` (and `payloadDigest`), in `line`. A few header fields are copied into columns (`type`,
 * `record_id`, `store`, `partition`, `digest`) for SQL queries only; `line` is the source of truth.
 *
 * The lines are written, checked and folded by the JSONL store's own engine (`openMemoryLog` of
 * `../log.ts`) running on a private in-memory mirror of the table, and the adapter is the JSONL
 * store's (`memoryLogAdapter`), exactly as `inMemoryMemoryStore()` does: format, digests,
 * verification, supersede, delete, erase, compaction and search cannot drift apart between the
 * stores. SQLite adds what the mirror lacks: durability and transactions across processes.
 *
 * Every write is one `BEGIN IMMEDIATE` transaction (SQLite's write lock; other processes wait up
 * to `busyTimeoutMs`): copy the rows other processes committed into the mirror, let the engine
 * check and append the new lines (next `seq`, last `digest` as `prev`), insert those lines, `COMMIT`.
 * A failed transaction rolls back and the mirror is rebuilt from the table, so nothing
 * uncommitted stays visible. Inside one process, every factory of one file shares one connection
 * and mirror, and operations on it run one at a time.
 */
import { resolve } from 'node:path'
import type Database from 'better-sqlite3'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { agentError, isAgentError } from '../../errors.ts'
import { requireOptional } from '../../optional-dependency.ts'
import { createWorkspace } from '../../workspace/workspace.ts'
import type { Workspace } from '../../workspace/types.ts'
import { openMemoryLog, verifyLog, type MemoryLog, type MemoryLogCompaction, type MemoryLogVerification } from '../event-log.ts'
import { partitionKey, type MemoryEvent } from '../records.ts'
import type { MemoryStoreFactory } from '../types.ts'
import { memoryLogAdapter, type MemoryLogStoreAdapter } from './workspace-jsonl.ts'

/** Options of {@link sqliteMemoryStore}. Unknown keys are errors. */
export interface SqliteMemoryStoreOptions {
  /**
   * Path of the database file, absolute or relative to `process.cwd()` (resolved once, when the
   * factory is created). The file and its `-wal` / `-shm` companions are created when missing;
   * the folder must exist. `:memory:` is refused (use `inMemoryMemoryStore()`).
   */
  file: string
  /**
   * How long a write waits for another process's write transaction, in milliseconds, before it
   * fails with `MEMORY_SQLITE_BUSY`. Default 5000. The wait blocks this process's event loop
   * (SQLite's busy handler sleeps), so keep other writers' transactions short. The first factory
   * to open a file in a process sets it for that file.
   */
  busyTimeoutMs?: number
}

/** The factory {@link sqliteMemoryStore} returns. */
export interface SqliteMemoryStoreFactory extends MemoryStoreFactory {
  kind: 'sqlite'
  /** The absolute path of the database file. */
  readonly file: string
  create(): MemoryLogStoreAdapter
  /**
   * Every event of the database in `seq` order as the text of a JSONL log (one canonical line per
   * event, each ended by `\n`): written to a workspace file, `workspaceJsonlMemoryStore()` reads
   * the same records and `verifyLog()` checks it. Empty string for an empty store.
   */
  exportLog(): Promise<string>
  /**
   * Loads a JSONL log into an empty database, keeping every line byte for byte (same `seq`,
   * `prev`, `digest`). Returns the number of events imported.
   *
   * @throws AgentError `MEMORY_LOG_CORRUPT` when the text fails `verifyLog` or ends in an
   * unfinished (torn) write; `MEMORY_SQLITE_NOT_EMPTY` when the database already has events
   * (nothing is written in either case).
   */
  importLog(text: string): Promise<number>
  /** Checks every row as `verifyLog` checks a JSONL log (`seq`, `prev`, digests, each event's effect). */
  verify(): Promise<MemoryLogVerification>
  /** Closes this process's connection to the file (shared by every factory of the file) once queued operations finish; the next operation reopens it. */
  close(): Promise<void>
}

/** Default of {@link SqliteMemoryStoreOptions.busyTimeoutMs}, in milliseconds. */
export const DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 5000

/** Schema version kept in SQLite's `user_version`. */
const SCHEMA_VERSION = 1
const MIRROR_KEY = 'memory:memory.jsonl'
const OPTION_KEYS = new Set(['file', 'busyTimeoutMs'])

/**
 * Creates the SQLite store factory. Nothing is opened until the first operation. Every
 * `create()` (one per agent invocation) returns the same adapter over the database; the store
 * needs no workspace, and `context.writable` changes nothing (writes need a writable file).
 * The adapter is the JSONL store's, with `hardDelete` (erase + compaction of the table).
 *
 * @throws AgentError `MEMORY_STORE_OPTIONS_INVALID` (now) for a missing or blank `file`,
 * `:memory:` or a `file:` URI, a `busyTimeoutMs` that is not a whole number >= 0, or an unknown
 * option key. Operations throw `MEMORY_SQLITE_OPEN_FAILED` when the file cannot be opened (missing
 * folder, not a database, newer schema), `MEMORY_SQLITE_BUSY` when another process held the
 * write lock longer than `busyTimeoutMs`, `MEMORY_SQLITE_FAILED` for other SQLite errors,
 * `MEMORY_LOG_CORRUPT` when a row fails verification, and the adapter errors of the JSONL store.
 */
export function sqliteMemoryStore(options: SqliteMemoryStoreOptions): SqliteMemoryStoreFactory {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw optionsError('the options of sqliteMemoryStore() must be an object', 'call sqliteMemoryStore({ file: ".agent/memory.db" })')
  }
  const unknown = Object.keys(options).filter(option => !OPTION_KEYS.has(option))
  if (unknown.length > 0) {
    throw optionsError(`sqliteMemoryStore() got unknown option ${unknown.map(option => `"${option}"`).join(', ')}`, 'the options are `file` and `busyTimeoutMs`; check the spelling', { options: unknown })
  }
  if (typeof options.file !== 'string' || options.file.trim() === '') {
    throw optionsError('sqliteMemoryStore() needs `file`, the path of the database file', 'pass { file: ".agent/memory.db" }')
  }
  if (options.file === ':memory:' || options.file.startsWith('file:')) {
    throw optionsError(`sqliteMemoryStore() needs a file path, got ${JSON.stringify(options.file)}`, 'pass a path such as ".agent/memory.db", or use inMemoryMemoryStore() for records that need not persist')
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_SQLITE_BUSY_TIMEOUT_MS
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw optionsError(`\`busyTimeoutMs\` must be a whole number of milliseconds >= 0, got ${JSON.stringify(options.busyTimeoutMs)}`, `leave it out for ${DEFAULT_SQLITE_BUSY_TIMEOUT_MS}`)
  }
  const file = resolve(options.file)
  const handle = () => openHandle(file, busyTimeoutMs)
  let adapter: MemoryLogStoreAdapter | undefined
  return {
    kind: 'sqlite',
    file,
    create() {
      adapter ??= memoryLogAdapter(sqliteLog(file, handle))
      return adapter
    },
    exportLog: () => exclusive(handle(), async h => rowsText(h, 0)),
    importLog: text => exclusive(handle(), h => importRows(h, text)),
    async verify() {
      const text = await exclusive(handle(), async h => rowsText(h, 0))
      return verifyLog(await scratchWorkspace(text), MIRROR_KEY)
    },
    async close() {
      const open = handles.get(file)
      if (!open) return
      handles.delete(file)
      await open.queue
      open.db.close()
    },
  }
}

/** One connection per file and process, with the engine's mirror of the table and an operation queue. */
interface SqliteHandle {
  file: string
  db: Database.Database
  /** The engine's log over the mirror; `undefined` until built, and again after a failed write. */
  log: MemoryLog | undefined
  /** Last `seq` copied into the mirror. */
  copied: number
  /** `generation` of the table when the mirror was built (bumped by every compaction). */
  generation: number
  /** Tail of the operations on this connection: they run one at a time. */
  queue: Promise<unknown>
  statements: {
    after: Database.Statement<[number], Row>
    head: Database.Statement<[], { last: number | null; generation: number | null }>
    insert: Database.Statement<[number, string, string, string, string, string, string]>
    update: Database.Statement<[string, number]>
    bump: Database.Statement<[]>
    count: Database.Statement<[], { count: number }>
  }
}

interface Row {
  seq: number
  line: string
}

const handles = new Map<string, SqliteHandle>()

function openHandle(file: string, busyTimeoutMs: number): SqliteHandle {
  const existing = handles.get(file)
  if (existing) return existing
  // Loaded here, not at import: apps without the SQLite store need not install the native module.
  const Sqlite = requireOptional<typeof Database>('better-sqlite3', 'sqliteMemoryStore()')
  let db: Database.Database | undefined
  try {
    db = new Sqlite(file)
    db.pragma(`busy_timeout = ${busyTimeoutMs}`)
    // WAL: readers never block the writer, and a commit is one append to the -wal file.
    db.pragma('journal_mode = WAL')
    // Erased payloads are overwritten with zeros in the file, not left in free pages.
    db.pragma('secure_delete = ON')
    const version = db.pragma('user_version', { simple: true }) as number
    if (version > SCHEMA_VERSION) {
      throw agentError('MEMORY_SQLITE_OPEN_FAILED', `the memory database "${file}" has schema version ${version}, newer than this package's ${SCHEMA_VERSION}`, 'upgrade vite-agent-memory, or point `file` at another database', { file, version })
    }
    db.exec(`
      CREATE TABLE IF NOT EXISTS memory_events (
        seq INTEGER PRIMARY KEY,
        type TEXT NOT NULL,
        record_id TEXT NOT NULL,
        store TEXT NOT NULL,
        partition TEXT NOT NULL,
        digest TEXT NOT NULL,
        line TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS memory_events_record ON memory_events (record_id);
      CREATE INDEX IF NOT EXISTS memory_events_partition ON memory_events (store, partition);
      CREATE TABLE IF NOT EXISTS memory_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
      INSERT OR IGNORE INTO memory_meta (key, value) VALUES ('generation', 0);
      PRAGMA user_version = ${SCHEMA_VERSION};
    `)
  }
  catch (error) {
    db?.close()
    if (isAgentError(error)) throw error
    throw agentError('MEMORY_SQLITE_OPEN_FAILED', `the memory database "${file}" could not be opened: ${error instanceof Error ? error.message : String(error)}`, 'check that the folder exists and is writable and that the file is a SQLite database', { file }, error)
  }
  const handle: SqliteHandle = {
    file,
    db,
    log: undefined,
    copied: 0,
    generation: 0,
    queue: Promise.resolve(),
    statements: {
      after: db.prepare('SELECT seq, line FROM memory_events WHERE seq > ? ORDER BY seq'),
      head: db.prepare('SELECT (SELECT max(seq) FROM memory_events) AS last, (SELECT value FROM memory_meta WHERE key = \'generation\') AS generation'),
      insert: db.prepare('INSERT INTO memory_events (seq, type, record_id, store, partition, digest, line) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      update: db.prepare('UPDATE memory_events SET line = ? WHERE seq = ?'),
      bump: db.prepare('UPDATE memory_meta SET value = value + 1 WHERE key = \'generation\''),
      count: db.prepare('SELECT count(*) AS count FROM memory_events'),
    },
  }
  handles.set(file, handle)
  return handle
}

/** Runs `task` after every earlier operation on the handle (one connection runs one transaction at a time). */
function exclusive<T>(handle: SqliteHandle, task: (handle: SqliteHandle) => Promise<T>): Promise<T> {
  const run = handle.queue.then(() => task(handle))
  handle.queue = run.catch(() => undefined)
  return run
}

/** The {@link MemoryLog} the shared adapter runs on: the engine's log over the mirror, kept in step with the table. */
function sqliteLog(file: string, handle: () => SqliteHandle): MemoryLog {
  return {
    get workspace(): Workspace {
      return mirrorOf(handle())
    },
    key: file,
    view: read => exclusive(handle(), async (h) => {
      const log = await pull(h)
      return log.view(read)
    }),
    write: build => exclusive(handle(), h => transaction(h, async (log) => {
      const before = (await log.workspace.stat(MIRROR_KEY))?.size ?? 0
      const records = await log.write(build)
      const added = await log.workspace.readBytes(MIRROR_KEY, before)
      if (added && added.length > 0) insertLines(h, new TextDecoder().decode(added))
      return records
    })),
    compact: () => exclusive(handle(), h => compactRows(h)),
    // The table is the durable copy and the mirror lives in memory: nothing to checkpoint.
    checkpoint: async () => false,
    indexBuilt: () => {},
  }
}

function mirrorOf(handle: SqliteHandle): Workspace {
  handle.log ??= openMemoryLog(createWorkspace({ storage: createStorage({ driver: memoryDriver() }) }), MIRROR_KEY, { checkpointEvery: false })
  return handle.log.workspace
}

/**
 * Brings the mirror up to date with the table: appends rows committed since it last looked, or
 * rebuilds it (a fresh engine state) after a compaction or a failed write. Returns the log.
 */
async function pull(handle: SqliteHandle): Promise<MemoryLog> {
  const head = query(handle, () => handle.statements.head.get()!)
  const last = head.last ?? 0
  const generation = head.generation ?? 0
  if (!handle.log || generation !== handle.generation || last < handle.copied) {
    handle.log = undefined
    handle.copied = 0
    handle.generation = generation
  }
  const workspace = mirrorOf(handle)
  if (last > handle.copied) {
    await workspace.append(MIRROR_KEY, rowsText(handle, handle.copied))
    handle.copied = last
  }
  return handle.log!
}

function rowsText(handle: SqliteHandle, after: number): string {
  const rows = query(handle, () => handle.statements.after.all(after))
  let text = ''
  for (const row of rows) text += `${row.line}\n`
  return text
}

/** Inserts complete lines (each ended by `\n`) as rows; each line's `seq` must follow the last copied one. */
function insertLines(handle: SqliteHandle, text: string): void {
  for (const line of text.slice(0, -1).split('\n')) {
    const event = JSON.parse(line) as MemoryEvent
    if (event.seq !== handle.copied + 1) {
      throw agentError('MEMORY_SQLITE_FAILED', `the line with seq ${event.seq} does not follow seq ${handle.copied} of the memory database "${handle.file}"`, 'retry the write; the table was not changed', { file: handle.file })
    }
    handle.statements.insert.run(event.seq, event.type, event.recordId, event.store, partitionKey(event.store, event.scope), event.digest, line)
    handle.copied = event.seq
  }
}

/**
 * Runs `task` inside `BEGIN IMMEDIATE` ... `COMMIT` with the mirror up to date. On any failure
 * the transaction rolls back and the mirror is dropped (rebuilt from the table next time), so
 * lines the engine appended but SQLite did not commit are never seen.
 */
async function transaction<T>(handle: SqliteHandle, task: (log: MemoryLog) => Promise<T>): Promise<T> {
  const { db } = handle
  query(handle, () => db.exec('BEGIN IMMEDIATE'))
  let size: number | undefined
  try {
    const log = await pull(handle)
    size = (await log.workspace.stat(MIRROR_KEY))?.size ?? 0
    const result = await task(log)
    query(handle, () => db.exec('COMMIT'))
    return result
  }
  catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK')
    // Keep the mirror when the engine appended nothing (a refused write); else rebuild it from the table.
    const now = handle.log ? ((await handle.log.workspace.stat(MIRROR_KEY))?.size ?? 0) : undefined
    if (size === undefined || now !== size) {
      handle.log = undefined
      handle.copied = 0
    }
    throw sqliteError(handle, error)
  }
}

/**
 * Compaction (the engine's rule: payloads of erased records removed, headers kept so the chain
 * verifies) applied to the rows: the engine compacts the mirror, changed lines are written back
 * in one transaction, the generation is bumped (other processes rebuild their mirror), and the
 * WAL is checkpointed so the removed text is gone from the -wal file too.
 */
async function compactRows(handle: SqliteHandle): Promise<MemoryLogCompaction> {
  const result = await transaction(handle, async (log) => {
    const compaction = await log.compact()
    const text = (await log.workspace.readText(MIRROR_KEY)) ?? ''
    const rows = new Map(handle.statements.after.all(0).map(row => [row.seq, row.line]))
    const lines = text === '' ? [] : text.slice(0, -1).split('\n')
    if (lines.length !== rows.size) {
      throw agentError('MEMORY_SQLITE_FAILED', `compaction of the memory database "${handle.file}" changed the number of events`, 'restore the database from a backup and report this error', { file: handle.file })
    }
    let changed = 0
    lines.forEach((line, index) => {
      if (rows.get(index + 1) !== line) {
        handle.statements.update.run(line, index + 1)
        changed++
      }
    })
    if (changed > 0) handle.statements.bump.run()
    return { compaction, changed }
  })
  if (result.changed > 0) query(handle, () => handle.db.pragma('wal_checkpoint(TRUNCATE)'))
  return result.compaction
}

async function importRows(handle: SqliteHandle, text: string): Promise<number> {
  if (typeof text !== 'string') {
    throw agentError('MEMORY_LOG_CORRUPT', 'importLog() needs the text of a JSONL log', 'pass the file\'s text, for example readFileSync(path, "utf8")')
  }
  const verification = await verifyLog(await scratchWorkspace(text), MIRROR_KEY)
  if (!verification.ok || verification.torn) {
    const why = verification.firstBad ? `line ${verification.firstBad.line} fails verification: ${verification.firstBad.reason}` : `it ends in an unfinished write at line ${verification.torn!.line}`
    throw agentError('MEMORY_LOG_CORRUPT', `the JSONL log given to importLog() ${why}`, 'import a complete, verified log (verifyLog() reports the first bad line); nothing was imported', { ...(verification.firstBad ?? {}) })
  }
  return transaction(handle, async () => {
    if (handle.statements.count.get()!.count > 0) {
      throw agentError('MEMORY_SQLITE_NOT_EMPTY', `the memory database "${handle.file}" already has events`, 'import into a new database file (an imported chain starts at seq 1)', { file: handle.file })
    }
    if (text !== '') insertLines(handle, text)
    // The rows went to the table only: rebuild the mirror from it on the next operation.
    handle.log = undefined
    handle.copied = 0
    return verification.lines
  })
}

/** A private in-memory workspace holding `text` at the mirror key, to run `verifyLog` on it. */
async function scratchWorkspace(text: string): Promise<Workspace> {
  const workspace = createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
  if (text !== '') await workspace.append(MIRROR_KEY, text)
  return workspace
}

/** Runs a SQLite call, turning its errors into AgentErrors with a fix. */
function query<T>(handle: SqliteHandle, call: () => T): T {
  try {
    return call()
  }
  catch (error) {
    throw sqliteError(handle, error)
  }
}

/** An AgentError as is; a SQLite error as `MEMORY_SQLITE_BUSY` or `MEMORY_SQLITE_FAILED`. */
function sqliteError(handle: SqliteHandle, error: unknown): unknown {
  if (isAgentError(error)) return error
  const code = (error as { code?: unknown } | undefined)?.code
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
    return agentError('MEMORY_SQLITE_BUSY', `another connection held the write lock of the memory database "${handle.file}" for longer than the busy timeout`, 'retry the operation, raise `busyTimeoutMs`, or keep other writers\' transactions short', { file: handle.file }, error)
  }
  if (typeof code !== 'string' || !code.startsWith('SQLITE')) return error
  return agentError('MEMORY_SQLITE_FAILED', `the memory database "${handle.file}" failed: ${error instanceof Error ? error.message : String(error)}`, 'check the database file and the disk (verify() reports a bad row)', { file: handle.file, sqliteCode: code }, error)
}

function optionsError(why: string, fix: string, details?: Record<string, unknown>) {
  return agentError('MEMORY_STORE_OPTIONS_INVALID', why, fix, details)
}
