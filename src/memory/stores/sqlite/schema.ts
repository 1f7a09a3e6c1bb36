/**
 * The tables of the SQLite store (docs/sqlite-store.md) and the upgrade of a file written by an
 * older schema, in one transaction on open.
 *
 * Schema 3: a record is stored once, in its event lines. `memory_records` keeps per record only
 * what lookups, filters and the substring rule need (id, partition, status, creation time,
 * duplicate hash, field lengths, the lower-cased searched text, the seqs of its later events) and
 * reads the record from its lines, clustered by scope (a scope's rows are read in creation order
 * from neighbouring pages); `memory_fts` is contentless (postings only). A scope's statistics for BM25F (active records, field lengths) are
 * summed from the index `memory_records_partition` when a search asks, so a write updates no
 * counter row.
 */
import type Database from 'better-sqlite3'
import { agentError } from '../../../errors.ts'
import { foldLines, type SqlRecordRow } from '../sql/core.ts'
import { laterSeqs } from './lines.ts'

/** Schema version kept in SQLite's `user_version` (1: events only; 2: events, records as JSON, FTS5; 3: records read from the lines). Files of 1 and 2 are upgraded on open. */
export const SCHEMA_VERSION = 3

export const SCHEMA = `
  CREATE TABLE IF NOT EXISTS memory_events (
    seq INTEGER PRIMARY KEY,
    type TEXT NOT NULL,
    record_id TEXT NOT NULL,
    digest TEXT NOT NULL,
    line TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS memory_partitions (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE
  );
  CREATE TABLE IF NOT EXISTS memory_records (
    partition INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    id TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    content_hash INTEGER,
    haystack TEXT NOT NULL,
    title_len INTEGER NOT NULL,
    content_len INTEGER NOT NULL,
    tags_len INTEGER NOT NULL,
    later TEXT,
    PRIMARY KEY (partition, seq)
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS memory_records_partition ON memory_records (partition, status, content_hash, title_len, content_len, tags_len);
  CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5 (title, content, tags, content = '', contentless_delete = 1, tokenize = 'ascii');
  CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts_instance USING fts5vocab (memory_fts, 'instance');
  INSERT INTO memory_fts (memory_fts, rank) VALUES ('secure-delete', 1);
`

/** Writes record rows and their partitions (the store's statements), as import does. */
export type RowWriter = (rows: readonly SqlRecordRow[]) => void

/**
 * Creates the tables (schema 3), or upgrades an older file in one `BEGIN IMMEDIATE` transaction:
 * schema 1 (events only) by folding its events once; schema 2 by moving its records and partition
 * rows into the new tables (the FTS5 index and the lines stay as they are) and dropping the old
 * tables (the record JSON, the counters). Any failure rolls the whole upgrade back.
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
    if (version < SCHEMA_VERSION) {
      if (version === 2) db.exec('DROP INDEX IF EXISTS memory_records_partition; DROP INDEX IF EXISTS memory_records_duplicate; ALTER TABLE memory_records RENAME TO memory_records_v2; ALTER TABLE memory_partitions RENAME TO memory_partitions_v2')
      db.exec(SCHEMA)
      if (version === 1) {
        const rows = db.prepare('SELECT line FROM memory_events ORDER BY seq').all() as Array<{ line: string }>
        write(foldLines(rows.map(row => `${row.line}\n`).join('')).records)
        db.exec('DROP TABLE IF EXISTS memory_meta')
      }
      if (version === 2) upgradeRecords(db)
      if (version === 1 || version === 2) db.exec('DROP INDEX IF EXISTS memory_events_record; ALTER TABLE memory_events DROP COLUMN store; ALTER TABLE memory_events DROP COLUMN partition')
      db.pragma(`user_version = ${SCHEMA_VERSION}`)
    }
    db.exec('COMMIT')
  }
  catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK')
    throw error
  }
}

/** Schema 2 to 3: each partition gets an id, each record row the seqs of its later events; the old tables (with the record JSON and the counters) are dropped. */
function upgradeRecords(db: Database.Database): void {
  db.exec('INSERT INTO memory_partitions (key) SELECT DISTINCT partition FROM memory_records_v2 ORDER BY partition')
  const later = db.prepare<[string, number], { later: string | null }>('SELECT group_concat(seq, \' \') AS later FROM (SELECT seq FROM memory_events WHERE record_id = ? AND seq > ? ORDER BY seq)')
  const insert = db.prepare(`INSERT INTO memory_records (seq, id, partition, status, created_ms, content_hash, haystack, title_len, content_len, tags_len, later)
    VALUES (?, ?, (SELECT id FROM memory_partitions WHERE key = ?), ?, ?, ?, ?, ?, ?, ?, ?)`)
  const old = db.prepare<[number], { seq: number; id: string; partition: string; status: string; created_ms: number; content_hash: number | null; haystack: string; title_len: number; content_len: number; tags_len: number }>('SELECT seq, id, partition, status, created_ms, content_hash, haystack, title_len, content_len, tags_len FROM memory_records_v2 WHERE seq > ? ORDER BY seq LIMIT 1000')
  // A page at a time: the upgrade never holds every record.
  for (let after = 0, rows = old.all(after); rows.length > 0; after = rows.at(-1)!.seq, rows = old.all(after)) {
    for (const row of rows) {
      const seqs = laterSeqs(later.get(row.id, row.seq)?.later ?? null)
      insert.run(row.seq, row.id, row.partition, row.status, row.created_ms, row.content_hash, row.haystack, row.title_len, row.content_len, row.tags_len, seqs.length > 0 ? seqs.join(' ') : null)
    }
  }
  db.exec('DROP TABLE memory_records_v2; DROP TABLE memory_partitions_v2')
}
