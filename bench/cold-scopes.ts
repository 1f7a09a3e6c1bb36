/**
 * The first search in a cold scope through the store (issue 13: under 1 ms a scope of 100
 * records): a log of BENCH_RECORDS records (default 100,000, the workload of `npm run bench`) in
 * BENCH_SCOPES scopes (default 1,000) with a checkpoint, every scope's index built before it
 * (BENCH_INDEXES=0: none built, so each is built on its first search); then BENCH_RUNS times
 * (default 5) a cold open (a new workspace object; its first search in scope 0 timed apart) and
 * the first search in BENCH_FRESH fresh scopes (default 200), each timed alone by CPU time and by
 * wall time: the section read, its check and decode, the index restore or build, the search.
 * Prints min and median over the runs of the per-run p50 / p95 / mean. BENCH_DIR keeps the filled
 * log there (made when missing) for the next run.
 * Run with `node --expose-gc --import tsx bench/cold-scopes.ts`.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { workspaceJsonlMemoryStore } from '../src/memory/stores/workspace-jsonl.ts'
import { createWorkspace } from '../src/workspace/workspace.ts'
import { percentile, QUERIES, round3, scopeOf, workloadContents } from './workload.ts'

const size = Number(process.env.BENCH_RECORDS ?? 100000)
const scopes = Number(process.env.BENCH_SCOPES ?? 1000)
const runs = Number(process.env.BENCH_RUNS ?? 5)
const fresh = Math.min(scopes - 1, Number(process.env.BENCH_FRESH ?? 200))
const withIndexes = process.env.BENCH_INDEXES !== '0'
const kept = process.env.BENCH_DIR
const dir = kept ?? mkdtempSync(join(tmpdir(), 'vam-cold-scopes-'))
const every = 10 * size
const open = () => workspaceJsonlMemoryStore({ checkpointEvery: every }).create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })

const filledNow = !existsSync(join(dir, 'memory/memory.jsonl.checkpoint'))
if (filledNow) {
  mkdirSync(dir, { recursive: true })
  const fill = open()
  const contents = workloadContents(size)
  for (let n = 0; n < size; n++) await fill.append({ store: 'agent', scope: scopeOf(n, scopes) }, { kind: 'semantic', content: contents[n]! }, { audit: { via: 'api' } })
  if (withIndexes) for (let s = 0; s < scopes; s++) await fill.search({ store: 'agent', scope: scopeOf(s, scopes) }, { query: QUERIES.common })
  await fill.log.checkpoint()
}

const figures: Record<string, number[]> = { openFirstMs: [], cpuP50: [], cpuP95: [], cpuMean: [], wallP50: [], wallP95: [], wallMean: [] }
for (let run = 0; run < runs; run++) {
  global.gc?.()
  let started = performance.now()
  const engine = open()
  if ((await engine.search({ store: 'agent', scope: scopeOf(0, scopes) }, { query: QUERIES.common })).length === 0) throw new Error('no hits')
  figures.openFirstMs!.push(performance.now() - started)
  const cpu: number[] = []
  const wall: number[] = []
  for (let at = 1; at <= fresh; at++) {
    // Spread over the scopes and shifted per run; every scope searched is cold in this engine.
    const scope = 1 + ((at * 7 + run) % (scopes - 1))
    const usage = process.cpuUsage()
    started = performance.now()
    const hits = await engine.search({ store: 'agent', scope: scopeOf(scope, scopes) }, { query: QUERIES.common })
    wall.push(performance.now() - started)
    const used = process.cpuUsage(usage)
    cpu.push((used.user + used.system) / 1000)
    if (hits.length === 0) throw new Error('no hits')
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length
  figures.cpuP50!.push(percentile(cpu, 0.5))
  figures.cpuP95!.push(percentile(cpu, 0.95))
  figures.cpuMean!.push(mean(cpu))
  figures.wallP50!.push(percentile(wall, 0.5))
  figures.wallP95!.push(percentile(wall, 0.95))
  figures.wallMean!.push(mean(wall))
}
const stats = (values: number[]) => ({ min: round3(Math.min(...values)), median: round3(percentile(values, 0.5)) })
console.log(JSON.stringify({ size, scopes, runs, fresh, filledNow, indexesAtFill: filledNow ? withIndexes : undefined, load: loadavg().map(round3), ...Object.fromEntries(Object.entries(figures).map(([name, values]) => [name, stats(values)])) }))
if (!kept) rmSync(dir, { recursive: true, force: true })
