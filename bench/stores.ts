/**
 * `npm run bench:stores`: the database stores next to the JSONL store and two baselines, same
 * workload, same run (issue 12). Records of about 100 characters, `--records N` (default 100,000)
 * in `--scopes S` scopes (default 1,000; `--scopes 1` for one scope). Postgres runs when
 * DATABASE_URL is set and its server answers.
 *
 * Measured per store: append p50 one at a time (the first 200 after the open, `appendColdP50Ms`,
 * and 200 after `--warm` untimed appends, default 1,000, the same for every subject:
 * `appendP50Ms`) and in a burst of 100 parallel appends, cold open
 * -> first search in one scope (in this process, once: `coldOpenFirstSearchMs`; for the SQLite
 * store and the FTS5 tables also in `--cold-runs` fresh processes each, default 5, interleaved:
 * `coldProcessFirstSearchMs*`, see {@link coldProcessRuns}), first search in every scope, common / rare / six-word search
 * p50 and p95, bytes on disk per record, heap and RSS growth per record (growth of this process
 * while a subject opens and searches every scope: the heap figure is exact after a GC, the RSS one
 * is noisy, since the allocator keeps what earlier subjects freed). Appends are timed again in
 * `--rounds` (default 3) interleaved rounds of 100 (one append per subject in turn), next to the
 * floors of a Postgres write (a `SELECT 1` round trip, a bare one-row INSERT durable and with
 * `synchronous_commit` off); search timings in `--rounds` interleaved rounds too; min and median
 * of the round p50s are reported, with the load average at the start and the end. The SQLite
 * store and the FTS5 tables are also timed in `--append-rounds` (default 7) rounds of 200
 * appends among themselves, with nothing else in the rounds (see {@link sqliteAppendRounds}):
 * `appendRounds*`, the issue-12 append row.
 * Results go to bench/results/stores.json (or the path after `--json`).
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { createStorage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import { postgresMemoryStore } from '../src/memory/stores/postgres.ts'
import { sqliteMemoryStore } from '../src/memory/stores/sqlite.ts'
import { workspaceJsonlMemoryStore } from '../src/memory/stores/workspace-jsonl.ts'
import { rememberLog } from './import-log.ts'
import type { MemoryStoreAdapter, MemoryTarget } from '../src/memory/types.ts'
import { createWorkspace } from '../src/workspace/workspace.ts'
import { openFts5Baseline, type Fts5Baseline } from './baselines/fts5.ts'
import { createMiniSearchBaseline } from './baselines/minisearch.ts'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? fallback : process.argv[at + 1]!
}
const RECORDS = Number(arg('records', '100000'))
const SCOPES = Number(arg('scopes', '1000'))
const ROUNDS = Number(arg('rounds', '3'))
/** Untimed appends each subject makes after its first 200 timed ones and before the 200 of `appendP50Ms` (the same for every subject). */
const WARM_APPENDS = Number(arg('warm', '1000'))
/** Rounds of 200 appends of the SQLite store and the FTS5 tables among themselves. */
const APPEND_ROUNDS = Number(arg('append-rounds', '7'))
/** Fresh processes per subject for the cold open -> first search of the SQLite store and the FTS5 tables. */
const COLD_RUNS = Number(arg('cold-runs', '5'))
const OUT = resolve(arg('json', join(root, 'bench/results/stores.json')))
const DATABASE_URL = process.env.DATABASE_URL

const WORDS = 'tea coffee hiking painting pottery camping music guitar family garden travel book movie running cooking sister brother school work city beach mountain river dinner lunch friend dog cat car train plane'.split(' ')
let seed = 11
const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
const pick = () => WORDS[Math.floor(random() * WORDS.length)]!
/** About 100 characters; "weekend" in every record (common), "zebra" in 1 of 500 (rare). */
function content(i: number): string {
  return `User ${i % 97} enjoys ${pick()} and ${pick()} with a ${pick()} near the ${pick()} on the weekend${i % 500 === 7 ? ' zebra' : ''} note ${i}`
}
const QUERIES = { common: 'weekend', rare: 'zebra', sixWords: 'coffee garden sister beach train dinner' }
const scopeOf = (i: number) => `u${i % SCOPES}`
const target = (scope: string): MemoryTarget => ({ store: 'agent', scope: { agent: 'bench', user: scope } })

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))] ?? 0
const median = (values: number[]) => percentile(values, 0.5)
const round3 = (value: number) => Math.round(value * 1000) / 1000
const gc = () => (globalThis as { gc?: () => void }).gc?.()
const heap = () => { gc(); return process.memoryUsage() }
function diskBytes(path: string): number {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.size
  return readdirSync(path).reduce((sum, name) => sum + diskBytes(join(path, name)), 0)
}
async function time(run: () => unknown): Promise<number> {
  const started = performance.now()
  await run()
  return performance.now() - started
}


/** The subjects of the issue-12 rows, by the name the results use. */
const SQLITE_SUBJECTS = { store: 'sqliteMemoryStore', column: 'FTS5 table (scope as column)', token: 'FTS5 table (scope as token)' } as const
type SqliteSubject = keyof typeof SQLITE_SUBJECTS

/**
 * One cold open -> first search in this fresh process (`--cold-child store|column|token --file F
 * --scope S`): every module, better-sqlite3 and its native addon included (the store loads them
 * at its first operation, the addon loads at a process's first database), is loaded before the
 * clock starts; prints the milliseconds of the open and the first search.
 */
async function coldChild(kind: SqliteSubject, file: string, scope: string): Promise<void> {
  // The native addon loads at a process's first database (either subject's): before the clock.
  const Sqlite = createRequire(import.meta.url)('better-sqlite3') as typeof import('better-sqlite3')
  new Sqlite(':memory:').close()
  const started = performance.now()
  let ms: number
  if (kind === 'store') {
    const factory = sqliteMemoryStore({ file })
    await factory.create().search(target(scope), { query: QUERIES.common })
    ms = performance.now() - started
    await factory.close()
  }
  else {
    const db = openFts5Baseline(file, kind)
    db.search(scope, QUERIES.common)
    ms = performance.now() - started
    db.close()
  }
  process.stdout.write(`\ncold-open-ms ${ms}\n`)
}

/**
 * Cold open -> first search of the SQLite store and both FTS5 tables, each in `COLD_RUNS` fresh
 * processes, interleaved (run r: every subject in turn, the order turning each run, all in scope
 * `u(7 + 101 r)`). A fresh process is what a cold open is for an app: the store's JavaScript runs
 * for the first time (the in-process figure, `coldOpenFirstSearchMs`, follows the JSONL store,
 * which ran much of the same code), and a single sample of a 10 ms event swings 2x with the
 * load. The OS page cache holds every file alike (each was just written); SQLite's page cache is
 * empty in each child. Returns every sample per subject.
 */
function coldProcessRuns(files: Record<SqliteSubject, string>): Record<SqliteSubject, number[]> {
  const runs: Record<SqliteSubject, number[]> = { store: [], column: [], token: [] }
  const kinds = Object.keys(files) as SqliteSubject[]
  for (let r = 0; r < COLD_RUNS; r++) {
    for (let k = 0; k < kinds.length; k++) {
      const kind = kinds[(r + k) % kinds.length]!
      const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--cold-child', kind, '--file', files[kind], '--scope', `u${(7 + 101 * r) % SCOPES}`], { encoding: 'utf8' })
      if (child.status !== 0) throw new Error(`cold open child (${kind}) failed: ${child.stderr}`)
      // Its own line: flags of this process (--trace-gc) print to the child's stdout too.
      runs[kind].push(Number(/^cold-open-ms (\S+)$/m.exec(child.stdout)![1]))
    }
  }
  return runs
}

/** An append one subject makes in {@link sqliteAppendRounds}; `indexTail` (the store) indexes its deferred FTS5 tail and returns the milliseconds that took. */
interface RoundAppender {
  kind: SqliteSubject
  append(n: number): Promise<unknown>
  indexTail?: () => Promise<number>
}

/**
 * The issue-12 append row: the SQLite store and both FTS5 tables in `APPEND_ROUNDS` rounds of 200
 * appends, one append per subject in turn (the order turning each round), and nothing else in
 * the rounds. A Postgres append between them (the general interleaved rounds) leaves its
 * server's work running on this 2-core machine into the next subject's append, and turns the
 * event loop, which runs the store's idle FTS5 indexing there. Per subject and round: the p50 and
 * the mean (the mean carries the WAL checkpoints, every 1,000 WAL pages, and the FTS5 segment
 * merges that land in the round: each subject pays for its own). The store's FTS5 postings of a
 * round's records are written after the round by its next search (fts-tail.ts), timed as that
 * search less a repeat of it, and added to its mean as `appendWithIndexingMeanMs`. Returns the
 * round figures and every sample per subject (for the percentiles printed).
 */
async function sqliteAppendRounds(appenders: RoundAppender[]): Promise<{ p50: Record<string, number[]>; mean: Record<string, number[]>; withIndexing: number[]; samples: Record<string, number[]> }> {
  const p50: Record<string, number[]> = {}
  const mean: Record<string, number[]> = {}
  const samples: Record<string, number[]> = {}
  const withIndexing: number[] = []
  for (const appender of appenders) await appender.indexTail?.()
  for (let r = 0, n = 0; r < APPEND_ROUNDS; r++) {
    const times: Record<string, number[]> = {}
    const order = appenders.map((_, k) => appenders[(r + k) % appenders.length]!)
    for (let i = 0; i < 200; i++, n++) for (const appender of order) (times[appender.kind] ??= []).push(await time(() => appender.append(n)))
    for (const appender of appenders) {
      const values = times[appender.kind]!
      const sum = values.reduce((total, value) => total + value, 0)
      ;(p50[appender.kind] ??= []).push(median(values))
      ;(mean[appender.kind] ??= []).push(sum / values.length)
      ;(samples[appender.kind] ??= []).push(...values)
      if (appender.indexTail) withIndexing.push((sum + await appender.indexTail()) / values.length)
    }
  }
  return { p50, mean, withIndexing, samples }
}

interface Subject {
  name: string
  /** A fresh handle on the data (a cold open); `search` then answers from it. */
  open(): Promise<{ search(scope: string, query: string): Promise<unknown>; append(scope: string, text: string): Promise<unknown>; close(): Promise<void> }>
  disk(): number
}

async function main() {
  const loadAtStart = loadavg().map(round3)
  const dir = mkdtempSync(join(tmpdir(), 'vam-bench-stores-'))
  const log = await rememberLog(RECORDS, i => target(scopeOf(i)), content)
  const results: Record<string, Record<string, number>> = {}
  const subjects: Subject[] = []

  // Workspace JSONL store on the fs driver.
  mkdirSync(join(dir, 'jsonl/memory'), { recursive: true })
  writeFileSync(join(dir, 'jsonl/memory/memory.jsonl'), log)
  subjects.push({
    name: 'workspace JSONL',
    async open() {
      const workspace = createWorkspace({ storage: createStorage({ driver: fsDriver({ base: join(dir, 'jsonl') }) }) })
      const adapter: MemoryStoreAdapter = workspaceJsonlMemoryStore({ checkpointEvery: false }).create({ store: 'agent', agent: 'bench', writable: true, workspace })
      return { search: (scope, query) => adapter.search(target(scope), { query }), append: (scope, text) => adapter.append(target(scope), { kind: 'semantic', content: text }, { audit: { via: 'api' } }), close: async () => {} }
    },
    disk: () => diskBytes(join(dir, 'jsonl')),
  })

  // sqliteMemoryStore.
  const sqliteFile = join(dir, 'store.db')
  await sqliteMemoryStore({ file: sqliteFile }).importLog(log)
  await sqliteMemoryStore({ file: sqliteFile }).close()
  subjects.push({
    name: 'sqliteMemoryStore',
    async open() {
      const factory = sqliteMemoryStore({ file: sqliteFile })
      const adapter = factory.create()
      return { search: (scope, query) => adapter.search(target(scope), { query }), append: (scope, text) => adapter.append(target(scope), { kind: 'semantic', content: text }, { audit: { via: 'api' } }), close: () => factory.close() }
    },
    disk: () => ['', '-wal', '-shm'].reduce((sum, suffix) => sum + (statSync(sqliteFile + suffix, { throwIfNoEntry: false })?.size ?? 0), 0),
  })

  // Postgres store, when DATABASE_URL names a server that answers.
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 })
  admin.on('error', () => {})
  const postgres = DATABASE_URL !== undefined && await admin.query('SELECT 1').then(() => true, () => false)
  let pgUrl = ''
  if (postgres) {
    // Each Postgres subject on its own copy: instances of one database taking turns would move each other's chain head.
    const schemaUrl = async (schema: string) => {
      await admin.query(`CREATE SCHEMA ${schema}`)
      const url = new URL(DATABASE_URL!)
      url.searchParams.set('options', `-c search_path=${schema}`)
      const loader = postgresMemoryStore({ connectionString: url.toString() })
      await loader.importLog(log)
      await loader.close()
      return url.toString()
    }
    pgUrl = await schemaUrl(`vam_bench_${process.pid}`)
    const pgAsyncUrl = await schemaUrl(`vam_bench_${process.pid}_async`)
    subjects.push({
      name: 'postgresMemoryStore',
      async open() {
        const factory = postgresMemoryStore({ connectionString: pgUrl })
        const adapter = factory.create()
        return { search: (scope, query) => adapter.search(target(scope), { query }), append: (scope, text) => adapter.append(target(scope), { kind: 'semantic', content: text }, { audit: { via: 'api' } }), close: () => factory.close() }
      },
      disk: () => 0,
    })
    subjects.push({
      name: 'postgresMemoryStore (synchronousCommit: false)',
      async open() {
        const factory = postgresMemoryStore({ connectionString: pgAsyncUrl, synchronousCommit: false })
        const adapter = factory.create()
        return { search: (scope, query) => adapter.search(target(scope), { query }), append: (scope, text) => adapter.append(target(scope), { kind: 'semantic', content: text }, { audit: { via: 'api' } }), close: () => factory.close() }
      },
      disk: () => 0,
    })
  }

  // FTS5 table baselines, both layouts.
  for (const layout of ['column', 'token'] as const) {
    const file = join(dir, `fts5-${layout}.db`)
    const loader = openFts5Baseline(file, layout)
    loader.load(Array.from({ length: RECORDS }, (_, i) => ({ scope: scopeOf(i), content: content(i) })))
    loader.close()
    subjects.push({
      name: `FTS5 table (scope as ${layout})`,
      async open() {
        const db: Fts5Baseline = openFts5Baseline(file, layout)
        return { search: async (scope, query) => db.search(scope, query), append: async (scope, text) => db.insert(scope, text), close: async () => db.close() }
      },
      disk: () => ['', '-wal', '-shm'].reduce((sum, suffix) => sum + (statSync(file + suffix, { throwIfNoEntry: false })?.size ?? 0), 0),
    })
  }

  // MiniSearch, one index per scope, built in memory (its "open" is the build).
  subjects.push({
    name: 'MiniSearch (index per scope)',
    async open() {
      const index = createMiniSearchBaseline()
      for (let i = 0; i < RECORDS; i++) index.insert(scopeOf(i), content(i))
      return { search: async (scope, query) => index.search(scope, query), append: async (scope, text) => index.insert(scope, text), close: async () => {} }
    },
    disk: () => 0,
  })

  const coldRuns = coldProcessRuns({ store: sqliteFile, column: join(dir, 'fts5-column.db'), token: join(dir, 'fts5-token.db') })
  console.error('cold open -> first search in fresh processes: measured')

  for (const subject of subjects) {
    const row: Record<string, number> = {}
    const before = heap()
    let opened!: Awaited<ReturnType<Subject['open']>>
    // Cold open -> first search: the open (MiniSearch: building its indexes) and the first search, timed together.
    row.coldOpenFirstSearchMs = round3(await time(async () => {
      opened = await subject.open()
      await opened.search(`u${7 % SCOPES}`, QUERIES.common)
    }))
    // The FTS5 column layout scans every match of the common term per scope (minutes at 100,000
    // records in 1,000 scopes, never the better layout): not measured beyond 100 scopes.
    row.firstSearchEveryScopeS = subject.name === 'FTS5 table (scope as column)' && SCOPES > 100
      ? Number.NaN
      : round3(await time(async () => { for (let s = 0; s < SCOPES; s++) await opened.search(`u${s}`, QUERIES.common) }) / 1000)
    const after = heap()
    row.heapPerRecordB = Math.round((after.heapUsed - before.heapUsed) / RECORDS)
    row.rssPerRecordB = Math.round((after.rss - before.rss) / RECORDS)
    // The first 200 appends after the open run the append path's JavaScript cold (V8 optimizes a
    // function once it has run a while; the FTS5 table's insert is one native call): their p50 is
    // kept apart, and every subject then makes the same WARM_APPENDS untimed appends before the
    // 200 timed ones of `appendP50Ms`.
    const cold: number[] = []
    for (let n = 0; n < 200; n++) cold.push(await time(() => opened.append(`u${n % SCOPES}`, content(RECORDS + n))))
    row.appendColdP50Ms = round3(median(cold))
    for (let n = 0; n < WARM_APPENDS; n++) await opened.append(`u${n % SCOPES}`, content(RECORDS + 2000 + n))
    const isolated: number[] = []
    for (let n = 0; n < 200; n++) isolated.push(await time(() => opened.append(`u${n % SCOPES}`, content(RECORDS + 2000 + WARM_APPENDS + n))))
    row.appendP50Ms = round3(median(isolated))
    const burst = await time(() => Promise.all(Array.from({ length: 100 }, (_, n) => opened.append(`u${n % SCOPES}`, content(RECORDS + 200 + n)))))
    row.appendBurstPerWriteMs = round3(burst / 100)
    row.diskBytesPerRecord = Math.round(subject.disk() / RECORDS)
    results[subject.name] = row
    ;(subject as Subject & { handle?: typeof opened }).handle = opened
    console.error(`${subject.name}: loaded and measured writes`)
  }

  // The issue-12 rows: the SQLite store and the FTS5 tables among themselves.
  const handleOf = (name: string) => (subjects.find(subject => subject.name === name) as Subject & { handle: { search(scope: string, query: string): Promise<unknown>; append(scope: string, text: string): Promise<unknown> } }).handle
  const roundAppenders: RoundAppender[] = (Object.keys(SQLITE_SUBJECTS) as SqliteSubject[]).map((kind) => {
    const handle = handleOf(SQLITE_SUBJECTS[kind])
    const appender: RoundAppender = { kind, append: n => handle.append(`u${n % SCOPES}`, content(RECORDS + 5000 + n)) }
    if (kind === 'store') appender.indexTail = async () => (await time(() => handle.search('u7', QUERIES.common))) - await time(() => handle.search('u7', QUERIES.common))
    return appender
  })
  const sqliteRounds = await sqliteAppendRounds(roundAppenders)
  const spread: Record<string, Record<string, number>> = {}
  for (const kind of Object.keys(SQLITE_SUBJECTS) as SqliteSubject[]) {
    const row = results[SQLITE_SUBJECTS[kind]]!
    row.appendRoundsP50MsMin = round3(Math.min(...sqliteRounds.p50[kind]!))
    row.appendRoundsP50MsMedian = round3(median(sqliteRounds.p50[kind]!))
    row.appendRoundsMeanMsMedian = round3(median(sqliteRounds.mean[kind]!))
    if (kind === 'store') row.appendWithIndexingMeanMsMedian = round3(median(sqliteRounds.withIndexing))
    row.coldProcessFirstSearchMsMin = round3(Math.min(...coldRuns[kind]))
    row.coldProcessFirstSearchMsMedian = round3(median(coldRuns[kind]))
    const values = sqliteRounds.samples[kind]!
    spread[SQLITE_SUBJECTS[kind]] = Object.fromEntries([0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1].map(p => [p === 1 ? 'max' : `p${p * 100}`, round3(percentile(values, p))]))
  }

  // Append latency: interleaved rounds, one append per subject in turn (the same load on each), with
  // the floors of a Postgres write beside them: a `SELECT 1` round trip and a bare one-row INSERT,
  // durable and with synchronous_commit off.
  const floors: Array<{ name: string; append(): Promise<unknown> }> = []
  if (postgres) {
    await admin.query(`CREATE TABLE vam_bench_${process.pid}.floor (id bigserial PRIMARY KEY, line text NOT NULL)`)
    const line = content(0)
    floors.push(
      { name: 'Postgres SELECT 1 round trip', append: () => admin.query('SELECT 1') },
      { name: 'Postgres bare INSERT (durable)', append: () => admin.query(`INSERT INTO vam_bench_${process.pid}.floor (line) VALUES ($1)`, [line]) },
      { name: 'Postgres bare INSERT (synchronous_commit off)', append: () => admin.query(`BEGIN; SET LOCAL synchronous_commit = off; INSERT INTO vam_bench_${process.pid}.floor (line) VALUES (${pg.escapeLiteral(line)}); COMMIT`) },
    )
  }
  const appenders = [
    ...subjects.map(subject => ({ name: subject.name, append: (n: number) => (subject as Subject & { handle: { append(scope: string, text: string): Promise<unknown> } }).handle.append(`u${n % SCOPES}`, content(RECORDS + 1000 + n)) })),
    ...floors.map(floor => ({ name: floor.name, append: () => floor.append() })),
  ]
  const appendRounds: Record<string, number[]> = {}
  for (let r = 0, n = 0; r < ROUNDS; r++) {
    const times: Record<string, number[]> = {}
    for (let i = 0; i < 100; i++, n++) for (const appender of appenders) (times[appender.name] ??= []).push(await time(() => appender.append(n)))
    for (const [name, values] of Object.entries(times)) (appendRounds[name] ??= []).push(median(values))
  }
  for (const [name, values] of Object.entries(appendRounds)) {
    results[name] ??= {}
    results[name]!.appendInterleavedP50MsMin = round3(Math.min(...values))
    results[name]!.appendInterleavedP50MsMedian = round3(median(values))
  }

  // Search latency: interleaved rounds over every subject.
  const rounds: Record<string, Record<string, number[]>> = {}
  for (let r = 0; r < ROUNDS; r++) {
    for (const subject of subjects) {
      const opened = (subject as Subject & { handle: { search(scope: string, query: string): Promise<unknown> } }).handle
      for (const [label, query] of Object.entries(QUERIES)) {
        const times: number[] = []
        for (let n = 0; n < 50; n++) times.push(await time(() => opened.search(`u${(n * 37) % SCOPES}`, query)))
        const bucket = (rounds[subject.name] ??= {})
        ;(bucket[`${label}P50`] ??= []).push(percentile(times, 0.5))
        ;(bucket[`${label}P95`] ??= []).push(percentile(times, 0.95))
      }
    }
  }
  for (const [name, buckets] of Object.entries(rounds)) {
    for (const [key, values] of Object.entries(buckets)) {
      results[name]![`${key}MsMin`] = round3(Math.min(...values))
      results[name]![`${key}MsMedian`] = round3(median(values))
    }
  }
  for (const subject of subjects) await (subject as Subject & { handle: { close(): Promise<void> } }).handle.close()

  const fts5 = (key: string) => Math.min(...[results['FTS5 table (scope as column)']![key]!, results['FTS5 table (scope as token)']![key]!].filter(Number.isFinite))
  const ratios: Record<string, Record<string, number>> = {}
  for (const name of Object.keys(results)) {
    ratios[name] = {}
    if (!subjects.some(subject => subject.name === name)) continue
    for (const key of ['appendRoundsP50MsMedian', 'appendRoundsMeanMsMedian', 'appendP50Ms', 'appendColdP50Ms', 'appendInterleavedP50MsMedian', 'coldProcessFirstSearchMsMedian', 'coldOpenFirstSearchMs', 'firstSearchEveryScopeS', 'commonP50MsMedian', 'rareP50MsMedian', 'sixWordsP50MsMedian']) {
      ratios[name]![`${key} / FTS5 best`] = round3(results[name]![key]! / Math.max(fts5(key), 1e-6))
    }
  }
  // The store's append with its deferred FTS5 indexing against the FTS5 table's insert, both means (each with its own checkpoints and merges).
  ratios['sqliteMemoryStore']!['appendWithIndexingMeanMsMedian / FTS5 best appendRoundsMeanMsMedian'] = round3(results['sqliteMemoryStore']!.appendWithIndexingMeanMsMedian! / fts5('appendRoundsMeanMsMedian'))
  if (postgres) {
    // The Postgres store's append against the bare INSERT of the same durability, in the same rounds.
    const floor = (name: string) => results[name]!.appendInterleavedP50MsMedian!
    ratios['postgresMemoryStore']!['appendInterleavedP50MsMedian / bare INSERT (durable)'] = round3(floor('postgresMemoryStore') / floor('Postgres bare INSERT (durable)'))
    ratios['postgresMemoryStore (synchronousCommit: false)']!['appendInterleavedP50MsMedian / bare INSERT (synchronous_commit off)'] = round3(floor('postgresMemoryStore (synchronousCommit: false)') / floor('Postgres bare INSERT (synchronous_commit off)'))
  }
  console.table(results)
  console.table(ratios)
  console.log(`SQLite rounds (${APPEND_ROUNDS} x 200 appends among the SQLite subjects), every append's ms:`)
  console.table(spread)
  const output = { records: RECORDS, scopes: SCOPES, rounds: ROUNDS, appendRounds: APPEND_ROUNDS, coldRuns: COLD_RUNS, appendSpread: spread, machine: `${process.platform} ${process.arch}, node ${process.version}`, loadAverage: { start: loadAtStart, end: loadavg().map(round3) }, results, ratios }
  console.log(`load average at start ${loadAtStart.join(' ')}, at end ${loadavg().map(round3).join(' ')}`)
  mkdirSync(dirname(OUT), { recursive: true })
  writeFileSync(OUT, `${JSON.stringify(output, null, 2)}\n`)
  if (postgres) await admin.query(`DROP SCHEMA vam_bench_${process.pid} CASCADE; DROP SCHEMA vam_bench_${process.pid}_async CASCADE`)
  await admin.end()
  rmSync(dir, { recursive: true, force: true })
}

if (process.argv.includes('--cold-child')) await coldChild(arg('cold-child', '') as SqliteSubject, arg('file', ''), arg('scope', 'u7'))
else await main()
