/**
 * Cold open of a log with many scopes, answered in one (issue 13): fills one log of BENCH_RECORDS
 * records (default 100,000) in BENCH_SCOPES scopes (default 1,000), searches every scope once (so
 * every partition's index is built) and writes a checkpoint; then, BENCH_RUNS times (default 5),
 * opens the log with a new workspace object and times its first search in one scope, and measures
 * the heap the open keeps per record (beyond the engine before the open, after a collection).
 * The same workload in the same run on the FTS5 table baseline (bench/baselines/fts5.ts, both
 * layouts): a cold open of its database file and the first search in one scope. Prints min and
 * median of each, and the ratio of the medians. Run with `node --expose-gc --import tsx bench/open-scope.ts`.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openFts5Baseline, type Fts5Layout } from './baselines/fts5.ts'
import { workspaceJsonlMemoryStore } from '../src/memory/stores/workspace-jsonl.ts'
import { createWorkspace } from '../src/workspace/workspace.ts'

const size = Number(process.env.BENCH_RECORDS ?? 100000)
const scopes = Number(process.env.BENCH_SCOPES ?? 1000)
const runs = Number(process.env.BENCH_RUNS ?? 5)
const WORDS = ['coffee', 'tea', 'window', 'aisle', 'paris', 'lyon', 'dog', 'cat', 'music', 'jazz', 'blues', 'garden', 'python', 'rust', 'hiking', 'kayak']
const content = (n: number) => `note ${n}: ${WORDS[n % WORDS.length]} ${WORDS[(n * 7) % WORDS.length]} ${n % 997 === 0 ? `zyzzyva${n}` : ''} ${'lorem ipsum dolor sit amet '.repeat(2)}`
const scopeOf = (n: number) => ({ agent: 'bench', user: `u${n % scopes}` })
const dir = mkdtempSync(join(tmpdir(), 'vam-open-scope-'))
const every = 10 * size
let fill: ReturnType<ReturnType<typeof workspaceJsonlMemoryStore>['create']> | undefined = workspaceJsonlMemoryStore({ checkpointEvery: every }).create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
const filled = performance.now()
for (let n = 0; n < size; n++) await fill!.append({ store: 'agent', scope: scopeOf(n) }, { kind: 'semantic', content: content(n) }, { audit: { via: 'api' } })
for (let s = 0; s < scopes; s++) await fill!.search({ store: 'agent', scope: scopeOf(s) }, { query: WORDS[s % WORDS.length]! })
const fillMs = Math.round(performance.now() - filled)
let started = performance.now()
await fill!.log.checkpoint()
const checkpointWriteMs = Math.round(performance.now() - started)
// A cold open is a process that has not read the log: the filling engine's state is released.
fill = undefined
const checkpointBytes = statSync(join(dir, 'memory/memory.jsonl.checkpoint')).size
const logBytes = statSync(join(dir, 'memory/memory.jsonl')).size

const openMs: number[] = []
const heapPerRecord: number[] = []
let engine: ReturnType<ReturnType<typeof workspaceJsonlMemoryStore>['create']> | undefined
for (let run = 0; run < runs; run++) {
  // The engine of the run before is released first: the heap before holds no open log state.
  engine = undefined
  global.gc?.()
  const heapBefore = process.memoryUsage().heapUsed
  started = performance.now()
  engine = workspaceJsonlMemoryStore({ checkpointEvery: every }).create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
  const scope = run * 7
  const hits = await engine.search({ store: 'agent', scope: scopeOf(scope) }, { query: WORDS[scope % WORDS.length]! })
  openMs.push(performance.now() - started)
  if (hits.length === 0) throw new Error('no hits')
  global.gc?.()
  heapPerRecord.push((process.memoryUsage().heapUsed - heapBefore) / size)
  // The engine (and the state its log holds) stays alive until measured.
  if ((await engine.export({ store: 'agent', scope: scopeOf(scope) })).length === 0) throw new Error('no records')
}
engine = undefined

/** Cold open of the FTS5 baseline's file and its first search in one scope, per run (ms). */
function fts5ColdOpens(layout: Fts5Layout): number[] {
  const file = join(dir, `fts5-${layout}.db`)
  const loader = openFts5Baseline(file, layout)
  loader.load(Array.from({ length: size }, (_, n) => ({ scope: JSON.stringify(scopeOf(n)), content: content(n) })))
  loader.close()
  const times: number[] = []
  for (let run = 0; run < runs; run++) {
    const scope = run * 7
    const started = performance.now()
    const db = openFts5Baseline(file, layout)
    const hits = db.search(JSON.stringify(scopeOf(scope)), WORDS[scope % WORDS.length]!)
    times.push(performance.now() - started)
    db.close()
    if (hits.length === 0) throw new Error('no FTS5 hits')
  }
  return times
}
const fts5Column = fts5ColdOpens('column')
const fts5Token = fts5ColdOpens('token')

const stats = (values: number[], digits: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return { min: Number(sorted[0]!.toFixed(digits)), median: Number(sorted[Math.floor(sorted.length / 2)]!.toFixed(digits)) }
}
const median = (values: number[]) => stats(values, 3).median
const fts5Best = Math.min(median(fts5Column), median(fts5Token))
console.log(JSON.stringify({
  size,
  scopes,
  runs,
  fillMs,
  checkpointWriteMs,
  checkpointBytesPerRecord: Math.round(checkpointBytes / size),
  logBytesPerRecord: Math.round(logBytes / size),
  coldOpenFirstSearchMs: stats(openMs, 1),
  coldOpenFirstSearchRunsMs: openMs.map(ms => Number(ms.toFixed(1))),
  heapBytesPerRecord: stats(heapPerRecord, 0),
  fts5ColdOpenFirstSearchMs: { column: stats(fts5Column, 2), token: stats(fts5Token, 2) },
  ratioToFts5: Number((median(openMs) / fts5Best).toFixed(2)),
}))
rmSync(dir, { recursive: true, force: true })
