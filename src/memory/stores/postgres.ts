/**
 * `postgresMemoryStore({ connectionString } | { pool })`: the memory event log and the current
 * records in Postgres (through the `pg` driver), for apps that run many instances on one database.
 *
 * The same tables and chain as the SQLite store; full text with `tsvector` and a ranking
 * function; vectors kept in a column and scored exactly, with a seam for pgvector; many app instances on
 * one database with no lost and no duplicated write, the chain intact.
 *
 * ## Design
 *
 * The tables of the SQLite store (docs/postgres-store.md): `memory_events` (the JSONL lines of
 * docs/log-format.md), `memory_records` (current records, with a `tsvector` of partition-prefixed
 * terms and a GIN index, and an `embedding` column), `memory_partitions` (BM25F statistics). A
 * write is one transaction that first takes a transaction-level advisory lock (one lock for the
 * store's schema, since the chain is one sequence), reads the chain head, inserts the new lines, updates the
 * records. `seq` is the primary key, so even a writer that skipped the lock could not duplicate a
 * line. The ranking is the default one (BM25F, computed from the `tsvector` positions and
 * weights: title A, content B, tags C) by `./sql/core.ts`.
 */
import { ERASURE_WAIT_MS, vacuumErasedVersions } from './postgres/erasure-vacuum.ts'
import { agentError, isAgentError } from '../../errors.ts'
import { importOptional } from '../../optional-dependency.ts'
import { sha256HexSync } from '../../log/digest.ts'
import { verifyLog, type MemoryLogVerification } from '../event-log.ts'
import { scratchLogWorkspace, SCRATCH_LOG_KEY } from '../../workspace/scratch.ts'
import type { MemoryRecord, MemoryStoreFactory, MemoryTarget } from '../types.ts'
import { checkTarget } from './workspace-jsonl.ts'
import { partitionKey } from '../records.ts'
import { foldLines, recordHaystack, recordJson, recordRow, rowStats, sqlMemoryAdapter, statsOf, type SqlBackend, type SqlPartitionStats, type SqlRecordRow, type SqlStoredRecord, type SqlWriteTx } from './sql/core.ts'
import type { SqlMemoryStoreAdapter } from './sqlite.ts'
import type { MemoryVectorEntry, MemoryVectorStore } from '../types.ts'

/**
 * Record vectors in the `embedding` column of `memory_records` (one per record, of the model
 * named in `embedding_model`: a vector of another model is replaced, so a changed model
 * re-embeds), so every instance uses the vectors any of them computed. Instances load the
 * vectors of the records they search (`fetch`); with `vectors.scoreInDatabase` they are scored
 * in the database instead (`missing`, `nearest` by `vectors.similarity`) and never held in app
 * memory. `embedding_rev` (a sequence) orders writes for `read`. A vector is
 * kept only while its record is (an erase clears the three columns in its transaction; a vector
 * written after it matches no row).
 */
function postgresVectorStore(pool: () => Promise<PostgresPoolLike>, vectors: PostgresVectorColumn): MemoryVectorStore {
  const store: MemoryVectorStore = {
    read: cursor => run(pool, async (client) => {
      const after = typeof cursor === 'number' ? cursor : 0
      const { rows } = await client.query('SELECT id, embedding_model, embedding, embedding_rev FROM memory_records WHERE embedding_rev > $1 AND embedding_model IS NOT NULL AND embedding IS NOT NULL ORDER BY embedding_rev', [after])
      const entries: MemoryVectorEntry[] = []
      for (const row of rows) {
        const vector = columnVector(row.embedding)
        if (vector) entries.push({ id: row.id as string, model: row.embedding_model as string, vector })
      }
      return { entries, cursor: rows.length > 0 ? Number(rows.at(-1).embedding_rev) : after, reset: false }
    }),
    write: entries => run(pool, async (client) => {
      if (entries.length === 0) return
      await client.query('BEGIN')
      try {
        for (const entry of entries) {
          await client.query(`UPDATE memory_records SET embedding = $1, embedding_model = $2, embedding_rev = nextval('memory_embedding_rev') WHERE id = $3 AND record IS NOT NULL`, [vectors.toParam([...entry.vector]), entry.model, entry.id])
        }
        await client.query('COMMIT')
      }
      catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        throw error
      }
    }),
    remove: ids => run(pool, async (client) => {
      if (ids.length === 0) return
      await client.query('UPDATE memory_records SET embedding = NULL, embedding_model = NULL, embedding_rev = NULL WHERE id = ANY($1::text[]) AND embedding IS NOT NULL', [[...ids]])
    }),
    fetch: (model, ids) => run(pool, async (client) => {
      if (ids.length === 0) return []
      const { rows } = await client.query('SELECT id, embedding FROM memory_records WHERE id = ANY($1::text[]) AND embedding_model = $2 AND embedding IS NOT NULL AND record IS NOT NULL', [[...ids], model])
      const entries: MemoryVectorEntry[] = []
      for (const row of rows) {
        const vector = columnVector(row.embedding)
        if (vector) entries.push({ id: row.id as string, model, vector })
      }
      return entries
    }),
  }
  if (!vectors.scoreInDatabase) return store
  return {
    ...store,
    missing: (model, ids) => run(pool, async (client) => {
      if (ids.length === 0) return []
      const { rows } = await client.query('SELECT t.id FROM unnest($1::text[]) AS t(id) WHERE NOT EXISTS (SELECT 1 FROM memory_records r WHERE r.id = t.id AND r.embedding_model = $2 AND r.embedding IS NOT NULL)', [[...ids], model])
      return rows.map(row => row.id as string)
    }),
    nearest: (model, ids, vector, limit) => run(pool, async (client) => {
      if (ids.length === 0) return []
      const { rows } = await client.query(`SELECT id, ${vectors.similarity('embedding', '$3')} AS score FROM memory_records
        WHERE id = ANY($1::text[]) AND embedding_model = $2 AND embedding IS NOT NULL AND record IS NOT NULL ORDER BY score DESC NULLS LAST, seq ASC LIMIT $4`, [[...ids], model, vectors.toParam([...vector]), limit])
      return rows.map(row => ({ id: row.id as string, similarity: Number(row.score ?? 0) }))
    }),
  }
}

/** A vector as the driver returns the column: an array of numbers (`real[]`), or text such as `[1,2]` or `{1,2}` (pgvector, other types). */
function columnVector(value: unknown): Float32Array | undefined {
  const list = Array.isArray(value) ? value : typeof value === 'string' ? value.replace(/^[[{]|[\]}]$/g, '').split(',') : undefined
  if (!list || list.length === 0) return undefined
  const vector = Float32Array.from(list, Number)
  return vector.every(Number.isFinite) ? vector : undefined
}

/** The parts of a `pg` `Pool` the store uses (a `pg.Pool` fits). */
export interface PostgresPoolLike {
  connect(): Promise<PostgresClientLike>
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>
  end(): Promise<void>
  on?(event: 'error', listener: (error: Error) => void): unknown
}

/** The parts of a `pg` client the store uses. */
export interface PostgresClientLike {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>
  release(error?: Error | boolean): void
  on?(event: 'error', listener: (error: Error) => void): unknown
  /** A `pg` client's server notices (the erasure's `VACUUM (VERBOSE)` report is read from them). */
  on?(event: 'notice', listener: (notice: { message?: string }) => void): unknown
  removeListener?(event: 'notice', listener: (notice: { message?: string }) => void): unknown
}

/**
 * How vectors are kept and scored (the seam for pgvector). The default keeps `real[]` and scores
 * cosine similarity exactly in SQL over every vector of the scope.
 */
export interface PostgresVectorColumn {
  /** SQL type of the `embedding` column. Default `real[]`; with pgvector, for example `vector(512)`. */
  type: string
  /** The query parameter for a vector. Default: the array itself. */
  toParam(vector: readonly number[]): unknown
  /** SQL of the similarity (higher is closer) of `column` to the parameter `param` (for example `$3`). */
  similarity(column: string, param: string): string
  /**
   * `true`: hybrid search scores the vectors in the database with {@link similarity} (for an
   * index of pgvector); nothing of them is held in app memory. Default `false`: each instance
   * loads the vectors of the scopes it searches from the column (once per record) and scores them
   * with the in-process exact index, which is faster than scoring `real[]` in SQL
   * (`npm run bench:hybrid-stores`).
   */
  scoreInDatabase?: boolean
}

/** Exact cosine similarity over `real[]` columns, computed by Postgres over every vector of the scope. */
export const EXACT_VECTOR_COLUMN: PostgresVectorColumn = {
  type: 'real[]',
  toParam: vector => [...vector],
  // In double precision, as the in-process index sums float32 products in JavaScript numbers.
  similarity: (column, param) => `(SELECT sum(a * b) / nullif(sqrt(sum(a * a)) * sqrt(sum(b * b)), 0) FROM unnest(${column}::float8[], ${param}::float8[]) AS t(a, b))`,
}

/** Options of {@link postgresMemoryStore}: a connection string, or a pool the app owns. Unknown keys are errors. */
export type PostgresMemoryStoreOptions = ({ connectionString: string; pool?: never } | { pool: PostgresPoolLike; connectionString?: never }) & {
  vectors?: PostgresVectorColumn
  /**
   * `false` runs each write with `SET LOCAL synchronous_commit = off`: the commit returns before
   * the server flushes its WAL to disk (about one fsync less per write). A server crash (not an
   * app crash) can then lose the last writes acknowledged within `wal_writer_delay` (default
   * 200 ms) times 3; it never corrupts the chain. Default `true`.
   */
  synchronousCommit?: boolean
  /**
   * How long an erasure (hard delete, scope erase, retention with `hardDelete`) waits, in ms, for
   * transactions older than it to end, so that its vacuum can remove the old row versions that
   * still hold the erased text. Past it the erasure fails with `MEMORY_POSTGRES_ERASURE_PENDING`
   * (it is committed: no row holds the text; old versions on disk still do). Default 10,000.
   */
  erasureWaitMs?: number
}

/** The factory {@link postgresMemoryStore} returns. */
export interface PostgresMemoryStoreFactory extends MemoryStoreFactory {
  kind: 'postgres'
  create(): PostgresMemoryStoreAdapter
  /** Every event in `seq` order as the text of a JSONL log (see `SqliteMemoryStoreFactory.exportLog`). */
  exportLog(): Promise<string>
  /**
   * Loads a verified JSONL log into an empty database, byte for byte. Returns the events imported.
   *
   * @throws AgentError `MEMORY_LOG_CORRUPT`, `MEMORY_POSTGRES_NOT_EMPTY` (nothing written).
   */
  importLog(text: string): Promise<number>
  /** `verifyLog` over every event row. Reads all rows. */
  verify(): Promise<MemoryLogVerification>
  /** Ends the pool when the store created it (from `connectionString`); a given pool is left to its owner. */
  close(): Promise<void>
}

/** The adapter of {@link postgresMemoryStore}: the store contract, `hardDelete`, `writeScope`, and vectors kept in the records table. */
export interface PostgresMemoryStoreAdapter extends SqlMemoryStoreAdapter {
  /** Record vectors of hybrid search in the `embedding` column, keyed by `embedding_model` ({@link postgresVectorStore}). */
  readonly vectors: MemoryVectorStore
  /**
   * Keeps `vector` as the embedding of a record of the scope (replacing an earlier one), with no
   * model id: hybrid search embeds the record again with its own model.
   * Returns `false` for an unknown or other-scope id.
   *
   * @throws AgentError `MEMORY_VECTOR_INVALID` for an empty vector or one with a non-finite number.
   */
  setEmbedding(target: MemoryTarget, id: string, vector: readonly number[]): Promise<boolean>
  /** The active records of the scope with an embedding, most similar to `vector` first (exact by default), at most `limit` (default 10). */
  nearest(target: MemoryTarget, vector: readonly number[], options?: { limit?: number }): Promise<Array<{ record: MemoryRecord; score: number }>>
}

const OPTION_KEYS = new Set(['connectionString', 'pool', 'vectors', 'synchronousCommit', 'erasureWaitMs'])
/**
 * The advisory lock every write and the creation of the tables take: one per schema the tables
 * live in (the chain is one sequence per `memory_events` table), keyed by `"mem"` and the hash of
 * `current_schema()`, the schema unqualified table names resolve to. Stores in other schemas of
 * the database (one per tenant, or per test) never wait for each other; two schemas whose names
 * hash alike share a lock, which only serializes them.
 */
const WRITE_LOCK_SQL = `SELECT pg_advisory_xact_lock(${0x6d656d}, hashtext(coalesce(current_schema(), '')))`
const WEIGHT_OF_FIELD = ['A', 'B', 'C', 'D'] as const

/**
 * Creates the Postgres store factory. The `pg` package is loaded on the first operation
 * (`npm install pg`); the tables are created then when missing. Every `create()` returns the same
 * adapter.
 *
 * @throws AgentError `MEMORY_STORE_OPTIONS_INVALID` (now) for options that are not exactly one
 * of `connectionString` (a non-empty string) and `pool`, or an unknown key. Operations throw
 * `DEPENDENCY_MISSING` when `pg` is not installed (`DEPENDENCY_LOAD_FAILED` when it fails to load), `MEMORY_POSTGRES_UNAVAILABLE` when
 * the server cannot be reached or the connection was lost (the operation did not happen; retry),
 * `MEMORY_POSTGRES_FAILED` for other errors, and the adapter errors of the JSONL store.
 */
export function postgresMemoryStore(options: PostgresMemoryStoreOptions): PostgresMemoryStoreFactory {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw optionsError('the options of postgresMemoryStore() must be an object', 'call postgresMemoryStore({ connectionString: process.env.DATABASE_URL })')
  }
  // A pg Pool passed as the options themselves (postgresMemoryStore(pool)): its private fields are no typos to list.
  if (typeof (options as { connect?: unknown }).connect === 'function' && typeof (options as { query?: unknown }).query === 'function') {
    throw optionsError('postgresMemoryStore() got a pg Pool as its options object', 'pass it as the `pool` option: postgresMemoryStore({ pool })')
  }
  const unknown = Object.keys(options).filter(option => !OPTION_KEYS.has(option))
  if (unknown.length > 0) {
    throw optionsError(`postgresMemoryStore() got unknown option ${unknown.map(option => `"${option}"`).join(', ')}`, 'the options are `connectionString` or `pool`, `vectors`, `synchronousCommit` and `erasureWaitMs`; check the spelling', { options: unknown })
  }
  const hasString = options.connectionString !== undefined
  const hasPool = options.pool !== undefined
  // `{ connectionString: process.env.DATABASE_URL! }` (the documented form) with the variable unset.
  if (!hasString && !hasPool && Object.hasOwn(options, 'connectionString')) {
    throw optionsError('`connectionString` is undefined, as `process.env.DATABASE_URL` is when the variable is not set', 'set the environment variable the app reads (for example DATABASE_URL=postgres://user@host:5432/db) before starting it, or pass the URL itself')
  }
  if (hasString === hasPool) {
    throw optionsError('postgresMemoryStore() needs exactly one of `connectionString` and `pool`', 'pass { connectionString: "postgres://user@host:5432/db" }, or { pool } with a pg Pool your app owns')
  }
  if (hasString && (typeof options.connectionString !== 'string' || options.connectionString.trim() === '')) {
    throw optionsError('`connectionString` must be a non-empty string', 'pass a URL such as "postgres://user@localhost:5432/app" (for example process.env.DATABASE_URL)')
  }
  if (hasPool && typeof options.pool?.connect !== 'function') {
    throw optionsError('`pool` must be a pg Pool (with connect() and query())', 'pass new pg.Pool({ connectionString })')
  }
  if (options.synchronousCommit !== undefined && typeof options.synchronousCommit !== 'boolean') {
    throw optionsError('`synchronousCommit` must be true or false', 'leave it out for durable commits, or pass false to trade the last moments of writes on a server crash for speed')
  }
  if (options.erasureWaitMs !== undefined && !(typeof options.erasureWaitMs === 'number' && Number.isFinite(options.erasureWaitMs) && options.erasureWaitMs >= 0)) {
    throw optionsError('`erasureWaitMs` must be a number of milliseconds, 0 or more', `leave it out for ${ERASURE_WAIT_MS} ms, or pass how long an erasure may wait for older transactions to end`)
  }
  const erasureWaitMs = options.erasureWaitMs ?? ERASURE_WAIT_MS
  const vectors = options.vectors ?? EXACT_VECTOR_COLUMN
  const begin = options.synchronousCommit === false ? ['BEGIN', 'SET LOCAL synchronous_commit = off'] : ['BEGIN']
  let ready: Promise<PostgresPoolLike> | undefined
  const pool = () => {
    ready ??= (async () => {
      const opened = options.pool ?? await createPool(options.connectionString!)
      await ensureSchema(opened, vectors)
      return opened
    })()
    // A failed start is retried by the next operation.
    ready.catch(() => { ready = undefined })
    return ready
  }
  let adapter: PostgresMemoryStoreAdapter | undefined
  const hashSync = sha256HexSync()
  return {
    kind: 'postgres',
    create() {
      if (adapter) return adapter
      const backend = postgresBackend(pool, begin, erasureWaitMs)
      const base = sqlMemoryAdapter(backend, { hash: text => syncHash!(text) })
      let syncHash: ((text: string) => string) | undefined
      const withHash = <A extends unknown[], R>(run: (...args: A) => Promise<R>) => async (...args: A) => {
        syncHash ??= (await hashSync) ?? missingHash()
        return run(...args)
      }
      adapter = {
        search: withHash(base.search),
        read: withHash(base.read),
        append: withHash(base.append),
        delete: withHash(base.delete),
        export: withHash(base.export),
        changes: withHash(base.changes),
        hardDelete: withHash(base.hardDelete),
        writeScope: withHash(base.writeScope),
        vectors: postgresVectorStore(pool, vectors),
        async setEmbedding(target, id, vector) {
          checkTarget(target)
          checkVector(vector)
          const { rows } = await run(pool, client => client.query(`UPDATE memory_records SET embedding = $3, embedding_model = NULL, embedding_rev = NULL WHERE id = $1 AND partition = $2 AND record IS NOT NULL RETURNING seq`, [id, partitionKey(target.store, target.scope), vectors.toParam(vector)]))
          return rows.length > 0
        },
        async nearest(target, vector, nearestOptions = {}) {
          checkTarget(target)
          checkVector(vector)
          const limit = nearestOptions.limit ?? 10
          if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100) throw agentError('MEMORY_QUERY_INVALID', `\`limit\` must be a whole number from 1 to 100, got ${JSON.stringify(limit)}`, 'pass a limit such as 10')
          const { rows } = await run(pool, client => client.query(`SELECT record, ${vectors.similarity('embedding', '$2')} AS score FROM memory_records WHERE partition = $1 AND status = 'active' AND embedding IS NOT NULL ORDER BY score DESC NULLS LAST, seq DESC LIMIT $3`, [partitionKey(target.store, target.scope), vectors.toParam(vector), limit]))
          return rows.map(row => ({ record: JSON.parse(row.record) as MemoryRecord, score: Number(row.score ?? 0) }))
        },
      }
      return adapter
    },
    exportLog: () => run(pool, async client => linesText(client)),
    async importLog(text) {
      if (typeof text !== 'string') throw agentError('MEMORY_LOG_CORRUPT', 'importLog() needs the text of a JSONL log', 'pass the file\'s text, for example readFileSync(path, "utf8")')
      const verification = await verifyLog(await scratchLogWorkspace(text), SCRATCH_LOG_KEY)
      if (!verification.ok || verification.torn) {
        const why = verification.firstBad ? `line ${verification.firstBad.line} fails verification: ${verification.firstBad.reason}` : `it ends in an unfinished write at line ${verification.torn!.line}`
        throw agentError('MEMORY_LOG_CORRUPT', `the JSONL log given to importLog() ${why}`, 'import a complete, verified log (verifyLog() reports the first bad line); nothing was imported', { ...(verification.firstBad ?? {}) })
      }
      const { events, records } = foldLines(text)
      return postgresBackend(pool, begin, erasureWaitMs).write(async (tx) => {
        const rows = await tx.sql('SELECT count(*)::int AS count FROM memory_events')
        if (rows[0].count > 0) throw agentError('MEMORY_POSTGRES_NOT_EMPTY', 'the memory database already has events', 'import into a new database (an imported chain starts at seq 1)')
        await tx.insertEvents(events)
        await tx.putRecords(records)
        for (const [partition, stats] of statsOf(records)) await tx.addStats(partition, stats)
        return verification.lines
      })
    },
    async verify() {
      const text = await run(pool, async client => linesText(client))
      return verifyLog(await scratchLogWorkspace(text), SCRATCH_LOG_KEY)
    },
    async close() {
      const opened = ready
      ready = undefined
      if (opened && !options.pool) await (await opened.catch(() => undefined))?.end()
    },
  }
}

function missingHash(): never {
  throw agentError('MEMORY_POSTGRES_FAILED', 'no synchronous SHA-256 (node:crypto) in this runtime', 'run the Postgres store on Node.js')
}

function checkVector(vector: readonly number[]): void {
  if (!Array.isArray(vector) || vector.length === 0 || !vector.every(value => typeof value === 'number' && Number.isFinite(value))) {
    throw agentError('MEMORY_VECTOR_INVALID', 'the vector must be a non-empty list of finite numbers', 'pass the embedding as returned by the embedding model')
  }
}

async function createPool(connectionString: string): Promise<PostgresPoolLike> {
  const pg = await importOptional<{ default?: { Pool: new (config: object) => PostgresPoolLike }; Pool?: new (config: object) => PostgresPoolLike }>('pg', 'postgresMemoryStore()')
  const Pool = pg.Pool ?? pg.default!.Pool
  const pool = new Pool({ connectionString })
  // An idle client whose backend was terminated emits `error` on the pool: the next query reconnects.
  pool.on?.('error', () => {})
  return pool
}

const SCHEMA = (vectors: PostgresVectorColumn) => `
  CREATE TABLE IF NOT EXISTS memory_events (
    seq bigint PRIMARY KEY,
    type text NOT NULL,
    record_id text NOT NULL,
    store text NOT NULL,
    partition text NOT NULL,
    digest text NOT NULL,
    line text NOT NULL
  );
  CREATE INDEX IF NOT EXISTS memory_events_record ON memory_events (record_id);
  CREATE TABLE IF NOT EXISTS memory_records (
    seq bigint PRIMARY KEY,
    id text NOT NULL UNIQUE,
    partition text NOT NULL,
    status text NOT NULL,
    kind text NOT NULL,
    created_ms bigint NOT NULL,
    content_hash bigint,
    record text,
    haystack text NOT NULL,
    title_len integer NOT NULL,
    content_len integer NOT NULL,
    tags_len integer NOT NULL,
    terms tsvector NOT NULL,
    tf jsonb,
    embedding ${vectors.type}
  );
  CREATE INDEX IF NOT EXISTS memory_records_partition ON memory_records (partition, seq);
  CREATE INDEX IF NOT EXISTS memory_records_duplicate ON memory_records (partition, content_hash) WHERE content_hash IS NOT NULL;
  CREATE INDEX IF NOT EXISTS memory_records_terms ON memory_records USING gin (terms);
  ALTER TABLE memory_records ADD COLUMN IF NOT EXISTS embedding_model text;
  ALTER TABLE memory_records ADD COLUMN IF NOT EXISTS embedding_rev bigint;
  CREATE SEQUENCE IF NOT EXISTS memory_embedding_rev;
  CREATE INDEX IF NOT EXISTS memory_records_embedding_rev ON memory_records (embedding_rev) WHERE embedding_rev IS NOT NULL;
  ALTER TABLE memory_records ADD COLUMN IF NOT EXISTS terms_version smallint;
  ALTER TABLE memory_records ALTER COLUMN terms_version SET DEFAULT ${TERMS_VERSION};
  CREATE TABLE IF NOT EXISTS memory_partitions (
    partition text PRIMARY KEY,
    active bigint NOT NULL,
    title_sum bigint NOT NULL, content_sum bigint NOT NULL, tags_sum bigint NOT NULL,
    title_docs bigint NOT NULL, content_docs bigint NOT NULL, tags_docs bigint NOT NULL
  );
`

/**
 * How a row's search columns (haystack, terms, tf, lengths) were made: 2 is with the ranking-only
 * date words at weight D and none in the haystack. A row of an older version (`NULL`: made before
 * the column) is made again at open by {@link reindexRecords}.
 */
const TERMS_VERSION = 2

/**
 * Makes the search columns of every row of an older {@link TERMS_VERSION} again from its record
 * (1,000 rows at a time), then the partitions' statistics from the rows; inside the schema
 * transaction, under the write lock.
 */
async function reindexRecords(client: PostgresClientLike): Promise<void> {
  let changed = false
  for (;;) {
    const { rows } = await client.query(`SELECT seq, partition, record FROM memory_records WHERE terms_version IS DISTINCT FROM ${TERMS_VERSION} AND record IS NOT NULL ORDER BY seq LIMIT 1000`)
    if (rows.length === 0) break
    changed = true
    const updates = rows.map((stored) => {
      const row = recordRow(parseRecord(stored.record), Number(stored.seq), stored.partition as string)
      return `UPDATE memory_records SET haystack = ${literal(recordHaystack(row))}, title_len = ${row.lengths[0]}, content_len = ${row.lengths[1]}, tags_len = ${row.lengths[2]}, terms = ${literal(tsvectorLiteral(row))}::tsvector, tf = ${literal(termCounts(row))}::jsonb, terms_version = ${TERMS_VERSION} WHERE seq = ${row.seq}`
    })
    await client.query(updates.join(';\n'))
  }
  await client.query(`UPDATE memory_records SET terms_version = ${TERMS_VERSION} WHERE terms_version IS DISTINCT FROM ${TERMS_VERSION}`)
  if (!changed) return
  await client.query(`UPDATE memory_partitions p SET active = s.active, title_sum = s.title_sum, content_sum = s.content_sum, tags_sum = s.tags_sum, title_docs = s.title_docs, content_docs = s.content_docs, tags_docs = s.tags_docs
    FROM (SELECT partition, count(*) AS active, coalesce(sum(title_len), 0) AS title_sum, coalesce(sum(content_len), 0) AS content_sum, coalesce(sum(tags_len), 0) AS tags_sum,
      count(*) FILTER (WHERE title_len > 0) AS title_docs, count(*) FILTER (WHERE content_len > 0) AS content_docs, count(*) FILTER (WHERE tags_len > 0) AS tags_docs
      FROM memory_records WHERE status = 'active' GROUP BY partition) s WHERE p.partition = s.partition`)
}

async function ensureSchema(pool: PostgresPoolLike, vectors: PostgresVectorColumn): Promise<void> {
  await run(async () => pool, async (client) => {
    await client.query('BEGIN')
    try {
      // Instances starting at once create the tables one after the other.
      await client.query(WRITE_LOCK_SQL)
      await client.query(SCHEMA(vectors))
      await client.query(EXPECT_HEAD_FUNCTION)
      await reindexRecords(client)
      await client.query('COMMIT')
    }
    catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw error
    }
  })
}

/** Runs `task` on a client of the pool, mapping errors; a client whose connection broke is discarded. */
async function run<T>(pool: () => Promise<PostgresPoolLike>, task: (client: PostgresClientLike) => Promise<T>): Promise<T> {
  let client: PostgresClientLike
  try {
    client = await (await pool()).connect()
  }
  catch (error) {
    throw postgresError(error)
  }
  let broken: Error | undefined
  // A backend that dies while the client is checked out emits `error` on it: the query in flight fails with it instead.
  if (!listened.has(client)) {
    listened.add(client)
    client.on?.('error', () => {})
  }
  try {
    return await task(client)
  }
  catch (error) {
    if (!isAgentError(error)) broken = error as Error
    throw postgresError(error)
  }
  finally {
    client.release(broken && isConnectionError(broken) ? broken : undefined)
  }
}

const listened = new WeakSet<PostgresClientLike>()

function parseRecord(text: string): MemoryRecord {
  return JSON.parse(text) as MemoryRecord
}

/** A tsvector literal of the row's terms: title at weight A, content B, tags C, dates D, positions counted across the fields. */
function tsvectorLiteral(row: SqlRecordRow): string {
  const positions = new Map<string, string[]>()
  let position = 0
  ;[row.titleTerms, row.contentTerms, row.tagTerms, row.dateTerms].forEach((terms, field) => {
    for (const term of terms) {
      position = Math.min(position + 1, 16383)
      let list = positions.get(term)
      if (!list) positions.set(term, list = [])
      // Postgres keeps at most 256 positions per lexeme.
      if (list.length < 256) list.push(`${position}${WEIGHT_OF_FIELD[field]}`)
    }
  })
  return [...positions].map(([term, list]) => `'${term.replaceAll('\\', '\\\\').replaceAll('\'', '\'\'')}':${list.join(',')}`).join(' ')
}

/** Per term of the row, its occurrences in title, content, tags and dates, as JSON (`null` when the record is not active). */
function termCounts(row: SqlRecordRow): string | null {
  if (row.titleTerms.length + row.contentTerms.length + row.tagTerms.length + row.dateTerms.length === 0) return null
  const counts: Record<string, [number, number, number, number]> = {}
  ;[row.titleTerms, row.contentTerms, row.tagTerms, row.dateTerms].forEach((terms, field) => {
    for (const term of terms) (counts[term] ??= [0, 0, 0, 0])[field]!++
  })
  return JSON.stringify(counts)
}

function tsqueryLiteral(terms: readonly string[]): string {
  return terms.map(term => `'${term.replaceAll('\\', '\\\\').replaceAll('\'', '\'\'')}'`).join(' | ')
}

interface PostgresWriteTx extends SqlWriteTx {
  /** Runs `text` (simple protocol, literals inline) after the buffered writes; returns the last result's rows. */
  sql(text: string): Promise<any[]>
  /** Sends the buffered writes and `COMMIT`, when the transaction began. */
  commit(): Promise<void>
  /** True once `BEGIN` was sent. */
  readonly begun: boolean
  /** The chain head as this transaction last knew it (after its own lines), `undefined` before it knew one. */
  readonly chainHead: ChainHead | undefined
}

/** A SQL literal (string, number, null), as pg's `escapeLiteral` writes strings. */
function literal(value: string | number | null): string {
  if (value === null) return 'NULL'
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('a SQL number literal must be finite')
    return String(value)
  }
  const quoted = `'${value.replaceAll('\'', '\'\'')}'`
  return value.includes('\\') ? ` E${quoted.replaceAll('\\', '\\\\')}` : quoted
}

/** SQLSTATE of `memory_expect_head()` when the chain head is not the one a write was built on. */
const HEAD_MOVED = 'VAM01'
const HEAD_SQL = 'SELECT seq, digest FROM memory_events ORDER BY seq DESC LIMIT 1'

/**
 * Raises {@link HEAD_MOVED} unless the last event is `expected_seq` with `expected_digest`
 * (`0` and `NULL` for an empty store). A write built on the head this process saw last calls it
 * right after taking the write lock, so the lines, `BEGIN`, the lock and `COMMIT` go in one message.
 */
const EXPECT_HEAD_FUNCTION = `
  CREATE OR REPLACE FUNCTION memory_expect_head(expected_seq bigint, expected_digest text) RETURNS void LANGUAGE plpgsql AS $fn$
  DECLARE head_seq bigint; head_digest text;
  BEGIN
    SELECT seq, digest INTO head_seq, head_digest FROM memory_events ORDER BY seq DESC LIMIT 1;
    IF coalesce(head_seq, 0) <> expected_seq OR head_digest IS DISTINCT FROM expected_digest THEN
      RAISE EXCEPTION 'the memory chain head is not seq %', expected_seq USING ERRCODE = '${HEAD_MOVED}';
    END IF;
  END
  $fn$;
`

/** The chain head a write builds on: `seq` and `digest` of the last event (`0` and `null` for an empty store). */
type ChainHead = { seq: number; digest: string | null }

/**
 * A write transaction in one or two round trips. Values are inline literals ({@link literal}) in
 * simple-protocol messages; the writes are buffered and sent with `COMMIT`.
 *
 * - With `assumed` (the head this process committed or read last, while no other write of the
 *   process runs): a write that reads nothing builds its lines on it and sends `BEGIN`, the
 *   advisory lock, `memory_expect_head()`, the writes and `COMMIT` as one message; when the head
 *   moved, the check fails the transaction ({@link HEAD_MOVED}) and the write runs again without it.
 * - Otherwise `BEGIN`, the lock, the chain head and the first read go in one message, the writes
 *   and `COMMIT` in a second one (a read in between sends the buffer first).
 */
function writeTx(client: PostgresClientLike, begin: readonly string[], assumed: ChainHead | undefined): PostgresWriteTx {
  let begun = false
  let buffer: string[] = []
  let head: ChainHead | undefined
  let expected: ChainHead | undefined
  async function sql(text: string): Promise<any[]> {
    const opening = begun ? [] : [...begin, WRITE_LOCK_SQL, expected ? `SELECT memory_expect_head(${expected.seq}, ${literal(expected.digest)})` : HEAD_SQL]
    const statements = [...opening, ...buffer, text]
    const readsHead = !begun && !expected
    begun = true
    buffer = []
    const result = await client.query(statements.join(';\n')) as unknown as { rows: any[] } | Array<{ rows: any[] }>
    const results = Array.isArray(result) ? result : [result]
    if (readsHead) takeHead(results[opening.length - 1]!.rows)
    return results.at(-1)!.rows
  }
  // Bulk writes (an import) go in messages of a bounded size.
  const flushLarge = async () => {
    if (buffer.length >= 500) await sql('SELECT 1')
  }
  const takeHead = (rows: any[]) => (head = rows[0] ? { seq: Number(rows[0].seq), digest: rows[0].digest as string } : { seq: 0, digest: null })
  return {
    sql,
    get begun() {
      return begun
    },
    get chainHead() {
      return head
    },
    async commit() {
      if (begun || buffer.length > 0) await sql('COMMIT')
    },
    async head() {
      if (head) return head
      if (!begun && assumed) return (head = expected = assumed)
      await sql('SELECT 1')
      return head!
    },
    async records(ids) {
      const found = new Map<string, SqlStoredRecord>()
      const rows = await sql(`SELECT id, record, status FROM memory_records WHERE id IN (${ids.map(literal).join(', ') || 'NULL'})`)
      for (const row of rows) found.set(row.id, row.status === 'erased' ? { erased: true } : { record: parseRecord(row.record), erased: false })
      return found
    },
    async duplicates(partition, hash) {
      const rows = await sql(`SELECT record FROM memory_records WHERE partition = ${literal(partition)} AND content_hash = ${literal(hash)} AND status = 'active' ORDER BY seq`)
      return rows.map(row => parseRecord(row.record))
    },
    async insertEvents(rows) {
      if (rows.length === 0) return
      buffer.push(`INSERT INTO memory_events (seq, type, record_id, store, partition, digest, line) VALUES ${rows.map(row => `(${[row.seq, row.type, row.recordId, row.store, row.partition, row.digest, row.line].map(literal).join(', ')})`).join(', ')}`)
      head = { seq: rows.at(-1)!.seq, digest: rows.at(-1)!.digest }
      await flushLarge()
    },
    async putRecords(rows) {
      for (const row of rows) {
        const terms = `${literal(tsvectorLiteral(row))}::tsvector, ${literal(termCounts(row))}::jsonb`
        if (row.seq > 0) {
          buffer.push(`INSERT INTO memory_records (seq, id, partition, status, kind, created_ms, content_hash, record, haystack, title_len, content_len, tags_len, terms, tf) VALUES (${[row.seq, row.id, row.partition, row.status, row.kind, row.createdMs, row.contentHash, recordJson(row), recordHaystack(row), ...row.lengths].map(literal).join(', ')}, ${terms})`)
        }
        else {
          // The row exists: the write read it under the same lock. An erased record's vector goes with its content.
          buffer.push(`UPDATE memory_records SET status = ${literal(row.status)}, kind = ${literal(row.kind)}, created_ms = ${literal(row.createdMs)}, content_hash = ${literal(row.contentHash)}, record = ${literal(recordJson(row))}, haystack = ${literal(recordHaystack(row))}, title_len = ${row.lengths[0]}, content_len = ${row.lengths[1]}, tags_len = ${row.lengths[2]}, (terms, tf) = (${terms}), terms_version = ${TERMS_VERSION}${row.record === null ? ', embedding = NULL, embedding_model = NULL, embedding_rev = NULL' : ''} WHERE id = ${literal(row.id)}`)
        }
        await flushLarge()
      }
    },
    async eventLines(recordId) {
      const rows = await sql(`SELECT seq, line FROM memory_events WHERE record_id = ${literal(recordId)} ORDER BY seq`)
      return rows.map(row => ({ seq: Number(row.seq), line: row.line as string }))
    },
    async updateLine(seq, line) {
      buffer.push(`UPDATE memory_events SET line = ${literal(line)} WHERE seq = ${literal(seq)}`)
    },
    async partitionRecords(partition) {
      const rows = await sql(`SELECT record FROM memory_records WHERE partition = ${literal(partition)} AND record IS NOT NULL ORDER BY seq`)
      return rows.map(row => parseRecord(row.record))
    },
    async activeCount(partition) {
      const rows = await sql(`SELECT active FROM memory_partitions WHERE partition = ${literal(partition)}`)
      return rows[0] ? Number(rows[0].active) : 0
    },
    async addStats(partition, delta) {
      buffer.push(`INSERT INTO memory_partitions (partition, active, title_sum, content_sum, tags_sum, title_docs, content_docs, tags_docs) VALUES (${[partition, delta.active, ...delta.lengthSums, ...delta.fieldCounts].map(literal).join(', ')})
        ON CONFLICT (partition) DO UPDATE SET active = memory_partitions.active + excluded.active, title_sum = memory_partitions.title_sum + excluded.title_sum, content_sum = memory_partitions.content_sum + excluded.content_sum, tags_sum = memory_partitions.tags_sum + excluded.tags_sum,
        title_docs = memory_partitions.title_docs + excluded.title_docs, content_docs = memory_partitions.content_docs + excluded.content_docs, tags_docs = memory_partitions.tags_docs + excluded.tags_docs`)
    },
  }
}

function postgresBackend(pool: () => Promise<PostgresPoolLike>, begin: readonly string[], erasureWaitMs: number): Omit<SqlBackend, 'write'> & { write<T>(task: (tx: PostgresWriteTx) => Promise<T>): Promise<T> } {
  const select = <T>(task: (client: PostgresClientLike) => Promise<T>) => run(pool, task)
  // The chain head this process committed or read last under the lock: a hint, checked by every write that uses it.
  let lastHead: ChainHead | undefined
  let writing = 0
  async function attempt<T>(client: PostgresClientLike, task: (tx: PostgresWriteTx) => Promise<T>, assumed: ChainHead | undefined): Promise<T> {
    const tx = writeTx(client, begin, assumed)
    try {
      const result = await task(tx)
      await tx.commit()
      lastHead = tx.chainHead
      return result
    }
    catch (error) {
      lastHead = undefined
      if (tx.begun) await client.query('ROLLBACK').catch(() => {})
      throw error
    }
  }
  return {
    write: task => run(pool, async (client) => {
      writing++
      try {
        // Concurrent writes of this process would move each other's head: only a lone write assumes it.
        const assumed = writing === 1 ? lastHead : undefined
        try {
          return await attempt(client, task, assumed)
        }
        catch (error) {
          if (!assumed || (error as { code?: unknown } | undefined)?.code !== HEAD_MOVED) throw error
          return await attempt(client, task, undefined)
        }
      }
      finally {
        writing--
      }
    }),
    read: (partition, id) => select(async (client) => {
      const { rows } = await client.query('SELECT record FROM memory_records WHERE id = $1 AND partition = $2 AND record IS NOT NULL', [id, partition])
      return rows[0] ? parseRecord(rows[0].record) : undefined
    }),
    export: partition => select(async (client) => {
      const { rows } = await client.query('SELECT record FROM memory_records WHERE partition = $1 AND record IS NOT NULL ORDER BY seq', [partition])
      return rows.map(row => parseRecord(row.record))
    }),
    substring: (partition, needle, page) => select(async (client) => {
      const { rows } = await client.query(`SELECT record, (length(haystack) - length(replace(haystack, $2, ''))) / length($2) AS score FROM memory_records
        WHERE partition = $1 AND status = 'active' AND strpos(haystack, $2) > 0 ORDER BY score DESC, created_ms DESC, seq DESC LIMIT $3 OFFSET $4`, [partition, needle, page.limit, page.offset])
      return rows.map(row => ({ record: parseRecord(row.record), score: Number(row.score) }))
    }),
    postings: (partition, terms) => select(async (client) => {
      // The GIN index finds the records; their per-term counts come from `tf` (cheaper than unnesting the tsvector).
      const { rows } = await client.query(`SELECT r.seq, r.id, r.created_ms, r.title_len, r.content_len, r.tags_len, ARRAY(SELECT r.tf -> t FROM unnest($3::text[]) AS t) AS counts
        FROM memory_records r WHERE r.terms @@ $1::tsquery AND r.partition = $2 AND r.status = 'active'`, [tsqueryLiteral(terms), partition, terms])
      return rows.flatMap((row) => {
        const lengths: [number, number, number] = [row.title_len, row.content_len, row.tags_len]
        return (row.counts as Array<[number, number, number] | null>).flatMap((counts, index) => (counts ?? []).flatMap((count, field) => (count > 0 ? [{ seq: Number(row.seq), id: row.id as string, createdMs: Number(row.created_ms), lengths, term: terms[index]!, field, count }] : [])))
      })
    }),
    stats: partition => select(async (client) => {
      const { rows } = await client.query('SELECT * FROM memory_partitions WHERE partition = $1', [partition])
      const row = rows[0]
      const stats: SqlPartitionStats = row
        ? { active: Number(row.active), lengthSums: [Number(row.title_sum), Number(row.content_sum), Number(row.tags_sum)], fieldCounts: [Number(row.title_docs), Number(row.content_docs), Number(row.tags_docs)] }
        : rowStats(undefined)
      return stats
    }),
    documentFrequencies: (partition, terms) => select(async (client) => {
      const { rows } = await client.query(`SELECT q.n - 1 AS at, (SELECT count(*) FROM memory_records r WHERE r.partition = $1 AND r.status = 'active' AND r.terms @@ q.query::tsquery) AS count
        FROM unnest($2::text[]) WITH ORDINALITY AS q(query, n)`, [partition, terms.map(term => tsqueryLiteral([term]))])
      const found = new Map<string, number>()
      for (const row of rows) if (Number(row.count) > 0) found.set(terms[Number(row.at)]!, Number(row.count))
      return found
    }),
    termCandidates: (partition, terms, limit) => select(async (client) => {
      // ts_rank weights are {D, C, B, A}: dates (D) 1.5, tags (C) 2, content (B) 1, title (A) 2, as the default ranking weighs the fields; 1 divides by 1 + log(length).
      const { rows } = await client.query(`SELECT seq FROM memory_records WHERE partition = $1 AND status = 'active' AND terms @@ $2::tsquery
        ORDER BY ts_rank('{0.75, 1.0, 0.5, 1.0}', terms, $2::tsquery, 1) DESC, seq DESC LIMIT $3`, [partition, tsqueryLiteral(terms), limit])
      return rows.map(row => Number(row.seq))
    }),
    changesSince: (partition, since) => select(async (client) => {
      // One round trip when nothing changed: the head, and the digest of the event at `since`.
      const { rows: heads } = await client.query(`SELECT h.seq, h.digest, (SELECT digest FROM memory_events WHERE seq = $1) AS at FROM (${HEAD_SQL}) h`, [since?.seq ?? 0])
      const head = heads[0] ? { seq: Number(heads[0].seq), digest: String(heads[0].digest) } : { seq: 0, digest: null }
      if (!since || (since.seq > 0 && heads[0]?.at !== since.digest)) return { head }
      if (head.seq === since.seq) return { head, changed: new Map() }
      // Records changed by events after `since`, read after the head: an event between the two is reported again next time.
      const { rows } = await client.query(`SELECT e.id, r.record FROM (SELECT record_id AS id, min(seq) AS first FROM memory_events WHERE seq > $1 AND partition = $2 GROUP BY record_id) e
        LEFT JOIN memory_records r ON r.id = e.id ORDER BY e.first`, [since.seq, partition])
      const changed = new Map<string, SqlStoredRecord>()
      for (const row of rows) changed.set(row.id, row.record ? { record: parseRecord(row.record), erased: false } : { erased: true })
      return { head, changed }
    }),
    bySeq: (partition, seqs) => select(async (client) => {
      const found = new Map<number, MemoryRecord>()
      if (seqs.length === 0) return found
      const { rows } = await client.query('SELECT seq, record FROM memory_records WHERE seq = ANY($1::bigint[]) AND partition = $2 AND record IS NOT NULL', [seqs, partition])
      for (const row of rows) found.set(Number(row.seq), parseRecord(row.record))
      return found
    }),
    // An erasure replaced rows: their old versions hold the erased text until a vacuum removes
    // them from the table files; a GIN index never drops a key, so the erased words stay in the
    // full-text index until it is rebuilt (concurrently: writes go on meanwhile).
    afterCompaction: () => select(async (client) => {
      await vacuumErasedVersions(client, erasureWaitMs)
      await client.query('REINDEX INDEX CONCURRENTLY memory_records_terms')
    }),
  }
}

async function linesText(client: PostgresClientLike): Promise<string> {
  let text = ''
  // Pages by seq: the text is built without one huge result set.
  for (let after = 0; ;) {
    const { rows } = await client.query('SELECT seq, line FROM memory_events WHERE seq > $1 ORDER BY seq LIMIT 10000', [after])
    if (rows.length === 0) return text
    for (const row of rows) text += `${row.line}\n`
    after = Number(rows.at(-1).seq)
  }
}

const CONNECTION_CODES = new Set(['57P01', '57P02', '57P03', '08000', '08003', '08006', '08001', '08004', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND'])

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code
  const message = error instanceof Error ? error.message : ''
  return (typeof code === 'string' && CONNECTION_CODES.has(code)) || /Connection terminated|connection is closed|Client has encountered a connection error/i.test(message)
}

/** An AgentError as is; a lost or refused connection as `MEMORY_POSTGRES_UNAVAILABLE`; other errors as `MEMORY_POSTGRES_FAILED`. */
function postgresError(error: unknown): unknown {
  if (isAgentError(error)) return error
  const message = error instanceof Error ? error.message : String(error)
  const code = (error as { code?: unknown } | undefined)?.code
  if (isConnectionError(error)) {
    return agentError('MEMORY_POSTGRES_UNAVAILABLE', `the connection to the memory database was lost or refused (${message}); the operation was not applied`, 'retry the operation; check that the Postgres server is running and reachable', { ...(typeof code === 'string' ? { pgCode: code } : {}) }, error)
  }
  return agentError('MEMORY_POSTGRES_FAILED', `the memory database failed: ${message}`, 'check the server log; verify() reports a bad row', { ...(typeof code === 'string' ? { pgCode: code } : {}) }, error)
}

function optionsError(why: string, fix: string, details?: Record<string, unknown>) {
  return agentError('MEMORY_STORE_OPTIONS_INVALID', why, fix, details)
}
