/**
 * `npm run bench:sqlite-append`: where an append of `sqliteMemoryStore` spends its time, next to
 * the FTS5 table baseline's insert in the same process (issue 12). Seeds `--records N` (default
 * 100,000) in `--scopes S` (default 1,000) into the store and both FTS5 layouts, then:
 *
 * 0. `--warm W` (default 1,000) untimed appends per subject, in turn (the append path's JavaScript
 *    runs cold for its first few hundred appends; the FTS5 insert is one native call);
 * 1. `--rounds R` (default 5) interleaved rounds of `--round` (default 200) appends, one append
 *    per subject in turn (store, FTS5 with the scope as a column, as a token; the order turns
 *    each round), nothing wrapped: the p50 and the mean (with the WAL checkpoints and FTS5 merges
 *    that land in the round) of each round, min and median over the rounds, and the ratio to the better FTS5
 *    layout; then the store's deferred FTS5 indexing of those appends (the next search indexes
 *    the tail in one transaction: src/memory/stores/sqlite/fts-tail.ts), per record;
 * 2. `--appends` (default 2,000) appends with each prepared statement's `run`/`get`/`all` timed
 *    (better-sqlite3's Statement methods wrapped), the WAL frames a commit writes (the wal-index
 *    header's frame count), the time outside SQLite, and every append's percentiles and mean.
 *
 * `BENCH_CLOCK=cpu` times by the process's CPU time. Prints the settings of both databases.
 */
import { closeSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs'
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
const ROUNDS = Number(arg('rounds', '5'))
const ROUND = Number(arg('round', '200'))
const WARM = Number(arg('warm', '1000'))
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
const fts5Files = { column: join(dir, 'fts5-column.db'), token: join(dir, 'fts5-token.db') }
for (const layout of ['column', 'token'] as const) {
  const loader = openFts5Baseline(fts5Files[layout], layout)
  loader.load(Array.from({ length: RECORDS }, (_, i) => ({ scope: scopeOf(i), content: content(i) })))
  loader.close()
}
const fts5File = fts5Files.column

const factory = sqliteMemoryStore({ file })
const adapter = factory.create()
const baseline = openFts5Baseline(fts5File, 'column')
const tokenBaseline = openFts5Baseline(fts5Files.token, 'token')
await adapter.search(target('u1'), { query: 'weekend' })

// 0. Untimed warm-up: each subject appends WARM times in turn, so that the rounds time the append
// path's JavaScript optimized (V8 optimizes a function once it has run a while), as the FTS5
// table's insert, one native call, is from the start; then the tail those appends left is indexed.
let next = RECORDS
for (let i = 0; i < WARM; i++, next++) {
  await adapter.append(target(scopeOf(next)), { kind: 'semantic', content: content(next) }, { audit: { via: 'api' } })
  baseline.insert(scopeOf(next), content(next))
  tokenBaseline.insert(scopeOf(next), content(next))
}
await adapter.search(target(scopeOf(next)), { query: 'weekend' })

// 1. Interleaved rounds, nothing wrapped.
const roundP50 = { store: [] as number[], column: [] as number[], token: [] as number[] }
const roundMean = { store: [] as number[], column: [] as number[], token: [] as number[] }
const indexPerRecord: number[] = []
for (let r = 0; r < ROUNDS; r++) {
  const round = { store: [] as number[], column: [] as number[], token: [] as number[] }
  // The order of the subjects turns each round: none always follows the same one.
  const appenders = {
    store: (n: number) => adapter.append(target(scopeOf(n)), { kind: 'semantic', content: content(n) }, { audit: { via: 'api' } }),
    column: (n: number) => baseline.insert(scopeOf(n), content(n)),
    token: (n: number) => tokenBaseline.insert(scopeOf(n), content(n)),
  }
  const keys = (['store', 'column', 'token'] as const).map((_, k, all) => all[(r + k) % all.length]!)
  for (let i = 0; i < ROUND; i++, next++) {
    for (const key of keys) {
      const started = now()
      await appenders[key](next)
      round[key].push(now() - started)
    }
  }
  for (const key of keys) roundMean[key].push(round[key].reduce((sum, value) => sum + value, 0) / ROUND)
  for (const key of ['store', 'column', 'token'] as const) roundP50[key].push(median(round[key]))
  // The round's records are indexed by the next ranked search (one transaction): its time less a search's own.
  const started = now()
  await adapter.search(target(scopeOf(next)), { query: 'weekend' })
  const withTail = now() - started
  const again = now()
  await adapter.search(target(scopeOf(next)), { query: 'weekend' })
  indexPerRecord.push((withTail - (now() - again)) / ROUND)
}
const fmt = (values: number[]) => `min ${Math.min(...values).toFixed(4)} / median ${median(values).toFixed(4)} ms`
const best = roundP50.column.map((value, r) => Math.min(value, roundP50.token[r]!))
console.log(`load ${loadavg().map(v => v.toFixed(2)).join(' ')}, clock ${cpu ? 'cpu' : 'wall'}, ${RECORDS} records, ${SCOPES} scopes, ${WARM} untimed appends per subject, then ${ROUNDS} interleaved rounds of ${ROUND}`)
console.log(`append p50 per round: store ${fmt(roundP50.store)}; FTS5 column ${fmt(roundP50.column)}; FTS5 token ${fmt(roundP50.token)}`)
console.log(`ratio store / better FTS5 layout per round: ${roundP50.store.map((value, r) => (value / best[r]!).toFixed(2)).join(' ')} (median ${median(roundP50.store.map((value, r) => value / best[r]!)).toFixed(2)})`)
console.log(`append mean per round (WAL checkpoints and FTS5 merges included): store ${fmt(roundMean.store)}; FTS5 column ${fmt(roundMean.column)}; FTS5 token ${fmt(roundMean.token)}`)
console.log(`store: deferred FTS5 indexing per record (a round's tail, one transaction): ${fmt(indexPerRecord)}`)
tokenBaseline.close()

const settings = (path: string) => {
  const db = new Database(path, { readonly: true })
  const out = { journal_mode: db.pragma('journal_mode', { simple: true }), synchronous: db.pragma('synchronous', { simple: true }), page_size: db.pragma('page_size', { simple: true }), secure_delete: db.pragma('secure_delete', { simple: true }) }
  db.close()
  return out
}
/**
 * Frames in the WAL now: `mxFrame` of the wal-index header (offset 16 of the -shm file, native
 * byte order). The -wal file's size would miss every commit after the first checkpoint, since
 * SQLite then writes the WAL again from its start without shrinking it.
 */
const walFrames = (path: string) => {
  const fd = openSync(`${path}-shm`, 'r')
  try {
    const header = Buffer.alloc(20)
    readSync(fd, header, 0, 20, 0)
    return header.readUInt32LE(16)
  }
  finally {
    closeSync(fd)
  }
}
const frames = { store: [] as number[], fts5: [] as number[] }
const times = { store: [] as number[], fts5: [] as number[] }
const outside: number[] = []
for (let n = 0; n < APPENDS; n++, next++) {
  const walStore = walFrames(file)
  profiling = true
  inStatements = 0
  let started = now()
  await adapter.append(target(scopeOf(next)), { kind: 'semantic', content: content(next) }, { audit: { via: 'api' } })
  times.store.push(now() - started)
  outside.push(times.store.at(-1)! - inStatements)
  profiling = false
  // A drop: a checkpoint reset the WAL in this commit (its frames are not counted).
  const grown = walFrames(file) - walStore
  if (grown > 0) frames.store.push(grown)
  const walBase = walFrames(fts5File)
  started = now()
  baseline.insert(scopeOf(next), content(next))
  times.fts5.push(now() - started)
  const grownBase = walFrames(fts5File) - walBase
  if (grownBase > 0) frames.fts5.push(grownBase)
}
console.log(`load ${loadavg().map(v => v.toFixed(2)).join(' ')}, clock ${cpu ? 'cpu' : 'wall'}, ${RECORDS} records, ${SCOPES} scopes, ${APPENDS} appends`)
console.log('settings store', settings(file), 'fts5', settings(fts5File))
console.log(`append p50: store ${median(times.store).toFixed(4)} ms, FTS5 table ${median(times.fts5).toFixed(4)} ms, ratio ${(median(times.store) / median(times.fts5)).toFixed(2)}`)
// The whole distribution: a p50 leaves out the WAL checkpoints (about every 1,000 WAL pages) and FTS5's segment merges, which the mean carries.
const spread = (values: number[]) => Object.fromEntries([['p10', 0.1], ['p25', 0.25], ['p50', 0.5], ['p75', 0.75], ['p90', 0.9], ['p99', 0.99], ['max', 1]].map(([name, p]) => [name, Number([...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p as number) * values.length))]!.toFixed(4))]).concat([['mean', Number((values.reduce((sum, value) => sum + value, 0) / values.length).toFixed(4))]]))
console.log('every append, ms')
console.table({ store: spread(times.store), 'FTS5 table': spread(times.fts5) })
console.log(`store: time outside SQLite statements p50 ${(median(outside) * 1000).toFixed(1)} us`)
const meanOf = (values: number[]) => (values.reduce((sum, value) => sum + value, 0) / values.length).toFixed(2)
console.log(`WAL frames per commit (commits without a checkpoint: median / mean): store ${median(frames.store)} / ${meanOf(frames.store)}, FTS5 table ${median(frames.fts5)} / ${meanOf(frames.fts5)}`)
const rows = [...spent].map(([sql, { ms, calls, samples }]) => ({ sql: sql.replace(/\s+/g, ' ').slice(0, 80), usMean: Math.round(ms / APPENDS * 1000 * 10) / 10, usP50: Math.round(median(samples) * 1000 * 10) / 10, calls: calls / APPENDS }))
rows.sort((a, b) => b.usP50 - a.usP50)
console.table(rows)
console.log(`SQL per append: sum of p50s ${rows.reduce((sum, row) => sum + row.usP50 * row.calls, 0).toFixed(1)} us, mean ${rows.reduce((sum, row) => sum + row.usMean, 0).toFixed(1)} us`)
await factory.close()
baseline.close()
rmSync(dir, { recursive: true, force: true })
