/**
 * `npm run bench`: the log engine against a naive baseline, in one run, on the same data (issue 3,
 * "Benchmark"). Baseline = the reference design: every search and read re-reads and re-parses the
 * whole JSONL file; every append reads the whole file and rewrites it (read-modify-write).
 * Sizes 1k, 10k, 100k records (BENCH_SIZES=1000,10000 to shorten), shapes: 1,000 scopes of N/1000
 * records, and one scope holding all. Prints a table and writes bench/results.json.
 * Cold open = a new workspace object's first read (replay and verification of every line), and
 * `checkpointOpenMs` the same from a checkpoint covering the whole log (`checkpointWriteMs`: the
 * cost of writing it, paid every 10,000 appended lines, outside the timed appends). That
 * checkpoint is the one a store in use writes: one search per scope runs before it, so every
 * partition's search index is built and stored in it, and `checkpointOpenWithIndexMs` (open +
 * first search) restores the index instead of building it. `firstSearchMs` = the first search
 * after a full replay, which builds that partition's search index; memory is measured after
 * every partition's index is built.
 *
 * Right after the fill, `measureSideBySide` (bench/side-by-side.ts) measures the JSONL store next
 * to an FTS5 table and MiniSearch on the same records (the issue-13 rows), and the run ends with a
 * summary of the issue-13 targets at the largest size and with bench/stores.ts at that size (the
 * database stores; `BENCH_STORES=0` skips it). Records: bench/workload.ts (~85 characters).
 */
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { loadavg as loadAverage, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CHECKPOINT_GROWTH, DEFAULT_CHECKPOINT_EVERY } from '../src/memory/event-log.ts'
import { workspaceJsonlMemoryStore } from '../src/memory/stores/workspace-jsonl.ts'
import { createWorkspace } from '../src/workspace/workspace.ts'
import { measureSideBySide, targetChecks, type SubjectFigures } from './side-by-side.ts'
import { percentile, QUERIES, scopeOf, since, workloadContents } from './workload.ts'

const SIZES = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number)
const audit = { via: 'api' }
const pct = percentile
const ms = since

/** The naive store: whole-file re-read per operation, read-modify-write append. */
function naiveStore(file: string) {
  const load = () => {
    let text = ''
    try { text = readFileSync(file, 'utf8') } catch {}
    return text.split('\n').filter(Boolean).map(line => JSON.parse(line) as { id: string; scope: Record<string, string>; content: string })
  }
  return {
    append(record: { id: string; scope: Record<string, string>; content: string }) {
      let text = ''
      try { text = readFileSync(file, 'utf8') } catch {}
      writeFileSync(file, `${text}${JSON.stringify(record)}\n`)
    },
    search(scope: Record<string, string>, query: string) {
      const needle = query.toLowerCase()
      return load().filter(record => record.scope.user === scope.user && record.content.toLowerCase().includes(needle)).slice(0, 10)
    },
    read(id: string) {
      return load().find(record => record.id === id)
    },
  }
}

interface Row { size: number; shape: string; [metric: string]: number | string }
const rows: Row[] = []
const sideBySide: Record<string, Record<string, SubjectFigures>> = {}

for (const size of SIZES) {
  for (const shape of ['1000 scopes', 'one scope'] as const) {
    const scopes = shape === 'one scope' ? 1 : 1000
    const dir = mkdtempSync(join(tmpdir(), 'vam-bench-'))
    const row: Row = { size, shape }
    const contents = workloadContents(size)
    const content = (n: number) => contents[n % size]!
    // Fill the log through the engine in one process (not timed), then measure.
    let fill: ReturnType<ReturnType<typeof workspaceJsonlMemoryStore>['create']> | undefined = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
    const ids: string[] = []
    for (let n = 0; n < size; n++) ids.push((await fill!.append({ store: 'agent', scope: scopeOf(n, scopes) }, { kind: 'semantic', content: content(n) }, { audit })).id)
    const file = join(dir, 'memory/memory.jsonl')
    row.bytesPerRecord = Math.round(statSync(file).size / size)
    const contentBytes = contents.reduce((sum, text) => sum + Buffer.byteLength(text), 0)

    // A checkpoint of the whole state (the fill wrote one every 10,000 lines; this one covers all),
    // as a store in use writes it: every partition searched once, so its index is in the checkpoint.
    for (let s = 0; s < scopes; s++) await fill!.search({ store: 'agent', scope: scopeOf(s, scopes) }, { query: QUERIES.common })
    let start = performance.now()
    await fill.log.checkpoint()
    row.checkpointWriteMs = ms(start)
    // The filling store is done: its state must not weigh on the measurements below (heap, GC),
    // once the work it scheduled (a threshold checkpoint) has run.
    fill = undefined
    await new Promise(resolve => setTimeout(resolve, 50))
    global.gc?.()
    row.checkpointBytesPerRecord = Math.round(statSync(`${file}.checkpoint`).size / size)
    // The JSONL store next to its baselines, on a copy of the log as filled: its appends must not
    // leave lines after the checkpoint that the rows below would open.
    const sideDir = mkdtempSync(join(tmpdir(), 'vam-bench-side-'))
    cpSync(join(dir, 'memory'), join(sideDir, 'memory'), { recursive: true })
    sideBySide[`${size} ${shape}`] = await measureSideBySide(sideDir, size, scopes, contents)
    rmSync(sideDir, { recursive: true, force: true })
    // What checkpoints add per appended line at this size under the default schedule (one every
    // max(10,000, size / 4) lines, CHECKPOINT_GROWTH in src/log/types.ts): µs.
    row.checkpointUsPerAppend = Number(((row.checkpointWriteMs as number) * 1000 / Math.max(DEFAULT_CHECKPOINT_EVERY, Math.floor(size * CHECKPOINT_GROWTH))).toFixed(1))

    // Cold open from the checkpoint: a new workspace object loads it, checks the covered line, replays nothing more.
    {
      global.gc?.()
      const heapBefore = process.memoryUsage().heapUsed
      start = performance.now()
      const fromCheckpoint = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
      await fromCheckpoint.read({ store: 'agent', scope: scopeOf(0, scopes) }, ids[0]!)
      row.checkpointOpenMs = ms(start)
      start = performance.now()
      await fromCheckpoint.search({ store: 'agent', scope: scopeOf(0, scopes) }, { query: QUERIES.common })
      row.checkpointOpenWithIndexMs = (row.checkpointOpenMs as number) + ms(start)
      for (let s = 1; s < scopes; s++) await fromCheckpoint.search({ store: 'agent', scope: scopeOf(s, scopes) }, { query: QUERIES.common })
      global.gc?.()
      row.checkpointHeapBytesPerRecordBeyondContent = Math.round((process.memoryUsage().heapUsed - heapBefore - contentBytes) / size)
    }

    // Cold open without a checkpoint (the baseline of the two above): a new workspace object replays the whole log and builds the indexes.
    global.gc?.()
    const rssBefore = process.memoryUsage().rss
    const heapBefore = process.memoryUsage().heapUsed
    start = performance.now()
    const engine = workspaceJsonlMemoryStore({ checkpointEvery: false }).create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
    await engine.read({ store: 'agent', scope: scopeOf(0, scopes) }, ids[0]!)
    row.coldOpenMs = ms(start)
    // Indexes are built per partition on its first search: time that first search apart, then
    // build every partition's index before measuring memory, so the heap figure includes them all.
    start = performance.now()
    await engine.search({ store: 'agent', scope: scopeOf(0, scopes) }, { query: QUERIES.common })
    row.firstSearchMs = ms(start)
    row.coldOpenWithIndexMs = (row.coldOpenMs as number) + (row.firstSearchMs as number)
    for (let s = 1; s < scopes; s++) await engine.search({ store: 'agent', scope: scopeOf(s, scopes) }, { query: QUERIES.common })
    global.gc?.()
    row.peakRssMB = Math.round(process.memoryUsage().rss / 1e6)
    row.heapBytesPerRecordBeyondContent = Math.round((process.memoryUsage().heapUsed - heapBefore - contentBytes) / size)
    void rssBefore

    // Search (rare and common terms), read by id: engine.
    const queries = 200
    const searchTimes = (term: (i: number) => string) => (async () => {
      const times: number[] = []
      for (let i = 0; i < queries; i++) {
        const target = { store: 'agent', scope: scopeOf(i * 13, scopes) }
        start = performance.now()
        await engine.search(target, { query: term(i) })
        times.push(ms(start))
      }
      return times
    })()
    const common = await searchTimes(() => QUERIES.common)
    const rare = await searchTimes(() => QUERIES.rare)
    row.searchCommonP50 = pct(common, 0.5)
    row.searchCommonP95 = pct(common, 0.95)
    row.searchRareP50 = pct(rare, 0.5)
    row.searchRareP95 = pct(rare, 0.95)
    const reads: number[] = []
    for (let i = 0; i < queries; i++) {
      const n = (i * 7919) % size
      start = performance.now()
      await engine.read({ store: 'agent', scope: scopeOf(n, scopes) }, ids[n]!)
      reads.push(ms(start))
    }
    row.readP50 = pct(reads, 0.5)

    // Appends: engine (no fsync), engine with fsync, bare appendFileSync of the same line.
    // The first appends after the open are timed apart (`appendColdP50`: code not yet compiled
    // by the JIT, each partition's first write); p50/p95 and throughput are the steady state after them.
    const appends = Math.min(2000, size)
    const appendTimes: number[] = []
    let lineBytes = 0
    global.gc?.()
    const warmup = Math.min(1000, size)
    const coldTimes: number[] = []
    for (let i = 0; i < warmup; i++) {
      const t = performance.now()
      await engine.append({ store: 'agent', scope: scopeOf(size + i, scopes) }, { kind: 'semantic', content: content(size + i) }, { audit })
      coldTimes.push(ms(t))
    }
    row.appendColdP50 = pct(coldTimes, 0.5)
    // Engine appends and bare appendFileSync calls of the same line alternate in blocks of 100, so
    // both see the same state of the machine (page cache, CPU frequency, the heap of this process).
    const lastLine = readFileSync(file, 'utf8').trimEnd().split('\n').at(-1)!
    lineBytes = Buffer.byteLength(lastLine)
    const bare: number[] = []
    const logWrites: number[] = []
    const bareFile = join(dir, 'bare.jsonl')
    for (let block = 0; block < appends; block += 100) {
      for (let i = block; i < Math.min(block + 100, appends); i++) {
        const t = performance.now()
        await engine.append({ store: 'agent', scope: scopeOf(i, scopes) }, { kind: 'semantic', content: content(i) }, { audit })
        appendTimes.push(ms(t))
      }
      // The log engine alone: one `remember` event written (canonical line, two digests, the
      // conditional append, the fold), without the store's validation, id and returned copy.
      for (let i = block; i < Math.min(block + 100, appends); i++) {
        const at = new Date().toISOString()
        const event = { type: 'remember' as const, recordId: `mem_${(size * 4 + i).toString(16).padStart(32, '0')}`, store: 'agent', scope: scopeOf(i, scopes), version: 1, at, audit, kind: 'semantic', content: content(i), tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, createdAt: at }
        const t = performance.now()
        await engine.log.write(() => [event])
        logWrites.push(ms(t))
      }
      for (let i = block; i < Math.min(block + 100, appends); i++) {
        const t = performance.now()
        appendFileSync(bareFile, `${lastLine}\n`)
        bare.push(ms(t))
      }
    }
    row.appendPerSec = Math.round(appends / (appendTimes.reduce((sum, time) => sum + time, 0) / 1000))
    row.appendP50 = pct(appendTimes, 0.5)
    row.appendP95 = pct(appendTimes, 0.95)
    row.bareAppendP50 = pct(bare, 0.5)
    row.logWriteP50 = pct(logWrites, 0.5)
    const durable = workspaceJsonlMemoryStore({ path: 'memory/durable.jsonl', fsync: true, checkpointEvery: false }).create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
    const fsyncTimes: number[] = []
    for (let i = 0; i < 200; i++) {
      const t = performance.now()
      await durable.append({ store: 'agent', scope: scopeOf(i, scopes) }, { kind: 'semantic', content: content(i) }, { audit })
      fsyncTimes.push(ms(t))
    }
    row.fsyncAppendP50 = pct(fsyncTimes, 0.5)
    void lineBytes

    // Baseline on the same data: a JSONL file of the same records, naive operations.
    const naiveFile = join(dir, 'naive.jsonl')
    writeFileSync(naiveFile, ids.map((id, n) => JSON.stringify({ id, scope: scopeOf(n, scopes), content: content(n) })).join('\n') + '\n')
    const naive = naiveStore(naiveFile)
    const naiveRuns = size >= 100000 ? 5 : size >= 10000 ? 20 : 50
    const naiveSearch: number[] = []
    for (let i = 0; i < naiveRuns; i++) {
      start = performance.now()
      naive.search(scopeOf(i * 13, scopes), QUERIES.common)
      naiveSearch.push(ms(start))
    }
    row.baselineSearchP50 = pct(naiveSearch, 0.5)
    const naiveRead: number[] = []
    for (let i = 0; i < naiveRuns; i++) {
      start = performance.now()
      naive.read(ids[(i * 7919) % size]!)
      naiveRead.push(ms(start))
    }
    row.baselineReadP50 = pct(naiveRead, 0.5)
    const naiveAppend: number[] = []
    for (let i = 0; i < naiveRuns; i++) {
      start = performance.now()
      naive.append({ id: `x${i}`, scope: scopeOf(i, scopes), content: content(i) })
      naiveAppend.push(ms(start))
    }
    row.baselineAppendP50 = pct(naiveAppend, 0.5)
    row.searchSpeedup = Math.round(row.baselineSearchP50 / (row.searchCommonP50 as number))
    row.readSpeedup = Math.round(row.baselineReadP50 / (row.readP50 as number))
    row.appendSpeedup = Math.round(row.baselineAppendP50 / (row.appendP50 as number))
    row.appendVsBare = Number((row.appendP50 / (row.bareAppendP50 as number)).toFixed(1))
    row.logWriteVsBare = Number(((row.logWriteP50 as number) / (row.bareAppendP50 as number)).toFixed(1))
    rows.push(row)
    rmSync(dir, { recursive: true, force: true })
    process.stderr.write(`done: ${size} records, ${shape}\n`)
  }
}

const columns = Object.keys(rows[0] ?? {})
const format = (value: number | string) => (typeof value === 'number' ? (Number.isInteger(value) ? String(value) : value.toFixed(3)) : value)
const widths = columns.map(column => Math.max(column.length, ...rows.map(row => format(row[column]!).length)))
console.log(columns.map((column, i) => column.padEnd(widths[i]!)).join('  '))
for (const row of rows) console.log(columns.map((column, i) => format(row[column]!).padEnd(widths[i]!)).join('  '))
console.log('\ntimes in ms; *Speedup = baseline p50 / engine p50 (search: common term); appendVsBare = store append p50 (validation, id, returned copy included) / bare appendFileSync p50 of the same line; logWriteVsBare = the log engine writing one event / the same bare append')

// The issue-13 rows: per size and shape, a metric a line, each subject a column, and the ratios
// JSONL / FTS5 (the better of its two layouts per metric) and JSONL / MiniSearch.
for (const [label, figures] of Object.entries(sideBySide)) {
  console.log(`\n${label}: JSONL next to its baselines (ms; bytes; search: min and median of the interleaved rounds' p50 / p95)`)
  const table: Record<string, Record<string, number>> = {}
  for (const metric of Object.keys(figures.JSONL!)) {
    const line: Record<string, number> = {}
    for (const [subject, values] of Object.entries(figures)) line[subject] = values[metric]!
    // No ratio against a baseline figure of 0 or less (MiniSearch keeps nothing on disk; a heap that shrank).
    const ratio = (base: number) => (base > 0 ? Number((figures.JSONL![metric]! / base).toFixed(2)) : Number.NaN)
    line['JSONL / FTS5'] = ratio(figures['FTS5 (better layout)']![metric]!)
    line['JSONL / MiniSearch'] = ratio(figures.MiniSearch![metric]!)
    table[metric] = line
  }
  console.table(table)
}
const largest = Math.max(...SIZES)
const targets = targetChecks(sideBySide[`${largest} 1000 scopes`], sideBySide[`${largest} one scope`])
console.log(`\nissue-13 targets at ${largest} records (ratios JSONL / baseline in this run; load: ${loadAverage().map(load => load.toFixed(2)).join(' ')})`)
for (const check of targets) console.log(`  ${check.met ? 'met    ' : 'NOT met'}  ${check.target}: ${check.measured} (bound ${check.bound})`)
writeFileSync(new URL('./results.json', import.meta.url), `${JSON.stringify({ node: process.version, date: new Date().toISOString(), load: loadAverage(), rows, sideBySide, targets }, null, 2)}\n`)

// The store comparison (bench/stores.ts) at the largest size, its output kept as it prints it.
if (process.env.BENCH_STORES !== '0') {
  const stores = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(new URL('./stores.ts', import.meta.url)), '--records', String(largest)], { stdio: 'inherit' })
  if (stores.status !== 0) process.exitCode = stores.status ?? 1
}
