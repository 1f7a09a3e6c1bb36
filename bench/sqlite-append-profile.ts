/**
 * `npm run bench:sqlite-append`: where an append of `sqliteMemoryStore` spends its time, next to
 * the FTS5 table baseline's insert in the same process (issue 12). Seeds `--records N` (default
 * 100,000) in `--scopes S` (default 1,000) into both, then times `--appends` (default 2,000)
 * appends one at a time in interleaved rounds, and per prepared statement the time its
 * `run`/`get`/`all` calls take (better-sqlite3's Statement methods wrapped), plus the WAL frames
 * a commit writes. Prints the p50 per append, the mean per statement and the settings of both.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { sqliteMemoryStore } from '../src/memory/stores/sqlite.ts'
import type { MemoryTarget } from '../src/memory/types.ts'
import { openFts5Baseline } from './baselines/fts5.ts'
import { rememberLog } from './import-log.ts'

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? fallback : process.argv[at + 1]!
}
const RECORDS = Number(arg('records', '100000'))
const SCOPES = Number(arg('scopes', '1000'))
const APPENDS = Number(arg('appends', '2000'))
const cpu = process.env.BENCH_CLOCK === 'cpu'
const now = () => {
  if (!cpu) return performance.now()
  const used = process.cpuUsage()
  return (used.user + used.system) / 1000
}
const WORDS = 'tea coffee hiking painting pottery camping music guitar family garden travel book movie running cooking sister brother school work city beach mountain river dinner lunch friend dog cat car train plane'.split(' ')
let seed = 11
const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
const pick = () => WORDS[Math.floor(random() * WORDS.length)]!
const content = (i: number) => `User ${i % 97} enjoys ${pick()} and ${pick()} with a ${pick()} near the ${pick()} on the weekend${i % 500 === 7 ? ' zebra' : ''} note ${i}`
const target = (scope: string): MemoryTarget => ({ store: 'agent', scope: { agent: 'bench', user: scope } })
const scopeOf = (i: number) => `u${i % SCOPES}`
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0

// Per statement source: total ms and calls, while `profiling` is on.
const spent = new Map<string, { ms: number; calls: number; samples: number[] }>()
let profiling = false
let inStatements = 0
const probe = new Database(':memory:')
const proto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, (...args: unknown[]) => unknown>
for (const method of ['run', 'get', 'all']) {
  const original = proto[method]!
  proto[method] = function (this: { source: string }, ...args: unknown[]) {
    if (!profiling) return original.apply(this, args)
    const started = now()
    try {
      return original.apply(this, args)
    }
    finally {
      const entry = spent.get(this.source) ?? { ms: 0, calls: 0, samples: [] }
      const ms = now() - started
      entry.ms += ms
      inStatements += ms
      entry.samples.push(ms)
      entry.calls++
      spent.set(this.source, entry)
    }
  }
}
probe.close()

const dir = mkdtempSync(join(tmpdir(), 'vam-sqlite-append-'))
const log = await rememberLog(RECORDS, i => target(scopeOf(i)), content)
const file = join(dir, 'store.db')
await sqliteMemoryStore({ file }).importLog(log)
await sqliteMemoryStore({ file }).close()
const fts5File = join(dir, 'fts5.db')
const loader = openFts5Baseline(fts5File, 'column')
loader.load(Array.from({ length: RECORDS }, (_, i) => ({ scope: scopeOf(i), content: content(i) })))
loader.close()

const factory = sqliteMemoryStore({ file })
const adapter = factory.create()
const baseline = openFts5Baseline(fts5File, 'column')
await adapter.search(target('u1'), { query: 'weekend' })
const settings = (path: string) => {
  const db = new Database(path, { readonly: true })
  const out = { journal_mode: db.pragma('journal_mode', { simple: true }), synchronous: db.pragma('synchronous', { simple: true }), page_size: db.pragma('page_size', { simple: true }), secure_delete: db.pragma('secure_delete', { simple: true }) }
  db.close()
  return out
}
const walSize = (path: string) => statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0
const pageSize = settings(file).page_size as number
const frames = { store: [] as number[], fts5: [] as number[] }
const times = { store: [] as number[], fts5: [] as number[] }
const outside: number[] = []
for (let n = 0; n < APPENDS; n++) {
  const walStore = walSize(file)
  profiling = true
  inStatements = 0
  let started = now()
  await adapter.append(target(scopeOf(n)), { kind: 'semantic', content: content(RECORDS + n) }, { audit: { via: 'api' } })
  times.store.push(now() - started)
  outside.push(times.store.at(-1)! - inStatements)
  profiling = false
  const grown = walSize(file) - walStore
  if (grown > 0) frames.store.push(grown / (pageSize + 24))
  const walBase = walSize(fts5File)
  started = now()
  baseline.insert(scopeOf(n), content(RECORDS + n))
  times.fts5.push(now() - started)
  const grownBase = walSize(fts5File) - walBase
  if (grownBase > 0) frames.fts5.push(grownBase / (pageSize + 24))
}
console.log(`load ${loadavg().map(v => v.toFixed(2)).join(' ')}, clock ${cpu ? 'cpu' : 'wall'}, ${RECORDS} records, ${SCOPES} scopes, ${APPENDS} appends`)
console.log('settings store', settings(file), 'fts5', settings(fts5File))
console.log(`append p50: store ${median(times.store).toFixed(4)} ms, FTS5 table ${median(times.fts5).toFixed(4)} ms, ratio ${(median(times.store) / median(times.fts5)).toFixed(2)}`)
console.log(`store: time outside SQLite statements p50 ${(median(outside) * 1000).toFixed(1)} us`)
console.log(`WAL frames per commit (median of growing commits): store ${median(frames.store)}, FTS5 table ${median(frames.fts5)}`)
const rows = [...spent].map(([sql, { ms, calls, samples }]) => ({ sql: sql.replace(/\s+/g, ' ').slice(0, 80), usMean: Math.round(ms / APPENDS * 1000 * 10) / 10, usP50: Math.round(median(samples) * 1000 * 10) / 10, calls: calls / APPENDS }))
rows.sort((a, b) => b.usP50 - a.usP50)
console.table(rows)
console.log(`SQL per append: sum of p50s ${rows.reduce((sum, row) => sum + row.usP50 * row.calls, 0).toFixed(1)} us, mean ${rows.reduce((sum, row) => sum + row.usMean, 0).toFixed(1)} us`)
await factory.close()
baseline.close()
rmSync(dir, { recursive: true, force: true })
