import { sqliteMemoryStore } from '/work/wt-db/src/memory/stores/sqlite.ts'
import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
const file = join(mkdtempSync('/tmp/prof-'), 'x.db')
const f = sqliteMemoryStore({ file })
const a = f.create()
const t = (u: number) => ({ store: 'agent', scope: { agent: 'bench', user: 'u' + u } })
for (let i = 0; i < 3000; i++) await a.append(t(i % 30), { kind: 'semantic', content: `User ${i} enjoys tea and coffee with a dog near the river on the weekend note ${i}` }, { audit: { via: 'api' } })
await a.search(t(1), { query: 'weekend' })
await f.close()
for (let r = 0; r < 3; r++) {
  let s = performance.now()
  const db = new Database(file); db.pragma('busy_timeout = 5000'); db.pragma('journal_mode = WAL'); db.pragma('secure_delete = ON'); db.pragma('user_version', { simple: true })
  const t1 = performance.now() - s
  s = performance.now(); db.prepare('SELECT seq FROM memory_records WHERE id = ?'); const t2 = performance.now() - s
  s = performance.now(); db.prepare('INSERT INTO memory_fts (rowid, title, content, tags) VALUES (?, ?, ?, ?)'); const t3 = performance.now() - s
  s = performance.now(); db.prepare("SELECT v.doc FROM memory_fts_instance v WHERE v.term = ?"); const t4 = performance.now() - s
  db.close()
  s = performance.now(); const g = sqliteMemoryStore({ file }); const b = g.create(); await b.read(t(1), 'x'); const t5 = performance.now() - s
  s = performance.now(); await b.search(t(1), { query: 'weekend' }); const t6 = performance.now() - s
  s = performance.now(); await b.search(t(2), { query: 'weekend' }); const t7 = performance.now() - s
  await g.close()
  console.log({ open: t1, prep: t2, prepFts: t3, prepVocab: t4, storeOpen: t5, firstSearch: t6, secondSearch: t7 })
}
