/**
 * Dropping partitions: 1,000 scopes of 20 records, a checkpoint, then every scope read once, in a
 * store with `maxLoadedScopes: 50` (A) and one without a bound (B), interleaved. Prints loaded
 * partitions, heap after GC, and the time of a read that reloads a dropped scope against a read of
 * a loaded one, in the same process.
 *
 * Usage: node --expose-gc --import tsx bench/partition-eviction.ts [rounds]
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openMemoryLog } from '../src/memory/event-log.ts'
import { workspaceJsonlMemoryStore } from '../src/memory/stores/workspace-jsonl.ts'
import { createWorkspace } from '../src/workspace/workspace.ts'

const SCOPES = 1000
const PER_SCOPE = 20
const KEY = 'memory:memory.jsonl'
const target = (n: number) => ({ store: 'agent', scope: { agent: 'a', user: `u${n}` } })
const audit = { via: 'api' }
const gc = (globalThis as { gc?: () => void }).gc!

const dir = mkdtempSync(join(tmpdir(), 'vam-evict-bench-'))
const seed = workspaceJsonlMemoryStore({ checkpointEvery: false }).create({ store: 'agent', agent: 'a', workspace: createWorkspace({ dir }), writable: true })
for (let n = 0; n < SCOPES; n++) for (let r = 0; r < PER_SCOPE; r++) await seed.append(target(n), { kind: 'semantic', content: `user ${n} note ${r} about tea and rain` }, { audit })
await openMemoryLog(createWorkspace({ dir }), KEY).checkpoint()

async function run(max: number | false) {
  const adapter = workspaceJsonlMemoryStore({ maxLoadedScopes: max }).create({ store: 'agent', agent: 'a', workspace: createWorkspace({ dir }), writable: true })
  gc()
  const base = process.memoryUsage().heapUsed
  for (let n = 0; n < SCOPES; n++) await adapter.search(target(n), { query: 'tea' })
  gc()
  const heap = process.memoryUsage().heapUsed - base
  // Scope 0 was used first: dropped under the bound, loaded without one.
  let t = performance.now()
  await adapter.search(target(0), { query: 'rain' })
  const first = performance.now() - t
  t = performance.now()
  await adapter.search(target(SCOPES - 1), { query: 'rain' })
  const warm = performance.now() - t
  return { loaded: adapter.log.loadedPartitions!(), heapMB: heap / 1e6, scope0Ms: first, lastScopeMs: warm, keep: adapter }
}

const rounds = Number(process.argv[2] ?? 5)
const results: Record<string, Array<Awaited<ReturnType<typeof run>>>> = { bounded: [], unbounded: [] }
for (let i = 0; i < rounds; i++) {
  results.bounded!.push(await run(50))
  results.unbounded!.push(await run(false))
}
const stat = (values: number[]) => { const s = [...values].sort((a, b) => a - b); return `${s[0]!.toFixed(2)} / ${s[Math.floor(s.length / 2)]!.toFixed(2)}` }
for (const [name, list] of Object.entries(results)) {
  console.log(`${name}: loaded ${list[0]!.loaded}; heap MB min/median ${stat(list.map(r => r.heapMB))}; search in scope 0 ms ${stat(list.map(r => r.scope0Ms))}; search in last scope ms ${stat(list.map(r => r.lastScopeMs))}`)
}
