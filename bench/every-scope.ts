/**
 * The "first search in every scope" pass of the side-by-side rows (bench/side-by-side.ts: its
 * mean per scope is the row "first search in a cold scope") alone, for one or more versions of
 * the store in one process. The log is BENCH_DIR's (made when missing as bench/filled-log.ts
 * makes it: BENCH_RECORDS records, default 100,000, in BENCH_SCOPES scopes, default 1,000, every
 * index built); each version gets its own copy, whose checkpoint that version writes again (so
 * each reads the section format it writes). `BENCH_SRCS=A=<src folder>,B=<src folder>` (default
 * `B=src`) names the versions.
 *
 * Per round (BENCH_RUNS, default 5), per version in an order rotating each round: a full GC, a
 * cold open with the store's default options, its first search in scope 7, then the first search
 * in every scope in turn, as the side-by-side pass runs it. Per version, min and median over the
 * rounds of: the pass's wall time and CPU time (user + system of this process) per scope, the
 * wall p50 and p90 of one scope's first search, the part of the mean that searches over 2 ms add
 * beyond 2 ms each, and the garbage-collection pause time per scope.
 * Run with `node --expose-gc --import tsx bench/every-scope.ts`.
 */
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { PerformanceObserver } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { ensureFilledLog } from './filled-log.ts'
import { percentile, QUERIES, round3, scopeUser, workloadContents } from './workload.ts'

const size = Number(process.env.BENCH_RECORDS ?? 100000)
const scopes = Number(process.env.BENCH_SCOPES ?? 1000)
const runs = Number(process.env.BENCH_RUNS ?? 5)
const base = process.env.BENCH_DIR ?? join(tmpdir(), `vam-every-scope-${size}-${scopes}`)
const versions = (process.env.BENCH_SRCS ?? 'B=src').split(',').filter(Boolean).map((pair) => {
  const [name, src] = pair.split('=')
  if (!name || !src) throw new Error('BENCH_SRCS must be name=folder pairs separated by commas, for example A=../main/src,B=src')
  return { name, src: resolve(src) }
})

type Store = { search: (...args: any[]) => Promise<unknown>; log: { view(read: (state: unknown) => unknown): Promise<unknown>; checkpoint(): Promise<unknown>; settled(): Promise<void> } }
type Open = (dir: string) => Store
const target = (user: string) => ({ store: 'agent', scope: { agent: 'bench', user } })

if (!existsSync(join(base, 'memory/memory.jsonl.checkpoint'))) await ensureFilledLog(base, size, scopes, workloadContents(size))

/** A version's store factory over its own copy of the log, whose checkpoint it wrote. */
async function prepare(src: string): Promise<{ open: Open; dir: string }> {
  const { workspaceJsonlMemoryStore } = await import(pathToFileURL(join(src, 'memory/stores/workspace-jsonl.ts')).href)
  const { createWorkspace } = await import(pathToFileURL(join(src, 'workspace/workspace.ts')).href)
  const dir = mkdtempSync(join(tmpdir(), 'vam-every-scope-'))
  cpSync(join(base, 'memory'), join(dir, 'memory'), { recursive: true })
  const open: Open = at => workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir: at }), writable: true })
  const writer = open(dir)
  // Every section loaded (each index restored from its snapshot), then written in this version's format.
  await writer.log.view(() => undefined)
  await writer.log.checkpoint()
  await writer.log.settled()
  return { open, dir }
}

const prepared = new Map<string, { open: Open; dir: string }>()
for (const { name, src } of versions) prepared.set(name, await prepare(src))

let pauses = 0
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) pauses += entry.duration
})
observer.observe({ entryTypes: ['gc'] })

const figures: Record<string, Record<string, number[]>> = {}
const note = (version: string, name: string, value: number) => ((figures[version] ??= {})[name] ??= []).push(value)
for (let run = 0; run < runs; run++) {
  for (let turn = 0; turn < versions.length; turn++) {
    const { name } = versions[(run + turn) % versions.length]!
    const { open, dir } = prepared.get(name)!
    global.gc?.()
    await new Promise(resolve => setTimeout(resolve, 20))
    const store = open(dir)
    await store.search(target(scopeUser(7, scopes)), { query: QUERIES.common })
    await new Promise(resolve => setTimeout(resolve, 20))
    pauses = 0
    const each: number[] = []
    const usage = process.cpuUsage()
    const started = performance.now()
    for (let s = 0; s < scopes; s++) {
      const at = performance.now()
      await store.search(target(scopeUser(s, scopes)), { query: QUERIES.common })
      each.push(performance.now() - at)
    }
    const wall = performance.now() - started
    const used = process.cpuUsage(usage)
    // The observer reports the pauses of the pass in a later turn.
    await new Promise(resolve => setTimeout(resolve, 20))
    note(name, 'wallPerScope', wall / scopes)
    note(name, 'cpuPerScope', (used.user + used.system) / 1000 / scopes)
    note(name, 'wallP50', percentile(each, 0.5))
    note(name, 'wallP90', percentile(each, 0.9))
    note(name, 'over2msPerScope', each.reduce((sum, ms) => sum + Math.max(0, ms - 2), 0) / scopes)
    note(name, 'gcPausePerScope', pauses / scopes)
  }
}
observer.disconnect()
for (const { dir } of prepared.values()) rmSync(dir, { recursive: true, force: true })
const stats = (values: number[]) => ({ min: round3(Math.min(...values)), median: round3(percentile(values, 0.5)) })
console.log(JSON.stringify({ size, scopes, runs, load: loadavg().map(round3), ...Object.fromEntries(Object.entries(figures).map(([version, named]) => [version, Object.fromEntries(Object.entries(named).map(([name, values]) => [name, stats(values)]))])) }))
