/**
 * Baseline for the store benchmarks (issue 12; reused by issue 13): a plain better-sqlite3 table
 * with an FTS5 index ranked by `bm25()`, what a strong engineer would write by hand. Two layouts:
 * `column` (the scope in an UNINDEXED column, filtered after the match) and `token` (the scope as
 * one extra token in an indexed column, matched with AND).
 */
import Database from 'better-sqlite3'

/** Which layout the baseline uses for scopes. */
export type Fts5Layout = 'column' | 'token'

/** One open FTS5 baseline database. */
export interface Fts5Baseline {
  readonly layout: Fts5Layout
  /** Inserts one row (autocommit: one transaction per insert, like one store append). */
  insert(scope: string, content: string): void
  /** Inserts many rows in one transaction (loading). */
  load(rows: Iterable<{ scope: string; content: string }>): void
  /** The best `limit` rows of the scope for the words of `query` (OR), by `bm25()`. */
  search(scope: string, query: string, limit?: number): Array<{ id: number; content: string; score: number }>
  close(): void
}

const scopeToken = (scope: string) => `s${Buffer.from(scope).toString('hex')}`
const words = (query: string) => query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []

/** Opens (creating when missing) an FTS5 baseline at `file` with WAL, like the store. */
export function openFts5Baseline(file: string, layout: Fts5Layout): Fts5Baseline {
  const db = new Database(file)
  // The store's settings (journal_mode WAL; synchronous NORMAL, better-sqlite3's default in WAL mode, stated as the store states it).
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL')
  db.exec(layout === 'column'
    ? 'CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5 (scope UNINDEXED, content, tokenize = \'porter unicode61 remove_diacritics 2\')'
    : 'CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5 (scope, content, tokenize = \'porter unicode61 remove_diacritics 2\')')
  const insert = db.prepare('INSERT INTO docs (scope, content) VALUES (?, ?)')
  const search = layout === 'column'
    ? db.prepare<[string, string, number], { id: number; content: string; score: number }>('SELECT rowid AS id, content, -bm25(docs) AS score FROM docs WHERE docs MATCH ? AND scope = ? ORDER BY bm25(docs) LIMIT ?')
    : db.prepare<[string, number], { id: number; content: string; score: number }>('SELECT rowid AS id, content, -bm25(docs, 0, 1) AS score FROM docs WHERE docs MATCH ? ORDER BY bm25(docs, 0, 1) LIMIT ?')
  const load = db.transaction((rows: Iterable<{ scope: string; content: string }>) => {
    for (const row of rows) insert.run(layout === 'token' ? scopeToken(row.scope) : row.scope, row.content)
  })
  return {
    layout,
    insert: (scope, content) => { insert.run(layout === 'token' ? scopeToken(scope) : scope, content) },
    load,
    search(scope, query, limit = 10) {
      const terms = words(query).map(word => `"${word}"`).join(' OR ')
      if (terms === '') return []
      return layout === 'column'
        ? (search as Database.Statement<[string, string, number], { id: number; content: string; score: number }>).all(`content : (${terms})`, scope, limit)
        : (search as Database.Statement<[string, number], { id: number; content: string; score: number }>).all(`scope : ${scopeToken(scope)} AND content : (${terms})`, limit)
    },
    close: () => db.close(),
  }
}
