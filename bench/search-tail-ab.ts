/**
 * The tail of search CPU time, two builds of the engine side by side in one process (issue 13's
 * one-scope six-word p95). A (the `src/memory/search-index.ts` of another checkout, path in `A`, required)
 * and B (this tree's, or `B`) each index the records of `npm run bench` (bench/workload.ts)
 * in two shapes: one scope of BENCH_RECORDS records (default 100,000), and 1,000 scopes of 100
 * (one index per scope, searched at scopes `n * 37 + round`, as the side-by-side does).
 *
 * Per shape and query (common, rare, six words, and a phrase every record holds; `NAMES` picks
 * some, comma-separated): ROUNDS rounds (default 5) of BENCH_QUERIES
 * searches (default 400), A and B interleaved search by search (the order alternating), each
 * timed by this process's CPU time; per round the p50, p95 and p99, then their min and median
 * over the rounds. Then, per subject alone: bytes allocated per search (the median growth of the
 * heap over one search, searches with a scavenge left out), scavenges per 1,000 searches
 * (PerformanceObserver 'gc' entries) and whether the answers (ids and scores) are identical.
 * Run with `A=../main-worktree/src/memory/search-index.ts node --expose-gc --import tsx bench/search-tail-ab.ts`;
 * prints one JSON line.
 */
import { loadavg } from 'node:os'
import { PerformanceObserver, constants } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import type { MemoryRecord } from '../src/memory/types.ts'
import { record } from './search-corpus.ts'
import { QUERIES, workloadContents } from './workload.ts'

interface Index { update(record: MemoryRecord): void; search(query: { query: string }): Array<{ record: MemoryRecord; score: number }> }
if (process.env.A === undefined) throw new Error('set A to the src/memory/search-index.ts of the build to compare against (a git worktree of main, say)')
const paths = [process.env.A, process.env.B ?? new URL('../src/memory/search-index.ts', import.meta.url).pathname]
const modules = await Promise.all(paths.map(path => import(pathToFileURL(path).href) as Promise<{ createSearchIndex: () => Index }>))
const size = Number(process.env.BENCH_RECORDS ?? 100000)
const queries = Number(process.env.BENCH_QUERIES ?? 400)
const rounds = Number(process.env.ROUNDS ?? 5)
const shapes = (process.env.SHAPES ?? 'one,scopes').split(',')
const SCOPES = 1000
const names = process.env.NAMES?.split(',')
const queriesOf = Object.entries({ ...QUERIES, phrase: 'on the weekend' }).filter(([name]) => names === undefined || names.includes(name))
const contents = workloadContents(size)

/** Per subject: the index of scope `n` (one scope: always the same). */
type Subject = (n: number) => Index
function build(scopes: number): Subject[] {
  return modules.map(({ createSearchIndex }) => {
    const indexes = Array.from({ length: scopes }, () => createSearchIndex())
    contents.forEach((content, n) => indexes[n % scopes]!.update(record(n, content)))
    for (const index of indexes) index.search({ query: 'coffee' })
    return (n: number) => indexes[n % scopes]!
  })
}
const cpu = (fn: () => void) => {
  const start = process.cpuUsage()
  fn()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / 1000
}
const pct = (values: readonly number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))]!
const round3 = (value: number) => Math.round(value * 1000) / 1000
const minMedian = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  return { min: round3(sorted[0]!), median: round3(sorted[sorted.length >> 1]!) }
}
const scavenges: number[] = []
const observer = new PerformanceObserver(list => {
  for (const entry of list.getEntries()) if ((entry as unknown as { detail?: { kind: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges.push(entry.startTime)
})
observer.observe({ entryTypes: ['gc'] })

const result: Record<string, unknown> = { size, queries, rounds, clock: 'cpu', a: paths[0], b: paths[1], loadBefore: loadavg().map(round3) }
for (const shape of shapes) {
  const scopes = shape === 'one' ? 1 : SCOPES
  const subjects = build(scopes)
  const scopeOf = (n: number, r: number) => (scopes === 1 ? 0 : n * 37 + r)
  for (const [name, query] of queriesOf) {
    // Warm-up: every scope the rounds search, both subjects.
    for (const subject of subjects) for (let n = 0; n < Math.min(queries, 200); n++) for (let r = 0; r < rounds; r++) subject(scopeOf(n, r)).search({ query })
    const perRound: number[][][] = [[[], [], []], [[], [], []]]
    for (let r = 0; r < rounds; r++) {
      const times: number[][] = [[], []]
      for (let n = 0; n < queries; n++) {
        for (const which of (n + r) % 2 === 0 ? [0, 1] : [1, 0]) times[which]!.push(cpu(() => subjects[which]!(scopeOf(n, r)).search({ query })))
      }
      for (const which of [0, 1]) [0.5, 0.95, 0.99].forEach((p, at) => perRound[which]![at]!.push(pct(times[which]!, p)))
    }
    const figures: Record<string, unknown> = {}
    for (const [which, label] of [[0, 'a'], [1, 'b']] as const) {
      figures[`${label}P50`] = minMedian(perRound[which]![0]!)
      figures[`${label}P95`] = minMedian(perRound[which]![1]!)
      figures[`${label}P99`] = minMedian(perRound[which]![2]!)
      // Allocation: heap growth over one search, a search with a scavenge (growth <= 0) left out.
      global.gc?.()
      const growth: number[] = []
      for (let n = 0; n < 300; n++) {
        const before = process.memoryUsage().heapUsed
        subjects[which]!(scopeOf(n, 0)).search({ query })
        const after = process.memoryUsage().heapUsed
        if (after > before) growth.push(after - before)
      }
      figures[`${label}BytesPerSearch`] = pct(growth, 0.5)
      const from = scavenges.length
      for (let n = 0; n < 1000; n++) subjects[which]!(scopeOf(n, 1)).search({ query })
      await new Promise(resolve => setTimeout(resolve, 20))
      figures[`${label}ScavengesPer1000`] = scavenges.length - from
    }
    let same = 0
    for (let n = 0; n < 50; n++) {
      const [a, b] = subjects.map(subject => JSON.stringify(subject(scopeOf(n, 2)).search({ query }).map(hit => [hit.record.id, hit.score])))
      if (a === b) same++
    }
    figures.identical = `${same}/50`
    result[`${shape} ${name}`] = figures
  }
}
observer.disconnect()
result.loadAfter = loadavg().map(round3)
console.log(JSON.stringify(result))
