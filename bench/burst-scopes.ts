/**
 * The burst rows of `npm run bench` (bench/side-by-side.ts) replayed alone, for profiling and A/B
 * runs: a log of `BURST_RECORDS` records (default 100,000) in `BURST_SCOPES` scopes (default
 * 1,000), filled through the store, every scope searched once and a checkpoint written (as the
 * bench fills it; the fixture is kept under the system temp folder and reused), then opened
 * afresh on a copy: first search in every scope, `BURST_ISOLATED` isolated appends (10 ms idle
 * before each), `BURST_WARMUP` appends not timed (default 1,000: the bench's fill warms the same
 * code up in its process), then `BURST_BLOCKS` blocks of 100 store appends round-robin over the scopes
 * (record `n * 7`, as the bench) alternating with 100 bare `appendFileSync` calls of a log line.
 *
 * Prints one JSON line: wall p50 of the store and bare appends and their ratio (the bench's
 * figure), CPU time per store and bare append (min and median over blocks, µs: user + system of
 * this process, so waits for other processes on a loaded machine are not counted), and the
 * young-generation collections (scavenges) per 1,000 store appends with their total pause.
 *
 * `BURST_SRC` (default `src`): the source folder to load the store from, so that two versions can
 * be run one after the other on the same fixture. `BURST_PROFILE=<file>`: a CPU profile of the
 * burst blocks (node:inspector), with the top self times printed; `BURST_PROFILE_INTERVAL` its
 * sampling interval in µs (default 100; 400 or more with many blocks keeps the profiler's own
 * cost out of the proportions).
 */
import { appendFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { pathToFileURL } from 'node:url'
import { getHeapSpaceStatistics } from 'node:v8'
import { percentile, QUERIES, scopeOf, scopeUser, workloadContents } from './workload.ts'

const RECORDS = Number(process.env.BURST_RECORDS ?? 100_000)
const SCOPES = Number(process.env.BURST_SCOPES ?? 1000)
const BLOCKS = Number(process.env.BURST_BLOCKS ?? 20)
const ISOLATED = Number(process.env.BURST_ISOLATED ?? 20)
const WARMUP = Number(process.env.BURST_WARMUP ?? 1000)
const SRC = resolve(process.env.BURST_SRC ?? 'src')
const PROFILE = process.env.BURST_PROFILE
const audit = { via: 'api' }

type Store = { append: (...args: any[]) => Promise<unknown>; search: (...args: any[]) => Promise<unknown>; log: { checkpoint(): Promise<unknown>; settled(): Promise<void> } }
const { workspaceJsonlMemoryStore } = await import(pathToFileURL(join(SRC, 'memory/stores/workspace-jsonl.ts')).href)
const { createWorkspace } = await import(pathToFileURL(join(SRC, 'workspace/workspace.ts')).href)
const openStore = (dir: string): Store => workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
const target = (user: string) => ({ store: 'agent', scope: { agent: 'bench', user } })

const contents = workloadContents(RECORDS)
const fixture = join(tmpdir(), `vam-burst-fixture-${RECORDS}-${SCOPES}`)
if (!existsSync(join(fixture, 'ready'))) {
  rmSync(fixture, { recursive: true, force: true })
  const fill = openStore(fixture)
  for (let n = 0; n < RECORDS; n++) await fill.append({ store: 'agent', scope: scopeOf(n, SCOPES) }, { kind: 'semantic', content: contents[n]! }, { audit })
  for (let s = 0; s < SCOPES; s++) await fill.search(target(scopeUser(s, SCOPES)), { query: QUERIES.common })
  await fill.log.checkpoint()
  await fill.log.settled()
  await sleep(100)
  writeFileSync(join(fixture, 'ready'), '')
}

const dir = mkdtempSync(join(tmpdir(), 'vam-burst-'))
cpSync(join(fixture, 'memory'), join(dir, 'memory'), { recursive: true })
const lastLine = readFileSync(join(dir, 'memory/memory.jsonl'), 'utf8').trimEnd().split('\n').at(-1)!
const bareFile = join(dir, 'bare.jsonl')
writeFileSync(bareFile, '')
const store = openStore(dir)
for (let s = 0; s < SCOPES; s++) await store.search(target(scopeUser(s, SCOPES)), { query: QUERIES.common })
for (let n = 0; n < ISOLATED; n++) {
  await sleep(10)
  await store.append(target(scopeUser(n, SCOPES)), { kind: 'semantic', content: contents[n % RECORDS]! }, { audit })
}
// The bench fills its log in the same process first, so its burst runs on optimized code: warm up likewise (other scopes' records, not timed).
for (let n = 0; n < WARMUP; n++) await store.append(target(scopeUser(n * 13 + 5, SCOPES)), { kind: 'semantic', content: contents[(n * 13) % RECORDS]! }, { audit })
;(globalThis as { gc?: () => void }).gc?.()

// Young-generation collections, counted afterwards against the windows of the store blocks.
const collections: Array<{ at: number; ms: number }> = []
const windows: Array<[number, number]> = []
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if ((entry as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) collections.push({ at: entry.startTime, ms: entry.duration })
  }
})
observer.observe({ entryTypes: ['gc'] })

const HEAP_PROFILE = process.env.BURST_HEAP_PROFILE
const session = PROFILE || HEAP_PROFILE ? new Session() : undefined
if (session) session.connect()
if (session && PROFILE) {
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: Number(process.env.BURST_PROFILE_INTERVAL ?? 100) })
  await session.post('Profiler.start')
}
if (session && HEAP_PROFILE) {
  await session.post('HeapProfiler.enable')
  await session.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
}
// The main thread's own CPU time (ns, Linux schedstat), without the collector's helper threads.
const schedstat = `/proc/self/task/${process.pid}/schedstat`
const threadNs = existsSync(schedstat) ? () => Number(readFileSync(schedstat, 'latin1').split(' ')[0]) : () => Number.NaN
const cpuMs = (start: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(start)
  return (used.user + used.system) / 1000
}
if (process.env.BURST_MARK) console.log('--- burst starts')
const threadTimes = () => new Map(readdirSync('/proc/self/task').map(tid => [`${tid} ${readFileSync(`/proc/self/task/${tid}/comm`, 'latin1').trim()}`, Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1').split(' ')[0])]))
const threadsBefore = process.env.BURST_MARK ? threadTimes() : undefined
const burst: number[] = []
const bare: number[] = []
const burstCpu: number[] = []
const bareCpu: number[] = []
const burstThread: number[] = []
// Heap bytes allocated per store append, from blocks in which no collection ran (the spaces only grow then).
const heapUsed = () => getHeapSpaceStatistics().reduce((sum, space) => sum + space.space_used_size, 0)
const allocated: number[] = []
const bareThread: number[] = []
for (let block = 0; block < BLOCKS * 100; block += 100) {
  const opened = performance.now()
  const heapBefore = heapUsed()
  let thread = threadNs()
  let cpu = process.cpuUsage()
  for (let n = block; n < block + 100; n++) {
    const start = performance.now()
    await store.append(target(scopeUser(n * 7, SCOPES)), { kind: 'semantic', content: contents[(n * 7) % RECORDS]! }, { audit })
    burst.push(performance.now() - start)
  }
  burstCpu.push(cpuMs(cpu) * 10)
  burstThread.push((threadNs() - thread) / 100_000)
  const heapAfter = heapUsed()
  if (heapAfter > heapBefore) allocated.push((heapAfter - heapBefore) / 100)
  windows.push([opened, performance.now()])
  thread = threadNs()
  cpu = process.cpuUsage()
  for (let n = block; n < block + 100; n++) {
    const start = performance.now()
    appendFileSync(bareFile, `${lastLine}\n`)
    bare.push(performance.now() - start)
  }
  bareCpu.push(cpuMs(cpu) * 10)
  bareThread.push((threadNs() - thread) / 100_000)
}
if (process.env.BURST_MARK) {
  console.log('--- burst ends')
  for (const [name, ns] of threadTimes()) console.log(`${name}: ${((ns - (threadsBefore!.get(name) ?? 0)) / 1e6).toFixed(1)} ms`)
}
if (session && HEAP_PROFILE) {
  const { profile } = await session.post('HeapProfiler.stopSampling')
  writeFileSync(HEAP_PROFILE, JSON.stringify(profile))
}
if (session && !PROFILE) session.disconnect()
if (session && PROFILE) {
  const { profile } = await session.post('Profiler.stop')
  writeFileSync(PROFILE!, JSON.stringify(profile))
  const self = new Map<string, number>()
  const byId = new Map(profile.nodes.map(node => [node.id, node]))
  const interval = new Map<number, number>()
  for (let at = 0; at < profile.samples!.length; at++) interval.set(profile.samples![at]!, (interval.get(profile.samples![at]!) ?? 0) + (profile.timeDeltas![at] ?? 0))
  let total = 0
  for (const [id, us] of interval) {
    const frame = byId.get(id)!.callFrame
    const name = `${frame.functionName || '(anonymous)'} ${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}`
    self.set(name, (self.get(name) ?? 0) + us)
    total += us
  }
  console.error(`self time of the burst blocks (${(total / 1000).toFixed(0)} ms sampled):`)
  for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.error(`${(us / total * 100).toFixed(1).padStart(5)}%  ${name}`)
  session.disconnect()
}
await sleep(10)
observer.disconnect()
const inBlocks = collections.filter(({ at }) => windows.some(([from, to]) => at >= from && at <= to))
const scavenges = inBlocks.length
const scavengeMs = inBlocks.reduce((sum, { ms }) => sum + ms, 0)
if (process.env.BURST_TIMES) writeFileSync(process.env.BURST_TIMES, JSON.stringify({ burst, bare }))
const round = (value: number) => Math.round(value * 1000) / 1000
const burstP50 = percentile(burst, 0.5)
const bareP50 = percentile(bare, 0.5)
console.log(JSON.stringify({
  src: process.env.BURST_SRC ?? 'src',
  records: RECORDS,
  scopes: SCOPES,
  appends: burst.length,
  burstP50Ms: round(burstP50),
  bareP50Ms: round(bareP50),
  burstVsBare: round(burstP50 / bareP50),
  burstP90Ms: round(percentile(burst, 0.9)),
  burstCpuUsMin: round(Math.min(...burstCpu)),
  burstCpuUsMedian: round(percentile(burstCpu, 0.5)),
  bareCpuUsMin: round(Math.min(...bareCpu)),
  bareCpuUsMedian: round(percentile(bareCpu, 0.5)),
  burstThreadUsMin: round(Math.min(...burstThread)),
  burstThreadUsMedian: round(percentile(burstThread, 0.5)),
  bareThreadUsMin: round(Math.min(...bareThread)),
  bareThreadUsMedian: round(percentile(bareThread, 0.5)),
  allocatedBytesPerAppend: Math.round(percentile(allocated, 0.5)),
  scavengesPer1000: round(scavenges / burst.length * 1000),
  scavengeMsPer1000: round(scavengeMs / burst.length * 1000),
}))
// The head anchor is written up to 50 ms after the last append: let it land before the folder goes.
await sleep(100)
await store.log.settled()
rmSync(dir, { recursive: true, force: true })
