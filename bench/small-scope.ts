/**
 * The floor of a search in a small scope (issue 13: 1,000 scopes of 100 records): the workspace
 * JSONL store next to MiniSearch (one index per scope) and an FTS5 table (scope as a token), and
 * the pieces of the store's search alone: the workspace's `statNow`, the log's `peek` (stat,
 * loaded check, LRU touch), and the partition index's `search` (the engine, no log, no copies).
 *
 * The side-by-side workload (bench/workload.ts) is built once into `BENCH_BASE` (default a folder
 * in the temp directory, reused) through the store, every scope searched once, a checkpoint
 * written; each run copies it. Two stores open two copies (the engine piece runs on the second,
 * so neither warms the other's query caches); both search every scope once and take the 600
 * appends the side-by-side makes. Then `BENCH_ROUNDS` rounds (default 7) of `BENCH_SEARCHES`
 * searches (default 200, as the side-by-side's 1,000-scope rounds) per subject and shape over
 * scopes `n * 37 + round`, subjects interleaved shape by shape, each block after a young-generation
 * GC (as the side-by-side's: a block pays for its own garbage only).
 *
 * Per subject and shape: wall p50 / p95 of each round (each search awaited, like the
 * side-by-side), min and median of the rounds; CPU µs per search (a round's CPU time over its
 * searches, min and median of the rounds); the searches during which the process was switched out
 * by the scheduler (its involuntary context switches rose: on a loaded machine a 100 µs search
 * that waits a time slice takes milliseconds, whatever the engine) and the p95 of the others; the
 * searches that overlap a GC, and each GC of 1 ms or more
 * with the block it fell in. The engine piece reads the same texts as the store did just before it
 * (the second store's records are copies), so the process-wide word table of the proximity re-rank
 * (term-numbers.ts) already holds their words: it is a floor, not a cold figure. Run with
 * `node --expose-gc --import tsx bench/small-scope.ts`; `BENCH_SHAPES=rare,sixWords` limits the shapes, `BENCH_SUBJECTS=JSONL,MiniSearch` the subjects (by name prefix).
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { PerformanceObserver } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { partitionIndex, partitionKey } from '../src/memory/records.ts'
import { sharedScope } from '../src/memory/scope.ts'
import { workspaceJsonlMemoryStore } from '../src/memory/stores/workspace-jsonl.ts'
import { checkQuery, type MemorySearchIndex } from '../src/search/search.ts'
import { queryTerms } from '../src/search/query-terms.ts'
import type { IndexState } from '../src/search/state.ts'
import { substringSearch } from '../src/search/substring-index.ts'
import { createWorkspace } from '../src/workspace/workspace.ts'
import { openFts5Baseline } from './baselines/fts5.ts'
import { createMiniSearchBaseline } from './baselines/minisearch.ts'
import { ensureFilledLog, useAsTheBenchDoes } from './filled-log.ts'
import { emptyNursery } from './side-by-side.ts'
import { percentile, QUERIES, round3, scopeUser, workloadContents } from './workload.ts'

const SIZE = 100_000
const SCOPES = 1000
const SEARCHES_PER_ROUND = Number(process.env.BENCH_SEARCHES ?? 200)
const rounds = Number(process.env.BENCH_ROUNDS ?? 7)
const shapes = Object.entries(QUERIES).filter(([shape]) => !process.env.BENCH_SHAPES || process.env.BENCH_SHAPES.split(',').includes(shape))
const base = process.env.BENCH_BASE ?? join(tmpdir(), `vam-small-scope-${SIZE}-${SCOPES}`)
const contents = workloadContents(SIZE)
const target = (user: string) => ({ store: 'agent', scope: { agent: 'bench', user } })

await ensureFilledLog(base, SIZE, SCOPES, contents)

/** A store on a fresh copy of the base, every scope searched once, the side-by-side's appends taken. */
async function openStore() {
  const dir = mkdtempSync(join(tmpdir(), 'vam-small-scope-run-'))
  cpSync(join(base, 'memory'), join(dir, 'memory'), { recursive: true })
  const workspace = createWorkspace({ dir })
  const store = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace, writable: true })
  await useAsTheBenchDoes(store, SIZE, SCOPES, contents)
  return { dir, workspace, store }
}

const a = await openStore()
const b = await openStore()
// The engine piece: each scope's index of the second store, taken once (searched afterwards without the log).
const indexes = new Map<string, MemorySearchIndex>()
await b.store.log.view((state) => {
  for (let s = 0; s < SCOPES; s++) indexes.set(scopeUser(s, SCOPES), partitionIndex(state, 'agent', sharedScope({ agent: 'bench', user: scopeUser(s, SCOPES) })))
}, { partitions: [] })
const mini = createMiniSearchBaseline()
contents.forEach((content, n) => mini.insert(scopeUser(n, SCOPES), content))
const ftsFile = join(a.dir, 'fts5-token.db')
const loader = openFts5Baseline(ftsFile, 'token')
loader.load(contents.map((content, n) => ({ scope: scopeUser(n, SCOPES), content })))
loader.close()
const fts = openFts5Baseline(ftsFile, 'token')
const logKey = a.store.log.key
const keyOf = new Map(Array.from({ length: SCOPES }, (_, s) => [scopeUser(s, SCOPES), [partitionKey('agent', sharedScope({ agent: 'bench', user: scopeUser(s, SCOPES) }))]] as const))

const stateOf = (user: string) => (indexes.get(user) as unknown as { state: IndexState<never> }).state
interface Subject { name: string; search(user: string, query: string): unknown }
const subjects: Subject[] = ([
  { name: 'JSONL store', search: (user, query) => a.store.search(target(user), { query }) },
  { name: 'FTS5 (token)', search: (user, query) => fts.search(user, query) },
  { name: 'MiniSearch', search: (user, query) => mini.search(user, query) },
  { name: 'piece: statNow', search: () => a.workspace.statNow!(logKey) },
  { name: 'piece: log.peek', search: user => a.store.log.peek!(() => 0, { partitions: keyOf.get(user)! }) },
  { name: 'piece: engine search', search: (user, query) => indexes.get(user)!.search({ query }) },
  // The engine's parts on the same (second) store's states, after its search of the same scope: warm.
  { name: 'part: checkQuery', search: (_user, query) => checkQuery({ query }) },
  { name: 'part: substring rule', search: (user, query) => substringSearch(stateOf(user), checkQuery({ query })) },
  { name: 'part: queryTerms (no cache)', search: (user, query) => queryTerms(stateOf(user).vocabulary, query, 0.7) },
  { name: 'nothing (harness)', search: () => undefined },
] as Subject[]).filter(subject => !process.env.BENCH_SUBJECTS || process.env.BENCH_SUBJECTS.split(',').some(name => subject.name.startsWith(name)))

const gcs: Array<{ start: number; end: number; kind: number }> = []
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcs.push({ start: entry.startTime, end: entry.startTime + entry.duration, kind: ((entry as { detail?: { kind?: number } }).detail)?.kind ?? 0 })
})
observer.observe({ entryTypes: ['gc'] })
/** One search: wall ms, its start and end, and whether the process was switched out by the scheduler meanwhile. */
interface Sample { wall: number; start: number; end: number; switched: boolean }
const blocks: Array<{ name: string; start: number; end: number }> = []
/** The GCs before each block (not the searches' own). */
const forced: Array<{ start: number; end: number }> = []
const figures: Record<string, Record<string, { p50: number[]; p95: number[]; p95Running: number[]; cpu: number[]; samples: Sample[] }>> = {}
{
  const forcedStart = performance.now()
  global.gc?.()
  forced.push({ start: forcedStart, end: performance.now() })
}
for (let round = 0; round < rounds; round++) {
  for (const subject of subjects) {
    for (const [shape, query] of shapes) {
      const list: Sample[] = []
      const forcedStart = performance.now()
      emptyNursery()
      forced.push({ start: forcedStart, end: performance.now() })
      const cpuStart = process.cpuUsage()
      for (let n = 0; n < SEARCHES_PER_ROUND; n++) {
        const user = scopeUser(n * 37 + round, SCOPES)
        const switches = process.resourceUsage().involuntaryContextSwitches
        const start = performance.now()
        await subject.search(user, query)
        const end = performance.now()
        list.push({ wall: end - start, start, end, switched: process.resourceUsage().involuntaryContextSwitches !== switches })
      }
      const cpu = process.cpuUsage(cpuStart)
      blocks.push({ name: `${subject.name} ${shape} round ${round}`, start: list[0]!.start, end: list.at(-1)!.end })
      const entry = ((figures[subject.name] ??= {})[shape] ??= { p50: [], p95: [], p95Running: [], cpu: [], samples: [] })
      entry.p50.push(percentile(list.map(s => s.wall), 0.5))
      entry.p95.push(percentile(list.map(s => s.wall), 0.95))
      entry.p95Running.push(percentile(list.filter(s => !s.switched).map(s => s.wall), 0.95))
      entry.cpu.push((cpu.user + cpu.system) / SEARCHES_PER_ROUND)
      entry.samples.push(...list)
    }
  }
}
await sleep(20)
observer.disconnect()
const ownGcs = gcs.filter(gc => !forced.some(window => gc.start >= window.start && gc.start <= window.end))
const overlapsGc = (sample: Sample) => ownGcs.some(gc => gc.start < sample.end && gc.end > sample.start)
const us = (ms: number) => Math.round(ms * 10_000) / 10
const table: Array<Record<string, string | number>> = []
for (const [name, byShape] of Object.entries(figures)) {
  for (const [shape, entry] of Object.entries(byShape)) {
    table.push({
      subject: name,
      shape,
      'p50 µs min/med': `${us(Math.min(...entry.p50))} / ${us(percentile(entry.p50, 0.5))}`,
      'p95 µs min/med': `${us(Math.min(...entry.p95))} / ${us(percentile(entry.p95, 0.5))}`,
      'p95 µs not switched out min/med': `${us(Math.min(...entry.p95Running))} / ${us(percentile(entry.p95Running, 0.5))}`,
      'switched out': entry.samples.filter(sample => sample.switched).length,
      'cpu µs/search min/med': `${round3(Math.min(...entry.cpu))} / ${round3(percentile(entry.cpu, 0.5))}`,
      'searches with gc': entry.samples.filter(overlapsGc).length,
    })
  }
}
console.table(table)
console.log(`gc during the rounds (besides the young-generation GC before each block): ${ownGcs.length}, ${round3(ownGcs.reduce((sum, gc) => sum + gc.end - gc.start, 0))} ms`)
const GC_KINDS: Record<number, string> = { 1: 'young', 2: 'major', 4: 'major', 8: 'incremental marking', 16: 'weak callbacks' }
for (const gc of ownGcs.filter(gc => gc.end - gc.start >= 1)) console.log(`  ${GC_KINDS[gc.kind] ?? `kind ${gc.kind}`} GC of ${round3(gc.end - gc.start)} ms in ${blocks.find(block => block.start <= gc.end && block.end >= gc.start)?.name ?? 'no block'}`)
console.log(`load ${loadavg().map(value => value.toFixed(2)).join(' ')}, ${rounds} rounds`)
fts.close()
rmSync(a.dir, { recursive: true, force: true })
rmSync(b.dir, { recursive: true, force: true })
