/**
 * The FTS5 index of the SQLite store, written after the lines: a write commits its event rows
 * (the durable truth: line, seq, prev, digest, record columns) alone, and the postings of the
 * records it created are derived from those rows later, in one transaction for a whole tail of
 * writes: before the next ranked search of any connection that needs them, and on an idle turn
 * of the writing process ({@link INDEX_DELAY_MS} after its write). `memory_fts_state.indexed_seq`
 * is the high-water mark: every active record created after it is not yet in `memory_fts`.
 *
 * A search sees exactly what it would see had each record been indexed when written: whichever
 * connection searches first indexes the tail under `BEGIN IMMEDIATE` (several processes take
 * turns; the second finds the mark moved and has nothing to do), and a crash between a write and
 * its indexing leaves a tail the next search indexes. Records of the tail that a later event
 * changed (superseded, deleted, erased) are not active and are left out; a later event of an
 * indexed record deletes its postings in its own transaction, as before.
 *
 * Why: FTS5 writes a segment at each commit that inserted postings, and merges segments every few
 * dozen commits; one commit for a batch of N records costs a small part of N commits.
 */
import type Database from 'better-sqlite3'
import { indexTerms } from '../sql/core.ts'
import { recordOfLines } from './lines.ts'
import { lazyStatements } from './statements.ts'

/** How long after its last write a connection indexes its tail on its own, in milliseconds (a burst of writes is indexed as one batch). */
export const INDEX_DELAY_MS = 20

/** Records indexed per transaction at most (the write lock is released between batches). */
export const INDEX_BATCH = 2000

/** The statements the tail needs on one connection. */
function prepare(db: Database.Database) {
  return lazyStatements({
    // One snapshot: the mark and the chain head.
    state: () => db.prepare<[], { indexed: number; head: number }>('SELECT (SELECT indexed_seq FROM memory_fts_state WHERE id = 1) AS indexed, coalesce((SELECT max(seq) FROM memory_events), 0) AS head'),
    tail: () => db.prepare<[number, number], { seq: number; line: string; key: string }>(`SELECT e.seq, e.line, p.key FROM memory_events e JOIN memory_partitions p ON p.id = e.partition
      WHERE e.seq > ? AND e.status = 'active' ORDER BY e.seq LIMIT ?`),
    insertFts: () => db.prepare<[number, string, string, string, string]>('INSERT INTO memory_fts (rowid, title, content, tags, dates) VALUES (?, ?, ?, ?, ?)'),
    mark: () => db.prepare<[number]>('UPDATE memory_fts_state SET indexed_seq = ? WHERE id = 1'),
    begin: () => db.prepare('BEGIN IMMEDIATE'),
    commit: () => db.prepare('COMMIT'),
  })
}

/** One connection's view of the tail: whether it may have records to index, and the idle timer. */
export class FtsTail {
  private readonly statements: ReturnType<typeof prepare>
  /** `PRAGMA data_version` when the index was last seen complete (`undefined`: not yet). */
  private completeAt: number | undefined
  /** This connection committed records since the index was last seen complete. */
  private dirty = true
  private timer: ReturnType<typeof setTimeout> | undefined
  /** When this connection last committed records (ms): the idle timer waits until {@link INDEX_DELAY_MS} after it. */
  private lastWrite = 0

  /**
   * @param dataVersion the connection's `PRAGMA data_version` (another connection's commit changes it, this one's does not)
   * @param idle runs a task on the connection after the operations queued on it (the store's queue)
   */
  constructor(private readonly db: Database.Database, private readonly dataVersion: () => number, private readonly idle: (task: () => void) => void) {
    this.statements = prepare(db)
  }

  /** This connection committed new records: they are indexed before its next search, or on an idle turn. */
  wrote(): void {
    this.dirty = true
    this.lastWrite = Date.now()
    if (this.timer === undefined) this.arm(INDEX_DELAY_MS)
  }

  /**
   * The idle timer: it fires `ms` from now and, while writes keep coming (a burst, whose writes
   * give the event loop turns, src/log/turns.ts), waits again until {@link INDEX_DELAY_MS} passed
   * without one, so that a burst is indexed as one tail. One timer per burst, not one per write.
   */
  private arm(ms: number): void {
    this.timer = setTimeout(() => {
      const quiet = Date.now() - this.lastWrite
      if (quiet < INDEX_DELAY_MS) return this.arm(INDEX_DELAY_MS - quiet)
      this.timer = undefined
      // A failure (another process holding the lock) leaves the tail to the next search.
      this.idle(() => { try { this.catchUp() } catch {} })
    }, ms)
    this.timer.unref?.()
  }

  /**
   * Indexes every record of the tail, in batches of {@link INDEX_BATCH}, each in one
   * `BEGIN IMMEDIATE` transaction. Cheap when nothing changed: no other connection committed
   * (`data_version`) and this one wrote nothing since the index was last complete. Must not run
   * inside a transaction.
   */
  catchUp(): void {
    const version = this.dataVersion()
    if (!this.dirty && version === this.completeAt) return
    const s = this.statements
    let { indexed, head } = s.state.get()!
    while (indexed < head) {
      s.begin.run()
      try {
        // Read again under the write lock: another connection may have indexed it meanwhile.
        ;({ indexed, head } = s.state.get()!)
        const rows = indexed < head ? s.tail.all(indexed, INDEX_BATCH) : []
        for (const row of rows) {
          const terms = indexTerms(recordOfLines([row.line]), row.key)
          if (terms) s.insertFts.run(row.seq, terms[0], terms[1], terms[2], terms[3])
        }
        indexed = rows.length === INDEX_BATCH ? rows.at(-1)!.seq : head
        s.mark.run(indexed)
        s.commit.run()
      }
      catch (error) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK')
        throw error
      }
    }
    this.dirty = false
    this.completeAt = version
  }

  /** The connection closes: no more idle indexing. */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }
}
