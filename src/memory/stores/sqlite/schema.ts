/**
 * The tables of the SQLite store (docs/sqlite-store.md) and the upgrade of a file written by an
 * older schema, in one transaction on open.
 *
 * Schema 5: a record is stored once, in its event lines, and its lookup and filter columns live on
 * the row of its `remember` line (`memory_events`), so a write adds one row to one table: what
 * lookups, filters and the substring rule need (partition, status, creation time, duplicate hash,
 * field lengths, the lower-cased searched text, the seqs of its later events) is on that row, and
 * two partial indexes over the record rows find a record by id and a scope's records (covering the
 * filters, the statistics and the substring text, so a scope is read from neighbouring index
 * pages). `memory_fts` is contentless (postings only), with a fourth column `dates`: the
 * ranking-only date words of a record (never in the substring text). A scope's statistics for BM25F (active
 * records, field lengths) are summed from the scope index when a search asks, so a write updates
 * no counter row.
 */
import type Database from 'better-sqlite3'
import { agentError } from '../../../errors.ts'
import { foldLines, recordRow, type SqlRecordRow } from '../sql/core.ts'
import { laterSeqs, recordOfLines } from './lines.ts'

/**
 * Schema version kept in SQLite's `user_version` (1: events only; 2: events, records as JSON,
 * FTS5; 3: a records table read from the lines; 4: the record columns on the `remember` row; 5:
 * the `dates` column of `memory_fts`, and date words out of the substring text). Files of 1 to 4
 * are upgraded on open.
 */
export const SCHEMA_VERSION = 5

/** The record columns of a `memory_events` row (`NULL` on the rows of later events). */
const RECORD_COLUMNS = [
  ['partition', 'INTEGER'],
  ['status', 'TEXT'],
  ['created_ms', 'INTEGER'],
  ['content_hash', 'INTEGER'],
  ['title_len', 'INTEGER'],
  ['content_len', 'INTEGER'],
  ['tags_len', 'INTEGER'],
  ['later', 'TEXT'],
  ['haystack', 'TEXT'],
] as const

const EVENTS_TABLE = `
  CREATE TABLE IF NOT EXISTS memory_events (
    seq INTEGER PRIMARY KEY,
    type TEXT NOT NULL,
    record_id TEXT NOT NULL,
    digest TEXT NOT NULL,
    line TEXT NOT NULL,
    ${RECORD_COLUMNS.map(([name, type]) => `${name} ${type}`).join(',\n    ')}
  );`

/** The indexes and tables besides `memory_events` and the FTS5 index; a record row is one whose `status` is set. */
const REST = `
  CREATE UNIQUE INDEX IF NOT EXISTS memory_events_record ON memory_events (record_id) WHERE status IS NOT NULL;
  CREATE INDEX IF NOT EXISTS memory_events_partition ON memory_events (partition, status, content_hash, title_len, content_len, tags_len, created_ms, haystack) WHERE status IS NOT NULL;
  CREATE TABLE IF NOT EXISTS memory_partitions (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE
  );
`

/** The FTS5 index of the records' search terms (contentless), and its per-occurrence view. */
const FTS = `
  CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5 (title, content, tags, dates, content = '', contentless_delete = 1, tokenize = 'ascii');
  CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts_instance USING fts5vocab (memory_fts, 'instance');
  INSERT INTO memory_fts (memory_fts, rank) VALUES ('secure-delete', 1);
`

export const SCHEMA = EVENTS_TABLE + REST + FTS

/** Writes record rows and their partitions (the store's statements), as import does. */
export type RowWriter = (rows: readonly SqlRecordRow[]) => void

/**
 * Creates the tables (schema 5), or upgrades an older file in one `BEGIN IMMEDIATE` transaction:
 * schema 1 (events only) by folding its events once; schema 2 by moving its records and partition
 * rows onto the event rows and dropping the old tables (the record JSON, the counters); schema 3
 * by moving the columns of `memory_records` onto the rows of the `remember` lines and dropping
 * that table; schemas 2 to 4 then get a new FTS5 index (with `dates`) and each record's substring
 * text and field lengths again, from its lines, a page of records at a time. Any failure rolls the
 * whole upgrade back.
 *
 * @throws AgentError `MEMORY_SQLITE_OPEN_FAILED` for a file of a newer schema.
 */
export function migrate(db: Database.Database, file: string, write: RowWriter): void {
  db.exec('BEGIN IMMEDIATE')
  try {
    const version = db.pragma('user_version', { simple: true }) as number
    if (version > SCHEMA_VERSION) {
      throw agentError('MEMORY_SQLITE_OPEN_FAILED', `the memory database "${file}" has schema version ${version}, newer than this package's ${SCHEMA_VERSION}`, 'upgrade vite-agent-memory, or point `file` at another database', { file, version })
    }
    if (version === 0) db.exec(SCHEMA)
    else if (version < SCHEMA_VERSION) upgrade(db, version, write)
    if (version < SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`)
    db.exec('COMMIT')
  }
  catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK')
    throw error
  }
}

/** Schema 1 to 4 to 5, inside the upgrade's transaction. */
function upgrade(db: Database.Database, version: number, write: RowWriter): void {
  if (version <= 3) toRecordColumns(db, version, write)
  if (version >= 2) reindexRecords(db, write)
}

/** Schema 1, 2 or 3 to the record columns on the `remember` rows (schema 1: the FTS5 index of schema 5 too). */
function toRecordColumns(db: Database.Database, version: number, write: RowWriter): void {
  if (version === 2) db.exec('DROP INDEX IF EXISTS memory_records_partition; DROP INDEX IF EXISTS memory_records_duplicate; ALTER TABLE memory_records RENAME TO memory_records_v2; ALTER TABLE memory_partitions RENAME TO memory_partitions_v2')
  // Schemas 1 and 2 kept the store and the partition key on every event row; the upgrade of 2 finds a record's later events by a temporary index.
  if (version === 1 || version === 2) db.exec('DROP INDEX IF EXISTS memory_events_record; ALTER TABLE memory_events DROP COLUMN store; ALTER TABLE memory_events DROP COLUMN partition')
  if (version === 2) db.exec('CREATE INDEX memory_events_upgrade ON memory_events (record_id)')
  for (const [name, type] of RECORD_COLUMNS) db.exec(`ALTER TABLE memory_events ADD COLUMN ${name} ${type}`)
  db.exec(REST)
  if (version === 1) {
    db.exec(FTS)
    const rows = db.prepare('SELECT line FROM memory_events ORDER BY seq').all() as Array<{ line: string }>
    write(foldLines(rows.map(row => `${row.line}\n`).join('')).records)
    db.exec('DROP TABLE IF EXISTS memory_meta')
  }
  if (version === 2) upgradeRecords(db)
  if (version === 3) {
    db.exec(`UPDATE memory_events SET partition = r.partition, status = r.status, created_ms = r.created_ms, content_hash = r.content_hash, title_len = r.title_len,
      content_len = r.content_len, tags_len = r.tags_len, later = r.later, haystack = r.haystack FROM memory_records r WHERE memory_events.seq = r.seq`)
    db.exec('DROP TABLE memory_records')
  }
}

/** Schema 2 to 4: each partition gets an id, each record's row its columns and the seqs of its later events; the old tables (with the record JSON and the counters) are dropped. */
function upgradeRecords(db: Database.Database): void {
  db.exec('INSERT INTO memory_partitions (key) SELECT DISTINCT partition FROM memory_records_v2 ORDER BY partition')
  const later = db.prepare<[string, number], { later: string | null }>('SELECT group_concat(seq, \' \') AS later FROM (SELECT seq FROM memory_events WHERE record_id = ? AND seq > ? ORDER BY seq)')
  const update = db.prepare(`UPDATE memory_events SET partition = (SELECT id FROM memory_partitions WHERE key = ?), status = ?, created_ms = ?, content_hash = ?, haystack = ?, title_len = ?, content_len = ?, tags_len = ?, later = ? WHERE seq = ?`)
  const old = db.prepare<[number], { seq: number; id: string; partition: string; status: string; created_ms: number; content_hash: number | null; haystack: string; title_len: number; content_len: number; tags_len: number }>('SELECT seq, id, partition, status, created_ms, content_hash, haystack, title_len, content_len, tags_len FROM memory_records_v2 WHERE seq > ? ORDER BY seq LIMIT 1000')
  // A page at a time: the upgrade never holds every record.
  for (let after = 0, rows = old.all(after); rows.length > 0; after = rows.at(-1)!.seq, rows = old.all(after)) {
    for (const row of rows) {
      const seqs = laterSeqs(later.get(row.id, row.seq)?.later ?? null)
      update.run(row.partition, row.status, row.created_ms, row.content_hash, row.haystack, row.title_len, row.content_len, row.tags_len, seqs.length > 0 ? seqs.join(' ') : null, row.seq)
    }
  }
  db.exec('DROP TABLE memory_records_v2; DROP TABLE memory_partitions_v2; DROP INDEX memory_events_upgrade')
}

/**
 * Schemas 2 to 4 kept date words of `occurredAt` in the content terms and the substring text, and
 * three FTS5 columns: the index is made again with `dates`, and every record row of a record not
 * erased gets its columns and terms from its lines ({@link recordRow}), 1,000 records at a time.
 */
function reindexRecords(db: Database.Database, write: RowWriter): void {
  db.exec('DROP TABLE IF EXISTS memory_fts_instance; DROP TABLE IF EXISTS memory_fts')
  db.exec(FTS)
  const page = db.prepare<[number], { seq: number; later: string | null; line: string; partition: string }>(`SELECT e.seq, e.later, e.line, p.key AS partition FROM memory_events e JOIN memory_partitions p ON p.id = e.partition
    WHERE e.status IS NOT NULL AND e.status != 'erased' AND e.seq > ? ORDER BY e.seq LIMIT 1000`)
  const line = db.prepare<[number], { line: string }>('SELECT line FROM memory_events WHERE seq = ?')
  for (let after = 0, rows = page.all(after); rows.length > 0; after = rows.at(-1)!.seq, rows = page.all(after)) {
    write(rows.map((row) => {
      const later = laterSeqs(row.later)
      const record = recordOfLines([row.line, ...later.map(seq => line.get(seq)!.line)])
      return recordRow(record, row.seq, row.partition, false, [row.seq, ...later])
    }))
  }
}
