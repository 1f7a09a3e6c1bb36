/**
 * `sqliteMemoryStore({ file })`: the memory event log and the current records in one SQLite
 * database file (better-sqlite3), for apps that want one database file, several processes
 * writing at once, and SQL to look inside.
 *
 * Source: memory-slots document (SQLite provider). The same contract and conformance suite as the
 * JSONL store and an exportable event history, on SQLite itself.
 *
 * ## Design
 *
 * Tables (docs/sqlite-store.md, `./sqlite/schema.ts`): `memory_events` holds the very lines of
 * the JSONL log (docs/log-format.md), one row per event, and is where a record is stored; the row
 * of a record's `remember` line also holds what lookups, filters and search need of the record
 * (the record is the fold of the lines it names, `./sqlite/lines.ts`); `memory_fts` a contentless
 * FTS5 index of the records' search terms. Each write is one `BEGIN IMMEDIATE`
 * transaction that reads the chain head and the rows it names, inserts the new lines and updates
 * the records (`./sql/core.ts` builds the lines and rows), or, for a plain remember, its one
 * insert after the head the connection kept from its last commit (`SqliteWriteTx`); the postings of new records are
 * written after, a tail at a time, before the next ranked search (`./sqlite/fts-tail.ts`). Reads and searches are
 * queries: nothing of the store is folded in process memory (a connection keeps only scope
 * statistics, `./sqlite/stats-cache.ts`), and other processes' commits are seen by the next query. Inside one process, every factory of one file shares one connection,
 * and operations on it run one at a time.
 */
import * as crypto from 'node:crypto'
import { resolve } from 'node:path'
import type Database from 'better-sqlite3'
import { agentError, isAgentError } from '../../errors.ts'
import { nativeAddonLoadError, requireOptional } from '../../optional-dependency.ts'
import { verifyLog, type MemoryLogVerification } from '../event-log.ts'
import { scratchLogWorkspace, SCRATCH_LOG_KEY } from '../../workspace/scratch.ts'
import type { MemoryRecord, MemoryStoreFactory } from '../types.ts'
import { foldLines, recordHaystack, sqlMemoryAdapter, type SqlBackend, type SqlPartitionStats, type SqlStoreAdapter, type SqlEventRow, type SqlRecordRow, type SqlStoredRecord, type SqlWriteTx } from './sql/core.ts'
import { laterSeqs, recordOfLines } from './sqlite/lines.ts'
import { migrate, SCHEMA_VERSION } from './sqlite/schema.ts'
import { ScopeStatsCache } from './sqlite/stats-cache.ts'
import { FtsTail } from './sqlite/fts-tail.ts'
import { lazyStatements } from './sqlite/statements.ts'
import { eraseRecordVectors, type MemoryVectorEntry, type MemoryVectorStore } from '../vectors-store.ts'

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

/**
 * The adapter of a SQL store: the store contract, `hardDelete`, and `writeScope` (scope-write.ts),
 * the transaction that retention, scope erasure and import run in. It has no in-memory `log`.
 */
export type SqlMemoryStoreAdapter = SqlStoreAdapter

/** The factory {@link sqliteMemoryStore} returns. */
export interface SqliteMemoryStoreFactory extends MemoryStoreFactory {
  kind: 'sqlite'
  /** The absolute path of the database file. */
  readonly file: string
  create(): SqlMemoryStoreAdapter
  /**
   * Every event of the database in `seq` order as the text of a JSONL log (one canonical line per
   * event, each ended by `\n`): written to a workspace file, `workspaceJsonlMemoryStore()` reads
   * the same records and `verifyLog()` checks it. Empty string for an empty store.
   */
  exportLog(): Promise<string>
  /**
   * Loads a JSONL log into an empty database, keeping every line byte for byte (same `seq`,
   * `prev`, `digest`), and folds it into the records table. Returns the number of events imported.
   *
   * @throws AgentError `MEMORY_LOG_CORRUPT` when the text fails `verifyLog` or ends in an
   * unfinished (torn) write; `MEMORY_SQLITE_NOT_EMPTY` when the database already has events
   * (nothing is written in either case).
   */
  importLog(text: string): Promise<number>
  /** Checks every event row as `verifyLog` checks a JSONL log (`seq`, `prev`, digests, each event's effect). Reads all rows. */
  verify(): Promise<MemoryLogVerification>
  /** Closes this process's connection to the file (shared by every factory of the file) once queued operations finish; the next operation reopens it. */
  close(): Promise<void>
}

/** Default of {@link SqliteMemoryStoreOptions.busyTimeoutMs}, in milliseconds. */
export const DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 5000

const OPTION_KEYS = new Set(['file', 'busyTimeoutMs'])
/** Field numbers of the FTS5 columns, as `SqlPosting.field` counts them. */
const FIELDS = { title: 0, content: 1, tags: 2, dates: 3 } as const

/**
 * Creates the SQLite store factory. Nothing is opened until the first operation. Every
 * `create()` (one per agent invocation) returns the same adapter over the database; the store
 * needs no workspace, and `context.writable` changes nothing (writes need a writable file).
 *
 * @throws AgentError `MEMORY_STORE_OPTIONS_INVALID` (now) for a missing or blank `file`,
 * `:memory:` or a `file:` URI, a `busyTimeoutMs` that is not a whole number >= 0, or an unknown
 * option key. Operations throw `MEMORY_SQLITE_OPEN_FAILED` when the file cannot be opened (missing
 * folder, not a database, newer schema), `MEMORY_SQLITE_BUSY` when another process held the
 * write lock longer than `busyTimeoutMs`, `MEMORY_SQLITE_FAILED` for other SQLite errors, and the
 * adapter errors of the JSONL store.
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
  let adapter: SqlMemoryStoreAdapter | undefined
  return {
    kind: 'sqlite',
    file,
    create() {
      adapter ??= withSqliteVectors(sqlMemoryAdapter(sqliteBackend(handle), { hash: sha256 }), handle)
      return adapter
    },
    exportLog: () => exclusive(handle(), async h => linesText(h)),
    importLog: text => exclusive(handle(), h => importRows(h, text)),
    async verify() {
      const text = await exclusive(handle(), async h => linesText(h))
      return verifyLog(await scratchLogWorkspace(text), SCRATCH_LOG_KEY)
    },
    async close() {
      const open = handles.get(file)
      if (!open) return
      handles.delete(file)
      open.fts.stop()
      await open.queue
      // The tail is indexed now, so the next process's first search does not (it would, were this to fail).
      try { open.fts.catchUp() } catch {}
      open.db.close()
    },
  }
}

// node:crypto's SHA-256 (this store runs on Node only, where better-sqlite3 runs).
// `crypto.hash` (Node 20.12+) is the one-shot form: no Hash object per digest.
const oneShot = (crypto as { hash?: (algorithm: string, data: string) => string }).hash
function sha256(text: string): string {
  return oneShot ? oneShot('sha256', text) : crypto.createHash('sha256').update(text, 'utf8').digest('hex')
}

/** One connection per file and process, with its prepared statements and an operation queue. */
interface SqliteHandle {
  file: string
  db: Database.Database
  /** Tail of the operations on this connection: they run one at a time. */
  queue: Promise<unknown>
  /** Operations queued or running on this connection. */
  running: number
  /** Marks one operation of the queue done. */
  settled: () => void
  statements: ReturnType<typeof prepare>
  /** Scope statistics, kept while no other connection commits. */
  stats: ScopeStatsCache
  /** Partition ids by key. */
  partitions: PartitionIds
  /** The FTS5 index's tail: records written, not yet indexed. */
  fts: FtsTail
  /** The write transaction object, made at the first write and reused by every write. */
  writer?: SqliteWriteTx
}

const handles = new Map<string, SqliteHandle>()

function openHandle(file: string, busyTimeoutMs: number): SqliteHandle {
  const existing = handles.get(file)
  if (existing) return existing
  // Loaded here, not at import: apps without the SQLite store need not install the native module.
  const Sqlite = requireOptional<typeof Database>('better-sqlite3', 'sqliteMemoryStore()')
  let db: Database.Database | undefined
  try {
    // `timeout` is SQLite's busy timeout (sqlite3_busy_timeout, what `PRAGMA busy_timeout` sets).
    db = new Sqlite(file, { timeout: busyTimeoutMs })
    // WAL: readers never block the writer, and a commit is one append to the -wal file. NORMAL
    // (better-sqlite3's default in WAL, stated here): a commit survives the process's death, the
    // checkpoints sync the files. Erased payloads are overwritten with zeros in the file, not left
    // in free pages (secure_delete). One exec: no statement object per setting.
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA secure_delete = ON')
    if ((db.pragma('user_version', { simple: true }) as number) !== SCHEMA_VERSION) {
      const upgrading = db
      migrate(db, file, (rows) => {
        const upgrade = prepare(upgrading)
        writeRows(upgrade, new PartitionIds(upgrade), rows)
      })
    }
    // Record vectors of hybrid search: a table of its own, so no schema version change.
    db.exec(VECTORS_SCHEMA)
  }
  catch (error) {
    db?.close()
    if (isAgentError(error)) throw error
    const code = (error as { code?: unknown } | undefined)?.code
    const addon = nativeAddonLoadError('better-sqlite3', 'sqliteMemoryStore()', error)
    if (addon) throw addon
    if (code === 'SQLITE_BUSY') throw agentError('MEMORY_SQLITE_BUSY', `another connection held the write lock of the memory database "${file}" while this one created its tables`, 'retry the operation or raise `busyTimeoutMs`', { file }, error)
    throw agentError('MEMORY_SQLITE_OPEN_FAILED', `the memory database "${file}" could not be opened: ${error instanceof Error ? error.message : String(error)}`, 'check that the folder exists and is writable and that the file is a SQLite database', { file }, error)
  }
  const statements = prepare(db)
  const dataVersion = () => statements.dataVersion.get()!.data_version
  const handle: SqliteHandle = {
    file,
    db,
    queue: Promise.resolve(),
    running: 0,
    settled: () => { handle.running-- },
    statements,
    partitions: new PartitionIds(statements),
    stats: new ScopeStatsCache(dataVersion),
    fts: new FtsTail(db, dataVersion, task => void exclusive(handle, async () => task())),
  }
  handles.set(file, handle)
  return handle
}

/** The partition id of a partition key, as a subquery (`memory_partitions.key` is unique). */
const PARTITION = '(SELECT id FROM memory_partitions WHERE key = ?)'
/** A record's row: the row of its `remember` line, the one row of the record with `status` set. */
const RECORD = 'status IS NOT NULL'
/** The record columns of an event row, in the order the insert and update statements take them. */
type RecordColumns = [partition: number, status: string, createdMs: number, contentHash: number | null, haystack: string, titleLen: number, contentLen: number, tagsLen: number, later: string | null]

function prepare(db: Database.Database) {
  return lazyStatements({
    begin: () => db.prepare('BEGIN IMMEDIATE'),
    dataVersion: () => db.prepare<[], { data_version: number }>('PRAGMA data_version'),
    commit: () => db.prepare('COMMIT'),
    head: () => db.prepare<[], { seq: number; digest: string }>('SELECT seq, digest FROM memory_events ORDER BY seq DESC LIMIT 1'),
    digestAt: () => db.prepare<[number], { digest: string }>('SELECT digest FROM memory_events WHERE seq = ?'),
    changedIds: () => db.prepare<[number, string], { record_id: string }>(`SELECT e.record_id FROM memory_events e JOIN memory_events r ON r.record_id = e.record_id AND r.${RECORD} WHERE e.seq > ? AND r.partition = ${PARTITION} GROUP BY e.record_id ORDER BY min(e.seq)`),
    lines: () => db.prepare<[], { line: string }>('SELECT line FROM memory_events ORDER BY seq'),
    line: () => db.prepare<[number], { line: string }>('SELECT line FROM memory_events WHERE seq = ?'),
    count: () => db.prepare<[], { count: number }>('SELECT count(*) AS count FROM memory_events'),
    // The line of a later event (supersede, delete, erase): no record columns.
    insertEvent: () => db.prepare<[number, string, string, string, string]>('INSERT INTO memory_events (seq, type, record_id, digest, line) VALUES (?, ?, ?, ?, ?)'),
    // A `remember` line with its record's columns: one row, one statement.
    insertRecordEvent: () => db.prepare<[number, string, string, string, string, ...RecordColumns]>('INSERT INTO memory_events (seq, type, record_id, digest, line, partition, status, created_ms, content_hash, haystack, title_len, content_len, tags_len, later) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'),
    // The record columns of a line already in the table (import of events, then their records).
    setRecord: () => db.prepare<[...RecordColumns, number]>('UPDATE memory_events SET partition = ?, status = ?, created_ms = ?, content_hash = ?, haystack = ?, title_len = ?, content_len = ?, tags_len = ?, later = ? WHERE seq = ?'),
    eventSeqs: () => db.prepare<[string], { seq: number; later: string | null }>(`SELECT seq, later FROM memory_events WHERE record_id = ? AND ${RECORD}`),
    updateLine: () => db.prepare<[string, number]>('UPDATE memory_events SET line = ? WHERE seq = ?'),
    record: () => db.prepare<[string], StoredRow>(`SELECT status, later, line FROM memory_events WHERE record_id = ? AND ${RECORD}`),
    updateRecord: () => db.prepare<[string, number, number | null, string, number, number, number, string, string], { seq: number }>(`UPDATE memory_events SET status = ?, created_ms = ?, content_hash = ?, haystack = ?, title_len = ?, content_len = ?, tags_len = ?, later = ltrim(coalesce(later, '') || ' ' || ?) WHERE record_id = ? AND ${RECORD} RETURNING seq`),
    // A new partition's id (the key is unique: a write of another connection cannot add it while this one holds the write lock).
    addPartition: () => db.prepare<[string]>('INSERT INTO memory_partitions (key) VALUES (?)'),
    partitionId: () => db.prepare<[string], { id: number }>('SELECT id FROM memory_partitions WHERE key = ?'),
    partitionIds: () => db.prepare<[number], { id: number; key: string }>('SELECT id, key FROM memory_partitions ORDER BY id LIMIT ?'),
    // What BM25F needs of a scope, summed from the covering index memory_events_partition.
    stats: () => db.prepare<[string], { active: number; title_sum: number; content_sum: number; tags_sum: number; title_docs: number; content_docs: number; tags_docs: number }>(`SELECT count(*) AS active,
      coalesce(sum(title_len), 0) AS title_sum, coalesce(sum(content_len), 0) AS content_sum, coalesce(sum(tags_len), 0) AS tags_sum,
      coalesce(sum(title_len > 0), 0) AS title_docs, coalesce(sum(content_len > 0), 0) AS content_docs, coalesce(sum(tags_len > 0), 0) AS tags_docs
      FROM memory_events WHERE partition = ${PARTITION} AND status = 'active'`),
    insertFts: () => db.prepare<[number, string, string, string, string]>('INSERT INTO memory_fts (rowid, title, content, tags, dates) VALUES (?, ?, ?, ?, ?)'),
    // Import indexes every record it writes.
    markIndexed: () => db.prepare('UPDATE memory_fts_state SET indexed_seq = (SELECT coalesce(max(seq), 0) FROM memory_events) WHERE id = 1'),
    deleteFts: () => db.prepare<[number]>('DELETE FROM memory_fts WHERE rowid = ?'),
    termCount: () => db.prepare<[string], { count: number }>('SELECT count(*) AS count FROM memory_fts WHERE memory_fts MATCH ?'),
    // FTS5's BM25 with the field weights of the default ranking (title 2, content 1, tags 2, dates 1.5): the order the top-k cut takes candidates in.
    termCandidates: () => db.prepare<[string, number], { seq: number }>('SELECT rowid AS seq FROM memory_fts WHERE memory_fts MATCH ? ORDER BY bm25(memory_fts, 2.0, 1.0, 2.0, 1.5), rowid DESC LIMIT ?'),
    duplicates: () => db.prepare<[string, number], StoredRow>(`SELECT status, later, line FROM memory_events WHERE partition = ${PARTITION} AND status = 'active' AND content_hash = ? ORDER BY seq`),
    read: () => db.prepare<[string, string], StoredRow>(`SELECT status, later, line FROM memory_events WHERE record_id = ? AND ${RECORD} AND partition = ${PARTITION} AND status != 'erased'`),
    export: () => db.prepare<[string], StoredRow>(`SELECT status, later, line FROM memory_events WHERE partition = ${PARTITION} AND status != 'erased' ORDER BY seq`),
    // Counted and ordered in the scope index (haystack, created_ms), the lines read for the page only.
    substring: () => db.prepare<[{ partition: string; needle: string; limit: number; offset: number }], { line: string; score: number }>(`SELECT e.line, m.score FROM (
      SELECT seq, created_ms, (length(haystack) - length(replace(haystack, @needle, ''))) / length(@needle) AS score FROM memory_events
      WHERE partition = (SELECT id FROM memory_partitions WHERE key = @partition) AND status = 'active' AND instr(haystack, @needle) > 0
      ORDER BY score DESC, created_ms DESC, seq DESC LIMIT @limit OFFSET @offset) m JOIN memory_events e ON e.seq = m.seq
      ORDER BY m.score DESC, m.created_ms DESC, m.seq DESC`),
  })
}

/** What BM25F needs of a scope, summed from the index (see {@link ScopeStatsCache}). */
function scopeStats(statements: SqliteHandle['statements'], partition: string): SqlPartitionStats {
  const row = statements.stats.get(partition)!
  return { active: row.active, lengthSums: [row.title_sum, row.content_sum, row.tags_sum], fieldCounts: [row.title_docs, row.content_docs, row.tags_docs] }
}

/** A record row with its `remember` line, as reads select it. */
interface StoredRow {
  status: string
  later: string | null
  line: string
}

/** The record of a row: its `remember` line folded with the lines of its later events (none for an active record). */
function recordOf(statements: SqliteHandle['statements'], row: StoredRow): MemoryRecord {
  if (row.later === null || row.status === 'active') return recordOfLines([row.line])
  return recordOfLines([row.line, ...laterSeqs(row.later).map(seq => statements.line.get(seq)!.line)])
}

/** The record columns of a row (`partition`: its partition's id). */
function recordColumns(row: SqlRecordRow, partition: number): RecordColumns {
  return [partition, row.status, row.createdMs, row.contentHash, recordHaystack(row), ...row.lengths, laterColumn(row)]
}

/** The `later` column of a new record's row: the seqs of its events after its `remember` line, `NULL` for none. */
function laterColumn(row: SqlRecordRow): string | null {
  return row.events.length > 1 ? row.events.slice(1).join(' ') : null
}

function insertTerms(statements: SqliteHandle['statements'], seq: number, row: SqlRecordRow): void {
  if (row.titleTerms.length + row.contentTerms.length + row.tagTerms.length + row.dateTerms.length > 0) statements.insertFts.run(seq, row.titleTerms.join(' '), row.contentTerms.join(' '), row.tagTerms.join(' '), row.dateTerms.join(' '))
}

/**
 * The ids of partition keys: committed ones kept per connection (an id never changes once
 * committed), the ones a write transaction created kept apart until it commits. The first key a
 * connection does not know loads the ids of every partition at once (up to
 * {@link PartitionIds.MAX}), so the first write into each scope does not ask for its id alone.
 */
class PartitionIds {
  static readonly MAX = 100_000
  private readonly committed = new Map<string, number>()
  private pending = new Map<string, number>()
  private loaded = false
  constructor(private readonly statements: ReturnType<typeof prepare>) {}

  /** The id of `key` when this connection knows it committed, else `undefined` (no statement runs). */
  committedId(key: string): number | undefined {
    return this.committed.get(key)
  }

  /** The id of `key`, adding its row when missing (inside a write transaction). */
  of(key: string): number {
    const known = this.committed.get(key) ?? this.pending.get(key)
    if (known !== undefined) return known
    if (!this.loaded) {
      this.loaded = true
      for (const row of this.statements.partitionIds.all(PartitionIds.MAX)) if (!this.committed.has(row.key)) this.keep(row.key, row.id)
      const found = this.committed.get(key)
      if (found !== undefined) return found
    }
    // A row this transaction did not add was committed (by this connection or another).
    const stored = this.statements.partitionId.get(key)?.id
    if (stored !== undefined) {
      this.keep(key, stored)
      return stored
    }
    this.statements.addPartition.run(key)
    const id = this.statements.partitionId.get(key)!.id
    this.pending.set(key, id)
    return id
  }

  /** The write committed: its ids are kept (the oldest leave first past {@link PartitionIds.MAX}). */
  commit(): void {
    if (this.pending.size === 0) return
    for (const [key, id] of this.pending) this.keep(key, id)
    this.pending = new Map()
  }

  private keep(key: string, id: number): void {
    if (this.committed.size >= PartitionIds.MAX) this.committed.delete(this.committed.keys().next().value!)
    this.committed.set(key, id)
  }

  /** The write rolled back: ids it created are forgotten. */
  rollBack(): void {
    if (this.pending.size > 0) this.pending = new Map()
  }
}

/** Record rows of lines already in the table (import, the upgrade of schema 1), partitions first. */
function writeRows(statements: SqliteHandle['statements'], ids: PartitionIds, rows: readonly SqlRecordRow[]): void {
  for (const row of rows) {
    statements.setRecord.run(...recordColumns(row, ids.of(row.partition)), row.seq)
    insertTerms(statements, row.seq, row)
  }
}

const VECTORS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS memory_vectors (
    id INTEGER PRIMARY KEY,
    record_id TEXT NOT NULL,
    model TEXT NOT NULL,
    dims INTEGER NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (record_id, model)
  );
`

/** The adapter with its record vectors in the database ({@link sqliteVectorStore}); `hardDelete` removes the record's vectors too. */
function withSqliteVectors<A extends SqlMemoryStoreAdapter>(adapter: A, handle: () => SqliteHandle): A {
  const vectors = sqliteVectorStore(handle)
  return {
    ...adapter,
    vectors,
    async hardDelete(target, id, options) {
      const erased = await adapter.hardDelete(target, id, options)
      if (erased) await eraseRecordVectors(vectors, [id])
      return erased
    },
  }
}

/**
 * Record vectors in the table `memory_vectors`: one row per record and model, the
 * vector as a BLOB of little-endian float32. `read` takes the rows added since the cursor (the
 * highest row id seen); `write` replaces a record's row of the same model (it gets a new row id,
 * so other processes read it again); `remove` deletes the rows of erased records and checkpoints
 * the WAL, so with `secure_delete` the vectors are gone from the database file and the -wal file.
 */
function sqliteVectorStore(handle: () => SqliteHandle): MemoryVectorStore {
  return {
    read: cursor => exclusive(handle(), async (h) => {
      const after = typeof cursor === 'number' ? cursor : 0
      const rows = query(h, () => h.db.prepare('SELECT id, record_id, model, dims, vector FROM memory_vectors WHERE id > ? ORDER BY id').all(after)) as Array<{ id: number; record_id: string; model: string; dims: number; vector: Buffer }>
      const entries: MemoryVectorEntry[] = []
      for (const row of rows) {
        if (row.vector.length !== row.dims * 4) continue
        const vector = new Float32Array(row.dims)
        for (let i = 0; i < row.dims; i++) vector[i] = row.vector.readFloatLE(i * 4)
        entries.push({ id: row.record_id, model: row.model, vector })
      }
      return { entries, cursor: rows.at(-1)?.id ?? after, reset: false }
    }),
    write: entries => exclusive(handle(), async (h) => {
      if (entries.length === 0) return
      query(h, () => {
        const insert = h.db.prepare('INSERT OR REPLACE INTO memory_vectors (record_id, model, dims, vector) VALUES (?, ?, ?, ?)')
        h.db.transaction(() => {
          for (const entry of entries) {
            const bytes = Buffer.alloc(entry.vector.length * 4)
            entry.vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4))
            insert.run(entry.id, entry.model, entry.vector.length, bytes)
          }
        })()
      })
    }),
    remove: ids => exclusive(handle(), async (h) => {
      if (ids.length === 0) return
      query(h, () => {
        const remove = h.db.prepare('DELETE FROM memory_vectors WHERE record_id = ?')
        h.db.transaction(() => { for (const id of ids) remove.run(id) })()
        h.db.pragma('wal_checkpoint(TRUNCATE)')
      })
    }),
  }
}

/**
 * Runs `task` after every earlier operation on the handle (one connection runs one transaction at
 * a time); on an idle handle it starts at once, without waiting a turn of the microtask queue.
 */
function exclusive<T>(handle: SqliteHandle, task: (handle: SqliteHandle) => Promise<T>): Promise<T> {
  const idle = handle.running === 0
  handle.running++
  let run: Promise<T>
  try {
    run = idle ? task(handle) : handle.queue.then(() => task(handle))
  }
  catch (error) {
    run = Promise.reject(error)
  }
  handle.queue = run.then(handle.settled, handle.settled)
  return run
}

/** An FTS5 query matching exactly the one index token `term` (a string, so nothing in it is query syntax); several are joined with OR. */
function ftsPhrase(term: string): string {
  return `"${term.replaceAll('"', '""')}"`
}

/** The {@link SqlBackend} of one file: each operation runs on the file's connection, in its queue. */
function sqliteBackend(handle: () => SqliteHandle): SqlBackend {
  const readOnly = <T>(task: (h: SqliteHandle) => T) => exclusive(handle(), async h => query(h, () => task(h)))
  // A read of the FTS5 postings: the tail of records not yet indexed is indexed first (fts-tail.ts).
  const readIndex = <T>(task: (h: SqliteHandle) => T) => readOnly((h) => {
    h.fts.catchUp()
    return task(h)
  })
  return {
    // The postings are derived from the lines by fts-tail.ts: a write counts the field lengths only.
    deferredTerms: true,
    write: task => exclusive(handle(), h => writeOn(h, task)),
    read: (partition, id) => readOnly((h) => {
      const row = h.statements.read.get(id, partition)
      return row ? recordOf(h.statements, row) : undefined
    }),
    export: partition => readOnly(h => h.statements.export.all(partition).map(row => recordOf(h.statements, row))),
    substring: (partition, needle, page) => readOnly(h => h.statements.substring.all({ partition, needle, limit: page.limit, offset: page.offset }).map(row => ({ record: recordOfLines([row.line]), score: row.score }))),
    postings: (partition, terms) => readIndex((h) => {
      // The occurrences counted first, then the record's row read once per term and field (not once per occurrence).
      const sql = `SELECT v.doc AS seq, r.record_id AS id, r.created_ms AS createdMs, r.title_len AS t, r.content_len AS c, r.tags_len AS g, v.term AS term, v.col AS col, v.n AS n
        FROM (SELECT doc, term, col, count(*) AS n FROM memory_fts_instance WHERE term IN (${terms.map(() => '?').join(', ')}) GROUP BY doc, col, term) v JOIN memory_events r ON r.seq = v.doc
        WHERE r.partition = ${PARTITION} AND r.status = 'active'`
      const rows = h.db.prepare<unknown[], { seq: number; id: string; createdMs: number; t: number; c: number; g: number; term: string; col: string; n: number }>(sql).all(...terms, partition)
      return rows.map(row => ({ seq: row.seq, id: row.id, createdMs: row.createdMs, lengths: [row.t, row.c, row.g] as [number, number, number], term: row.term, field: FIELDS[row.col as keyof typeof FIELDS], count: row.n }))
    }),
    stats: partition => readOnly(h => h.stats.get(partition, () => scopeStats(h.statements, partition))),
    bySeq: (partition, seqs) => readOnly((h) => {
      const found = new Map<number, MemoryRecord>()
      if (seqs.length === 0) return found
      const rows = h.db.prepare<unknown[], StoredRow & { seq: number }>(`SELECT seq, status, later, line FROM memory_events WHERE seq IN (${seqs.map(() => '?').join(', ')}) AND partition = ${PARTITION} AND status != 'erased'`).all(...seqs, partition)
      for (const row of rows) found.set(row.seq, recordOf(h.statements, row))
      return found
    }),
    documentFrequencies: (partition, terms) => readIndex((h) => {
      const found = new Map<string, number>()
      for (const term of terms) {
        const count = h.statements.termCount.get(ftsPhrase(term))!.count
        if (count > 0) found.set(term, count)
      }
      return found
    }),
    termCandidates: (partition, terms, limit) => readIndex(h => h.statements.termCandidates.all(terms.map(ftsPhrase).join(' OR '), limit).map(row => row.seq)),
    changesSince: (partition, since) => readOnly((h) => {
      const row = h.statements.head.get()
      const head = row ? { seq: row.seq, digest: row.digest } : { seq: 0, digest: null }
      if (!since || (since.seq > 0 && h.statements.digestAt.get(since.seq)?.digest !== since.digest)) return { head }
      const changed = new Map<string, SqlStoredRecord>()
      if (head.seq === since.seq) return { head, changed }
      for (const { record_id: id } of h.statements.changedIds.all(since.seq, partition)) {
        const stored = h.statements.record.get(id)
        if (stored) changed.set(id, stored.status === 'erased' ? { erased: true } : { record: recordOf(h.statements, stored), erased: false })
        else changed.set(id, { erased: true })
      }
      return { head, changed }
    }),
    afterCompaction: () => exclusive(handle(), async h => query(h, () => {
      // A deleted FTS5 row's terms stay in its index segment (secure-delete does not remove them
      // for a contentless_delete table, checked on SQLite 3.51): 'optimize' rewrites the index
      // without them; secure_delete zeroes the freed pages, and the checkpoint empties the WAL.
      h.db.prepare('INSERT INTO memory_fts (memory_fts) VALUES (\'optimize\')').run()
      h.db.pragma('wal_checkpoint(TRUNCATE)')
    })),
  }
}

/** Thrown inside a write when the chain head this connection kept is no longer the head: the write runs again, reading it. */
const STALE_HEAD = Symbol('stale chain head')

/**
 * The write transaction of one connection: one object per connection, reset at the start of each
 * write (the connection runs one write at a time).
 *
 * A write whose only statement is the insert of one new record's row (a plain remember: no
 * duplicate check, no superseded record, a known scope) is written as that one statement, which
 * SQLite commits alone (atomic and durable as a transaction), after the chain head this connection
 * kept from its last commit: no `BEGIN IMMEDIATE`, no read of the head. `seq` is the table's
 * primary key and every writer appends at the head, so when another connection appended
 * meanwhile the insert of that `seq` fails and the write runs again in a transaction
 * ({@link writeOn}); nothing of the failed insert is kept. Any other statement first opens the
 * transaction (`BEGIN IMMEDIATE`) and, when the kept head was used, reads the head again (a
 * different one: the write runs again).
 *
 * Event rows wait in `pending` until `putRecords` gives the record a `remember` line creates, so
 * that line and its record's columns go in as one row; any read of the transaction, and its end,
 * first inserts what waits.
 */
class SqliteWriteTx implements SqlWriteTx {
  private readonly pending = new Map<number, SqlEventRow>()
  /** New records' rows (`insertRecordEvent` arguments) waiting while no transaction is open. */
  private readonly waiting: Array<Parameters<SqliteHandle['statements']['insertRecordEvent']['run']>> = []
  /** Whether the transaction created records (their postings are written later: fts-tail.ts). */
  created = false
  /** The chain head after this connection's last commit (`undefined`: unknown, read it). */
  private kept: { seq: number; digest: string } | undefined
  /** Whether this write may commit as its one insert, without a transaction. */
  private lazy = false
  /** Whether `BEGIN IMMEDIATE` ran in this write. */
  private began = false
  /** Whether this write took the kept head instead of reading it. */
  private keptUsed = false
  /** Whether this write was its one insert, committed alone. */
  alone = false
  /** The head after this write: its last event, else the head it read. */
  private last: { seq: number; digest: string } | undefined

  constructor(private readonly h: SqliteHandle) {}

  /** A new write begins: nothing waits, nothing created; `lazy`: it may commit as one insert. */
  reset(lazy: boolean): void {
    this.pending.clear()
    this.waiting.length = 0
    this.created = false
    this.lazy = lazy
    this.began = false
    this.keptUsed = false
    this.alone = false
    this.last = undefined
  }

  /** Opens the transaction (once per write) and inserts the rows that waited for it. */
  private open(): void {
    if (this.began) return
    const s = this.h.statements
    s.begin.run()
    this.began = true
    if (this.keptUsed) {
      const row = s.head.get()
      if (row?.seq !== this.kept!.seq || row.digest !== this.kept!.digest) throw STALE_HEAD
    }
    for (const args of this.waiting) s.insertRecordEvent.run(...args)
    this.waiting.length = 0
  }

  /** Inside the transaction, with every waiting row inserted: what a read or an update needs. */
  private ready(): SqliteHandle['statements'] {
    this.open()
    if (this.pending.size > 0) {
      const insert = this.h.statements.insertEvent
      for (const row of this.pending.values()) insert.run(row.seq, row.type, row.recordId, row.digest, row.line)
      this.pending.clear()
    }
    return this.h.statements
  }

  /** Writes what waits and commits: one insert alone when that is all the write is, else `COMMIT`. */
  finish(): void {
    if (!this.began && this.pending.size === 0 && this.waiting.length <= 1) {
      const [args] = this.waiting
      if (args) {
        this.alone = true
        this.h.statements.insertRecordEvent.run(...args)
      }
      return
    }
    this.ready()
    this.h.statements.commit.run()
  }

  /** The write committed: the head after it is kept for the next write. */
  committed(): void {
    if (this.last) this.kept = this.last
  }

  /** The write failed (rolled back): the kept head is forgotten. */
  rolledBack(): void {
    this.kept = undefined
  }

  /** Whether `error` of this write means it ran on a head that moved: it runs again in a transaction. */
  retryable(error: unknown): boolean {
    if (error === STALE_HEAD) return true
    const code = (error as { code?: unknown } | undefined)?.code
    return this.alone && (code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_BUSY_SNAPSHOT')
  }

  async head(): Promise<{ seq: number; digest: string | null }> {
    if (this.lazy && !this.began && this.kept) {
      this.keptUsed = true
      return this.kept
    }
    const row = this.ready().head.get()
    if (row) this.last = { seq: row.seq, digest: row.digest }
    return row ? { seq: row.seq, digest: row.digest } : { seq: 0, digest: null }
  }

  async records(ids: readonly string[]): Promise<Map<string, SqlStoredRecord>> {
    const s = this.ready()
    const found = new Map<string, SqlStoredRecord>()
    for (const id of ids) {
      const row = s.record.get(id)
      if (row) found.set(id, row.status === 'erased' ? { erased: true } : { record: recordOf(s, row), erased: false })
    }
    return found
  }

  async duplicates(partition: string, hash: number): Promise<MemoryRecord[]> {
    const s = this.ready()
    return s.duplicates.all(partition, hash).map(row => recordOf(s, row))
  }

  async insertEvents(rows: readonly SqlEventRow[]): Promise<void> {
    for (const row of rows) {
      this.pending.set(row.seq, row)
      if (!this.last || row.seq > this.last.seq) this.last = { seq: row.seq, digest: row.digest }
    }
  }

  async putRecords(rows: readonly SqlRecordRow[]): Promise<void> {
    const { h } = this
    for (const row of rows) {
      const event = row.seq > 0 ? this.pending.get(row.seq) : undefined
      if (event) {
        // A new record: its `remember` line and its columns, one row; its postings come later (fts-tail.ts).
        this.created = true
        this.pending.delete(row.seq)
        const args: Parameters<SqliteHandle['statements']['insertRecordEvent']['run']> = [event.seq, event.type, event.recordId, event.digest, event.line, this.partitionId(row.partition), row.status, row.createdMs, row.contentHash, recordHaystack(row), row.lengths[0], row.lengths[1], row.lengths[2], laterColumn(row)]
        if (this.began) h.statements.insertRecordEvent.run(...args)
        else this.waiting.push(args)
        continue
      }
      const s = this.ready()
      if (row.seq > 0) {
        this.created = true
        s.setRecord.run(...recordColumns(row, h.partitions.of(row.partition)), row.seq)
        continue
      }
      const updated = s.updateRecord.get(row.status, row.createdMs, row.contentHash, recordHaystack(row), ...row.lengths, row.events.join(' '), row.id)
      if (!updated) throw agentError('MEMORY_SQLITE_FAILED', `record "${row.id}" has no row in the memory database "${h.file}"`, 'run verify(); the write was rolled back', { file: h.file })
      // A later event never leaves a record active: its postings go (none yet when it is in the tail).
      s.deleteFts.run(updated.seq)
    }
    if (this.began) this.ready()
  }

  async eventLines(recordId: string): Promise<Array<{ seq: number; line: string }>> {
    const s = this.ready()
    const row = s.eventSeqs.get(recordId)
    if (!row) return []
    return [row.seq, ...laterSeqs(row.later)].map(seq => ({ seq, line: s.line.get(seq)!.line }))
  }

  async updateLine(seq: number, line: string): Promise<void> {
    this.ready().updateLine.run(line, seq)
  }

  async addStats(partition: string, delta: SqlPartitionStats): Promise<void> {
    // The statistics are summed from the records when a search asks (and cached): only the partition's id is kept.
    this.partitionId(partition)
    this.h.stats.add(partition, delta)
  }

  async partitionRecords(partition: string): Promise<MemoryRecord[]> {
    const s = this.ready()
    return s.export.all(partition).map(row => recordOf(s, row))
  }

  async activeCount(partition: string): Promise<number> {
    return scopeStats(this.ready(), partition).active
  }

  /** The id of a partition: a committed one without a statement, else (a new scope, or ids not loaded yet) inside the transaction. */
  private partitionId(key: string): number {
    const known = this.h.partitions.committedId(key)
    if (known !== undefined) return known
    this.open()
    return this.h.partitions.of(key)
  }
}

/**
 * One write on the connection: `task` on the connection's {@link SqliteWriteTx}, committed as one
 * insert or inside `BEGIN IMMEDIATE` ... `COMMIT` (as {@link transaction}, without a closure per
 * write); any failure rolls it back. A write that found the chain head moved (another
 * connection appended) runs once more, in a transaction that reads the head. New records have
 * their postings written later (fts-tail.ts).
 */
async function writeOn<T>(h: SqliteHandle, task: (tx: SqlWriteTx) => Promise<T>): Promise<T> {
  const tx = h.writer ??= new SqliteWriteTx(h)
  for (let attempt = 0; ; attempt++) {
    tx.reset(attempt === 0)
    let result: T
    try {
      result = await task(tx)
      tx.finish()
    }
    catch (error) {
      h.stats.rolledBack()
      h.partitions.rollBack()
      tx.rolledBack()
      if (h.db.inTransaction) h.db.exec('ROLLBACK')
      if (attempt === 0 && tx.retryable(error)) continue
      throw sqliteError(h, error)
    }
    tx.committed()
    h.stats.committed()
    h.partitions.commit()
    if (tx.created) h.fts.wrote()
    return result
  }
}

/** Runs `task` inside `BEGIN IMMEDIATE` ... `COMMIT`; any failure rolls the transaction back. */
async function transaction<T>(handle: SqliteHandle, task: () => Promise<T>): Promise<T> {
  const { db, statements } = handle
  query(handle, () => statements.begin.run())
  try {
    const result = await task()
    query(handle, () => statements.commit.run())
    handle.stats.committed()
    handle.partitions.commit()
    return result
  }
  catch (error) {
    handle.stats.rolledBack()
    handle.partitions.rollBack()
    if (db.inTransaction) db.exec('ROLLBACK')
    throw sqliteError(handle, error)
  }
}

function linesText(handle: SqliteHandle): string {
  let text = ''
  for (const row of query(handle, () => handle.statements.lines.iterate())) text += `${row.line}\n`
  return text
}

async function importRows(handle: SqliteHandle, text: string): Promise<number> {
  if (typeof text !== 'string') {
    throw agentError('MEMORY_LOG_CORRUPT', 'importLog() needs the text of a JSONL log', 'pass the file\'s text, for example readFileSync(path, "utf8")')
  }
  const verification = await verifyLog(await scratchLogWorkspace(text), SCRATCH_LOG_KEY)
  if (!verification.ok || verification.torn) {
    const why = verification.firstBad ? `line ${verification.firstBad.line} fails verification: ${verification.firstBad.reason}` : `it ends in an unfinished write at line ${verification.torn!.line}`
    throw agentError('MEMORY_LOG_CORRUPT', `the JSONL log given to importLog() ${why}`, 'import a complete, verified log (verifyLog() reports the first bad line); nothing was imported', { ...(verification.firstBad ?? {}) })
  }
  const { events, records } = foldLines(text)
  // The chain this connection kept is not the imported one.
  handle.writer?.rolledBack()
  return transaction(handle, async () => {
    if (handle.statements.count.get()!.count > 0) {
      throw agentError('MEMORY_SQLITE_NOT_EMPTY', `the memory database "${handle.file}" already has events`, 'import into a new database file (an imported chain starts at seq 1)', { file: handle.file })
    }
    for (const row of events) handle.statements.insertEvent.run(row.seq, row.type, row.recordId, row.digest, row.line)
    writeRows(handle.statements, handle.partitions, records)
    handle.statements.markIndexed.run()
    handle.stats.clear()
    return verification.lines
  })
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
