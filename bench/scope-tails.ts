/**
 * The search tails of the workspace JSONL store at 1,000 scopes of 100 records (issue 13), in a
 * short loop: the side-by-side workload of `npm run bench` (bench/workload.ts, filled through the
 * store, every scope searched once, a checkpoint written), built once into `BENCH_BASE` (default
 * a folder in the temp directory, reused by later runs) and copied for each run. The store opens
 * the copy, searches every scope once, appends the 600 records the side-by-side appends (100 after
 * an idle turn, 500 back to back), then `BENCH_ROUNDS` rounds (default 7) of 100 searches per
 * query shape over scopes `n * 37 + round`, the store and MiniSearch (one index per scope,
 * bench/baselines/minisearch.ts) interleaved shape by shape, as the side-by-side does.
 *
 * Per subject and shape: wall-clock p50 / p95 (min and median of the rounds, each search awaited
 * like the side-by-side's `timed`), this process's CPU time per search (p50 / p95 of all
 * searches), and of the searches slower than twice their round's p50: how many overlap a garbage
 * collection (PerformanceObserver 'gc' entries), how many are the first search of their query in
 * their scope, and how many of those are in a scope the appends wrote to. Then how many scopes the
 * bound on loaded scopes dropped. `BENCH_GC_DETAIL=1` also prints the GC kinds and their total
 * time over the rounds. `BENCH_SCOPES=1` runs the one-scope shape instead (100,000 records in one
 * scope); `BENCH_SUBJECTS=JSONL` limits the subjects (by name prefix). Run with
 * `node --expose-gc --import tsx bench/scope-tails.ts`.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PerformanceObserver, constants } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { workspaceJsonlMemoryStore } from '../src/memory/stores/workspace-jsonl.ts'
import { createWorkspace } from '../src/workspace/workspace.ts'
import { createMiniSearchBaseline } from './baselines/minisearch.ts'
import { ensureFilledLog, useAsTheBenchDoes } from './filled-log.ts'
import { percentile, QUERIES, round3, scopeUser, workloadContents } from './workload.ts'

const SIZE = 100_000
const SCOPES = Number(process.env.BENCH_SCOPES ?? 1000)
const SEARCHES_PER_ROUND = 100
const rounds = Number(process.env.BENCH_ROUNDS ?? 7)
const base = process.env.BENCH_BASE ?? join(tmpdir(), `vam-scope-tails-${SIZE}-${SCOPES}`)
const contents = workloadContents(SIZE)
const target = (user: string) => ({ store: 'agent', scope: { agent: 'bench', user } })

await ensureFilledLog(base, SIZE, SCOPES, contents)
const dir = mkdtempSync(join(tmpdir(), 'vam-scope-tails-run-'))
cpSync(join(base, 'memory'), join(dir, 'memory'), { recursive: true })

interface Subject { name: string; search(user: string, query: string): unknown }
const store = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
/** Scopes the store dropped from memory (the bound of `maxLoadedScopes`) from its open on. */
let dropped = 0
store.log.onPartitionDropped?.(() => { dropped++ })
await useAsTheBenchDoes(store, SIZE, SCOPES, contents)
/** Scopes the appends above wrote to (lines after the checkpoint). */
const appended = new Set([...Array.from({ length: 100 }, (_, n) => scopeUser(n, SCOPES)), ...Array.from({ length: 500 }, (_, n) => scopeUser(n * 7, SCOPES))])
const mini = createMiniSearchBaseline()
contents.forEach((content, n) => mini.insert(scopeUser(n, SCOPES), content))
const subjects = ([
  { name: 'JSONL', search: (user, query) => store.search(target(user), { query }) },
  { name: 'MiniSearch', search: (user, query) => mini.search(user, query) },
] satisfies Subject[]).filter(subject => !process.env.BENCH_SUBJECTS || process.env.BENCH_SUBJECTS.split(',').some(prefix => subject.name.startsWith(prefix)))

const gcs: Array<{ start: number; end: number; kind: number }> = []
const observer = new PerformanceObserver(list => {
  for (const entry of list.getEntries()) gcs.push({ start: entry.startTime, end: entry.startTime + entry.duration, kind: (entry as unknown as { detail?: { kind: number } }).detail?.kind ?? 0 })
})
observer.observe({ entryTypes: ['gc'] })

interface Sample { wall: number; cpu: number; start: number; end: number; user: string; first: boolean }
const samples: Record<string, Record<string, Sample[][]>> = {}
/** Subject, shape and scope of every search so far: a search is the first of its query in its scope or not. */
const seen = new Set<string>()
global.gc?.()
for (let round = 0; round < rounds; round++) {
  for (const subject of subjects) {
    for (const [shape, query] of Object.entries(QUERIES)) {
      const list: Sample[] = []
      for (let n = 0; n < SEARCHES_PER_ROUND; n++) {
        const user = scopeUser(n * 37 + round, SCOPES)
        const seenKey = `${subject.name} ${shape} ${user}`
        const first = !seen.has(seenKey)
        seen.add(seenKey)
        const cpuStart = process.cpuUsage()
        const start = performance.now()
        await subject.search(user, query)
        const end = performance.now()
        const cpu = process.cpuUsage(cpuStart)
        list.push({ wall: end - start, cpu: (cpu.user + cpu.system) / 1000, start, end, user, first })
      }
      ;((samples[subject.name] ??= {})[shape] ??= []).push(list)
    }
  }
}
// The observer's entries arrive on a later turn.
await sleep(20)
observer.disconnect()

const kinds: Record<number, string> = { [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb' }
const overlapsGc = (sample: Sample) => gcs.some(gc => gc.start < sample.end && gc.end > sample.start)
const table: Array<Record<string, string | number>> = []
for (const [name, shapes] of Object.entries(samples)) {
  for (const [shape, roundsOf] of Object.entries(shapes)) {
    const p50s = roundsOf.map(list => percentile(list.map(s => s.wall), 0.5))
    const p95s = roundsOf.map(list => percentile(list.map(s => s.wall), 0.95))
    const all = roundsOf.flat()
    const slow = roundsOf.flatMap((list, r) => list.filter(s => s.wall > 2 * p50s[r]!))
    const gcInWindow = all.filter(overlapsGc).length
    table.push({
      subject: name,
      shape,
      'p50 min': round3(Math.min(...p50s)),
      'p50 med': round3(percentile(p50s, 0.5)),
      'p95 min': round3(Math.min(...p95s)),
      'p95 med': round3(percentile(p95s, 0.5)),
      'cpu p50': round3(percentile(all.map(s => s.cpu), 0.5)),
      'cpu p95': round3(percentile(all.map(s => s.cpu), 0.95)),
      'slow (>2x p50)': slow.length,
      'slow with gc': slow.filter(overlapsGc).length,
      'all with gc': gcInWindow,
      'slow: first of query in scope': slow.filter(s => s.first).length,
      'slow: first in appended scope': slow.filter(s => s.first && appended.has(s.user)).length,
      'first searches': all.filter(s => s.first).length,
    })
  }
}
console.table(table)
if (process.env.BENCH_GC_DETAIL) {
  const byKind: Record<string, { count: number; ms: number }> = {}
  for (const gc of gcs) {
    const entry = (byKind[kinds[gc.kind] ?? String(gc.kind)] ??= { count: 0, ms: 0 })
    entry.count++
    entry.ms = round3(entry.ms + gc.end - gc.start)
  }
  console.log('gc during the rounds:', byKind)
}
const { loadavg } = await import('node:os')
console.log(`scopes dropped by the bound on loaded scopes: ${dropped}; loaded now: ${store.log.loadedPartitions?.() ?? 0}`)
console.log(`load ${loadavg().map(value => value.toFixed(2)).join(' ')}, ${rounds} rounds`)
rmSync(dir, { recursive: true, force: true })
