/**
 * The burst rows of bench/burst-scopes.ts for two or more versions of the store in one process:
 * `BURST_SRCS=A=<src folder>,B=<src folder>` loads each version's store over its own copy of the
 * burst fixture (made by `npm run bench:burst` with the same `BURST_RECORDS` and `BURST_SCOPES`),
 * warms each as that bench does, then runs `BURST_BLOCKS` rounds (default 60) of one block of 100
 * store appends per version (the versions' order rotating each round) and 100 bare
 * `appendFileSync` calls of a log line. On a loaded machine the versions meet the same load within
 * milliseconds of each other, which separate processes run one after the other do not.
 *
 * Prints one JSON line: the bare append's wall p50 and per version its wall p50, that p50 over
 * the bare one, and the CPU time per append of its blocks (µs, min and median: user + system of
 * this process). Run: `BURST_SRCS=A=/path/to/main/src,B=src node --expose-gc --import tsx bench/burst-ab.ts`.
 */
import { appendFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { pathToFileURL } from 'node:url'
import { percentile, QUERIES, scopeUser, workloadContents } from './workload.ts'

const RECORDS = Number(process.env.BURST_RECORDS ?? 100_000)
const SCOPES = Number(process.env.BURST_SCOPES ?? 1000)
const BLOCKS = Number(process.env.BURST_BLOCKS ?? 60)
const audit = { via: 'api' }
const fixture = join(tmpdir(), `vam-burst-fixture-${RECORDS}-${SCOPES}`)
if (!existsSync(join(fixture, 'ready'))) throw new Error(`no burst fixture at ${fixture}: run npm run bench:burst with the same BURST_RECORDS and BURST_SCOPES first`)
const versions = (process.env.BURST_SRCS ?? '').split(',').filter(Boolean).map((pair) => {
  const [name, src] = pair.split('=')
  if (!name || !src) throw new Error('BURST_SRCS must be name=folder pairs separated by commas, for example A=../main/src,B=src')
  return { name, src: resolve(src) }
})
if (versions.length < 2) throw new Error('BURST_SRCS must name at least two versions')

type Store = { append: (...args: any[]) => Promise<unknown>; search: (...args: any[]) => Promise<unknown>; log: { settled(): Promise<void> } }
const contents = workloadContents(RECORDS)
const target = (user: string) => ({ store: 'agent', scope: { agent: 'bench', user } })
const cpuUs = () => {
  const used = process.cpuUsage()
  return used.user + used.system
}

/** A version's store over its own copy of the fixture, warmed as bench/burst-scopes.ts warms its store. */
async function openVersion(src: string): Promise<{ store: Store; dir: string }> {
  const { workspaceJsonlMemoryStore } = await import(pathToFileURL(join(src, 'memory/stores/workspace-jsonl.ts')).href)
  const { createWorkspace } = await import(pathToFileURL(join(src, 'workspace/workspace.ts')).href)
  const dir = mkdtempSync(join(tmpdir(), 'vam-burst-ab-'))
  cpSync(join(fixture, 'memory'), join(dir, 'memory'), { recursive: true })
  const store: Store = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
  for (let s = 0; s < SCOPES; s++) await store.search(target(scopeUser(s, SCOPES)), { query: QUERIES.common })
  for (let n = 0; n < 20; n++) {
    await sleep(10)
    await store.append(target(scopeUser(n, SCOPES)), { kind: 'semantic', content: contents[n % RECORDS]! }, { audit })
  }
  for (let n = 0; n < 1000; n++) await store.append(target(scopeUser(n * 13 + 5, SCOPES)), { kind: 'semantic', content: contents[(n * 13) % RECORDS]! }, { audit })
  return { store, dir }
}

const opened = new Map<string, { store: Store; dir: string }>()
for (const { name, src } of versions) opened.set(name, await openVersion(src))
const firstDir = opened.get(versions[0]!.name)!.dir
const lastLine = readFileSync(join(firstDir, 'memory/memory.jsonl'), 'utf8').trimEnd().split('\n').at(-1)!
const bareFile = join(firstDir, 'bare.jsonl')
writeFileSync(bareFile, '')
;(globalThis as { gc?: () => void }).gc?.()

const wall = new Map<string, number[]>([['bare', []], ...versions.map(({ name }) => [name, []] as [string, number[]])])
const cpu = new Map<string, number[]>([['bare', []], ...versions.map(({ name }) => [name, []] as [string, number[]])])
for (let round = 0; round < BLOCKS; round++) {
  const block = round * 100
  const turn = round % versions.length
  for (const { name } of [...versions.slice(turn), ...versions.slice(0, turn)]) {
    const store = opened.get(name)!.store
    const times = wall.get(name)!
    const started = cpuUs()
    for (let n = block; n < block + 100; n++) {
      const start = performance.now()
      await store.append(target(scopeUser(n * 7, SCOPES)), { kind: 'semantic', content: contents[(n * 7) % RECORDS]! }, { audit })
      times.push(performance.now() - start)
    }
    cpu.get(name)!.push((cpuUs() - started) / 100)
  }
  const started = cpuUs()
  for (let n = 0; n < 100; n++) {
    const start = performance.now()
    appendFileSync(bareFile, `${lastLine}\n`)
    wall.get('bare')!.push(performance.now() - start)
  }
  cpu.get('bare')!.push((cpuUs() - started) / 100)
}

const round = (value: number) => Math.round(value * 1000) / 1000
const bareP50 = percentile(wall.get('bare')!, 0.5)
const result: Record<string, unknown> = { records: RECORDS, scopes: SCOPES, blocks: BLOCKS, load: readFileSync('/proc/loadavg', 'utf8').split(' ')[0], bareP50Ms: round(bareP50), bareCpuUsMin: round(Math.min(...cpu.get('bare')!)) }
for (const { name } of versions) {
  const p50 = percentile(wall.get(name)!, 0.5)
  result[name] = { p50Ms: round(p50), vsBare: round(p50 / bareP50), cpuUsMin: round(Math.min(...cpu.get(name)!)), cpuUsMedian: round(percentile(cpu.get(name)!, 0.5)) }
}
console.log(JSON.stringify(result))
// The head anchors are written up to 50 ms after the last append: let them land before the folders go.
await sleep(100)
for (const { store, dir } of opened.values()) {
  await store.log.settled()
  rmSync(dir, { recursive: true, force: true })
}
