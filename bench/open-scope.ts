/**
 * Cold open of a log with many scopes, answered in one (issue 13): fills one log of BENCH_RECORDS
 * records (default 100,000) in BENCH_SCOPES scopes (default 1,000), searches every scope once (so
 * every partition's index is built) and writes a checkpoint; then, BENCH_RUNS times (default 5),
 * opens the log with a new workspace object and times its first search in one scope, and measures
 * the heap the open keeps per record (beyond the engine before the open, after a collection).
 * Prints min and median. Run with `node --expose-gc --import tsx bench/open-scope.ts`.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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
const fill = workspaceJsonlMemoryStore({ checkpointEvery: every }).create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
const filled = performance.now()
for (let n = 0; n < size; n++) await fill.append({ store: 'agent', scope: scopeOf(n) }, { kind: 'semantic', content: content(n) }, { audit: { via: 'api' } })
for (let s = 0; s < scopes; s++) await fill.search({ store: 'agent', scope: scopeOf(s) }, { query: WORDS[s % WORDS.length]! })
const fillMs = Math.round(performance.now() - filled)
let started = performance.now()
await fill.log.checkpoint()
const checkpointWriteMs = Math.round(performance.now() - started)
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
const stats = (values: number[], digits: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return { min: Number(sorted[0]!.toFixed(digits)), median: Number(sorted[Math.floor(sorted.length / 2)]!.toFixed(digits)) }
}
console.log(JSON.stringify({ size, scopes, runs, fillMs, checkpointWriteMs, checkpointBytesPerRecord: Math.round(checkpointBytes / size), logBytesPerRecord: Math.round(logBytes / size), coldOpenFirstSearchMs: stats(openMs, 1), heapBytesPerRecord: stats(heapPerRecord, 0) }))
rmSync(dir, { recursive: true, force: true })
