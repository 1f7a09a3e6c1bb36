/**
 * `npm run bench:append`: the cost of one store append when it is alone (the common case: one
 * `remember` per model turn, the event loop idle in between) and in a burst, against an FTS5
 * table's insert (better-sqlite3, WAL, autocommit) under the same two cadences and a bare
 * `appendFileSync` of the same line. Every round runs each series once, in a rotating order, in
 * this one process; the table prints the min and the median over rounds of each series' p50.
 *
 * Env: APPEND_ROUNDS (default 7), APPEND_RECORDS (records filled before timing, default 10000),
 * APPEND_SCOPES (default 1000), APPEND_IDLE_MS (idle before each isolated write, default 10).
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { workspaceJsonlMemoryStore } from '../src/memory/stores/workspace-jsonl.ts'
import { createWorkspace } from '../src/workspace/workspace.ts'
import { openFts5Baseline } from './baselines/fts5.ts'

const ROUNDS = Number(process.env.APPEND_ROUNDS ?? 7)
const RECORDS = Number(process.env.APPEND_RECORDS ?? 10_000)
const SCOPES = Number(process.env.APPEND_SCOPES ?? 1000)
const IDLE_MS = Number(process.env.APPEND_IDLE_MS ?? 10)
const ISOLATED = 40
const BURST = 300
const WORDS = ['coffee', 'tea', 'window', 'aisle', 'paris', 'lyon', 'dog', 'cat', 'music', 'jazz', 'blues', 'garden']
const audit = { via: 'api' }
const content = (n: number) => `note ${n}: ${WORDS[n % WORDS.length]} ${WORDS[(n * 7) % WORDS.length]} ${'lorem ipsum dolor sit amet '.repeat(3)}`
const scopeOf = (n: number) => ({ agent: 'bench', user: `u${n % SCOPES}` })
const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const median = p50
const min = (values: number[]) => Math.min(...values)

const dir = mkdtempSync(join(tmpdir(), 'vam-bench-append-'))
const store = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
const fts5 = openFts5Baseline(join(dir, 'fts5.db'), 'column')
fts5.load(Array.from({ length: RECORDS }, (_, n) => ({ scope: `u${n % SCOPES}`, content: content(n) })))
for (let n = 0; n < RECORDS; n++) await store.append({ store: 'agent', scope: scopeOf(n) }, { kind: 'semantic', content: content(n) }, { audit })
const line = readFileSync(join(dir, 'memory/memory.jsonl'), 'utf8').trimEnd().split('\n').at(-1)!
const bareFile = join(dir, 'bare.jsonl')
writeFileSync(bareFile, '')

let next = RECORDS
const storeAppend = () => {
  const n = next++
  return store.append({ store: 'agent', scope: scopeOf(n) }, { kind: 'semantic', content: content(n) }, { audit })
}
const fts5Insert = () => {
  const n = next++
  fts5.insert(`u${n % SCOPES}`, content(n))
}

/** The p50 (ms) of `count` calls of `op`, each after an idle wait of `idleMs` when given (the wait not timed). */
async function p50Of(count: number, op: () => unknown, idleMs?: number): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < count; i++) {
    if (idleMs !== undefined) await sleep(idleMs)
    const start = performance.now()
    // A synchronous op is timed without a promise turn (a bare append is about 6 us).
    const pending = op()
    if (pending instanceof Promise) await pending
    times.push(performance.now() - start)
  }
  return p50(times)
}

type Series = 'jsonlIsolated' | 'fts5Isolated' | 'jsonlBurst' | 'fts5Burst' | 'bareAppend'
const series: Record<Series, () => Promise<number>> = {
  jsonlIsolated: () => p50Of(ISOLATED, storeAppend, IDLE_MS),
  fts5Isolated: () => p50Of(ISOLATED, fts5Insert, IDLE_MS),
  jsonlBurst: () => p50Of(BURST, storeAppend),
  fts5Burst: () => p50Of(BURST, fts5Insert),
  bareAppend: () => p50Of(BURST, () => appendFileSync(bareFile, `${line}\n`)),
}

const names = Object.keys(series) as Series[]
const results = Object.fromEntries(names.map(name => [name, [] as number[]])) as Record<Series, number[]>
const isolatedRatios: number[] = []
const burstRatios: number[] = []
for (let round = 0; round < ROUNDS; round++) {
  const order = names.map((_, i) => names[(i + round) % names.length]!)
  const p50s = {} as Record<Series, number>
  for (const name of order) results[name].push(p50s[name] = await series[name]())
  isolatedRatios.push(p50s.jsonlIsolated / p50s.fts5Isolated)
  burstRatios.push(p50s.jsonlBurst / p50s.bareAppend)
}

const us = (value: number) => `${(value * 1000).toFixed(1)} µs`
console.log(`append cadences, ${RECORDS} records in ${SCOPES} scopes, ${ROUNDS} rounds (${ISOLATED} isolated writes after ${IDLE_MS} ms idle, ${BURST} burst writes per series and round)`)
console.log('series          p50 min     p50 median')
for (const name of names) console.log(`${name.padEnd(15)} ${us(min(results[name])).padStart(10)}  ${us(median(results[name])).padStart(10)}`)
console.log(`isolated jsonl / isolated fts5 (per round): min ${min(isolatedRatios).toFixed(2)}x, median ${median(isolatedRatios).toFixed(2)}x (target <= 2x)`)
console.log(`burst jsonl / bare appendFileSync (per round): min ${min(burstRatios).toFixed(2)}x, median ${median(burstRatios).toFixed(2)}x (target <= 5x)`)
fts5.close()
rmSync(dir, { recursive: true, force: true })
