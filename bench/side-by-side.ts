/**
 * The issue-13 rows of `npm run bench`: the workspace JSONL store next to an FTS5 table (both
 * layouts of bench/baselines/fts5.ts) and MiniSearch (one index per scope,
 * bench/baselines/minisearch.ts), on the same records in the same process.
 *
 * Per subject: cold open -> first search in one scope, heap per record after it (every other
 * scope untouched), first search in every scope (and per scope: the first search in a cold
 * scope, issue 13's 1 ms target), the first searches of each query shape (mean and slowest of a
 * warm-up run for every subject alike, {@link warmUpSearches}), search p50 / p95 of the three query
 * shapes after it (interleaved rounds over all subjects, {@link searchPlan}; min and median of the
 * round figures), the isolated
 * append (one write after an idle turn of `IDLE_MS`) and the burst append (back to back, next to
 * a bare `appendFileSync` of a log line, alternating in blocks of 100), and bytes on disk per
 * record (JSONL: log + checkpoint + head; FTS5: the database after close; MiniSearch: none).
 * Not measured (NaN): the FTS5 column layout's first search in every scope beyond 100 scopes.
 */
import { appendFileSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { workspaceJsonlMemoryStore } from '../src/memory/stores/workspace-jsonl.ts'
import { createWorkspace } from '../src/workspace/workspace.ts'
import { openFts5Baseline } from './baselines/fts5.ts'
import { createMiniSearchBaseline } from './baselines/minisearch.ts'
import { percentile, QUERIES, round3, scopeUser, since } from './workload.ts'

/** Idle time before each isolated append (one remember per model turn), ms. */
const IDLE_MS = 10
const ISOLATED_APPENDS = 100
const BURST_APPENDS = 500

/**
 * The search rounds of a shape: in 1,000 scopes, 5 rounds of 200 searches per subject and query
 * (a p95 of 100 searches is their 6th slowest: one preemption or GC pause more or less moves it);
 * in one scope, where a MiniSearch or FTS5 search takes 50-250 ms, 3 rounds of 100.
 */
export function searchPlan(scopes: number): { rounds: number; searches: number } {
  return scopes > 1 ? { rounds: 5, searches: 200 } : { rounds: 3, searches: 100 }
}

/**
 * Untimed-for-the-rounds searches per subject and shape before round 1: in one scope our first
 * ~20 six-word searches take 5-80 ms each (the search code is compiled as it runs); 30 covers them.
 */
const WARM_UP_SEARCHES = 30

interface Opened {
  search(user: string, query: string): unknown
  append(user: string, text: string): unknown
  close(): unknown
}
interface Subject {
  name: string
  open(): Promise<Opened> | Opened
  bytes: number
  /** Whether the first search in every scope is measured (the FTS5 column layout scans every match of the common term per scope: about 95 s at 100,000 records, never the better layout). */
  everyScope: boolean
}

/** Figures of one subject, by metric name. */
export type SubjectFigures = Record<string, number>

const gcHeap = () => { (globalThis as { gc?: () => void }).gc?.(); return process.memoryUsage().heapUsed }
/** A young-generation GC (`--expose-gc`): the next block starts with an empty nursery, and no full GC's sweeping runs beside it. */
export const emptyNursery = () => (globalThis as { gc?: (options: { type: 'minor' }) => void }).gc?.({ type: 'minor' })
async function timed(run: () => unknown): Promise<number> {
  const start = performance.now()
  await run()
  return since(start)
}
function diskBytes(path: string): number {
  const stat = statSync(path, { throwIfNoEntry: false })
  if (!stat) return 0
  return stat.isDirectory() ? readdirSync(path).reduce((sum, name) => sum + diskBytes(join(path, name)), 0) : stat.size
}

function subjects(dir: string, contents: readonly string[], scopes: number): Subject[] {
  const list: Subject[] = [{
    name: 'JSONL',
    bytes: diskBytes(join(dir, 'memory')),
    everyScope: true,
    open() {
      const store = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
      const target = (user: string) => ({ store: 'agent', scope: { agent: 'bench', user } })
      return {
        search: (user, query) => store.search(target(user), { query }),
        append: (user, text) => store.append(target(user), { kind: 'semantic', content: text }, { audit: { via: 'api' } }),
        close: () => {},
      }
    },
  }]
  for (const layout of ['column', 'token'] as const) {
    const file = join(dir, `fts5-${layout}.db`)
    const loader = openFts5Baseline(file, layout)
    loader.load(contents.map((content, n) => ({ scope: scopeUser(n, scopes), content })))
    loader.close()
    list.push({
      name: `FTS5 (${layout})`,
      everyScope: layout === 'token' || scopes <= 100,
      bytes: ['', '-wal', '-shm'].reduce((sum, suffix) => sum + diskBytes(file + suffix), 0),
      open() {
        const db = openFts5Baseline(file, layout)
        return { search: (user, query) => db.search(user, query), append: (user, text) => db.insert(user, text), close: () => db.close() }
      },
    })
  }
  list.push({
    name: 'MiniSearch',
    bytes: 0,
    everyScope: true,
    // Its open is the build of every scope's index from the records (it keeps nothing on disk).
    open() {
      const index = createMiniSearchBaseline()
      contents.forEach((content, n) => index.insert(scopeUser(n, scopes), content))
      return { search: (user, query) => index.search(user, query), append: (user, text) => index.insert(user, text), close: () => {} }
    },
  })
  return list
}

/** Opens, searches and writes one subject; returns its figures and the open handle. */
async function measureSubject(subject: Subject, size: number, scopes: number, contents: readonly string[], lastLine: string, bareFile: string): Promise<{ figures: SubjectFigures; opened: Opened }> {
  const figures: SubjectFigures = { bytesPerRecord: Math.round(subject.bytes / size) }
  const heapBefore = gcHeap()
  let opened!: Opened
  figures.coldOpenFirstSearchMs = await timed(async () => {
    opened = await subject.open()
    await opened.search(scopeUser(7, scopes), QUERIES.common)
  })
  figures.heapPerRecordUntouchedB = Math.round((gcHeap() - heapBefore) / size)
  figures.firstSearchEveryScopeMs = subject.everyScope ? await timed(async () => { for (let s = 0; s < scopes; s++) await opened.search(scopeUser(s, scopes), QUERIES.common) }) : Number.NaN
  // Per scope: each scope's section read and decoded, its index restored or built, one search.
  figures.firstSearchColdScopeMs = round3(figures.firstSearchEveryScopeMs / scopes)
  figures.heapPerRecordAllB = Math.round((gcHeap() - heapBefore) / size)
  const isolated: number[] = []
  for (let n = 0; n < ISOLATED_APPENDS; n++) {
    await sleep(IDLE_MS)
    isolated.push(await timed(() => opened.append(scopeUser(n, scopes), contents[n % size]!)))
  }
  figures.isolatedAppendP50Ms = percentile(isolated, 0.5)
  const burst: number[] = []
  const bare: number[] = []
  for (let block = 0; block < BURST_APPENDS; block += 100) {
    for (let n = block; n < block + 100; n++) burst.push(await timed(() => opened.append(scopeUser(n * 7, scopes), contents[(n * 7) % size]!)))
    for (let n = block; n < block + 100; n++) bare.push(await timed(() => appendFileSync(bareFile, `${lastLine}\n`)))
  }
  figures.burstAppendP50Ms = percentile(burst, 0.5)
  figures.bareAppendP50Ms = percentile(bare, 0.5)
  // From the unrounded p50s (the figures are rounded to 0.001 ms, a bare append is about 0.006 ms).
  figures.burstAppendVsBare = figures.burstAppendP50Ms / figures.bareAppendP50Ms
  return { figures, opened }
}

/**
 * Untimed searches of each shape per subject before the rounds (`BENCH_WARM_UP`, default
 * {@link WARM_UP_SEARCHES}; 0 turns it off), every subject alike: the rounds then measure searches
 * in a process that has searched before, as a server does. The first searches of a process (JIT
 * compilation of the search code, structures built on a term's first search) are not hidden: their
 * mean and slowest are figures of their own, `search<Shape>FirstMeanMs` and `search<Shape>FirstMaxMs`.
 */
async function warmUpSearches(handles: Map<string, Opened>, scopes: number): Promise<Record<string, SubjectFigures>> {
  const count = Number(process.env.BENCH_WARM_UP ?? WARM_UP_SEARCHES)
  const figures: Record<string, SubjectFigures> = {}
  if (count <= 0) return figures
  for (const [name, opened] of handles) {
    const own: SubjectFigures = (figures[name] = {})
    for (const [shape, query] of Object.entries(QUERIES)) {
      const times: number[] = []
      emptyNursery()
      // Scopes the rounds search too (round 0's first ones), so no subject meets them cold in the rounds.
      for (let n = 0; n < count; n++) times.push(await timed(() => opened.search(scopeUser(n * 37, scopes), query)))
      const key = `search${shape[0]!.toUpperCase()}${shape.slice(1)}First`
      own[`${key}MeanMs`] = times.reduce((sum, time) => sum + time, 0) / count
      own[`${key}MaxMs`] = Math.max(...times)
    }
  }
  return figures
}

/**
 * Search p50 / p95 per query shape, in interleaved rounds over every subject: min and median of
 * the rounds. Each subject's block of searches of one query starts after a young-generation GC
 * ({@link emptyNursery}), so that a block pays for its own garbage, not for the garbage of the
 * block or phase before it (another subject's, or the opens and appends above).
 */
async function searchRounds(handles: Map<string, Opened>, scopes: number, plan: { rounds: number; searches: number }): Promise<Record<string, SubjectFigures>> {
  const samples: Record<string, Record<string, number[]>> = {}
  const warmUp = await warmUpSearches(handles, scopes)
  for (let round = 0; round < plan.rounds; round++) {
    for (const [name, opened] of handles) {
      for (const [shape, query] of Object.entries(QUERIES)) {
        const times: number[] = []
        emptyNursery()
        for (let n = 0; n < plan.searches; n++) times.push(await timed(() => opened.search(scopeUser(n * 37 + round, scopes), query)))
        const bucket = (samples[name] ??= {})
        ;(bucket[`${shape}P50`] ??= []).push(percentile(times, 0.5))
        ;(bucket[`${shape}P95`] ??= []).push(percentile(times, 0.95))
      }
    }
  }
  if (process.env.BENCH_ROUND_DETAIL) for (const [name, buckets] of Object.entries(samples)) process.stderr.write(`${name} rounds: ${Object.entries(buckets).map(([key, values]) => `${key} ${values.map(round3).join(' ')}`).join('; ')}\n`)
  const figures: Record<string, SubjectFigures> = {}
  for (const [name, buckets] of Object.entries(samples)) {
    figures[name] = { ...warmUp[name] }
    for (const [key, values] of Object.entries(buckets)) {
      figures[name]![`search${key[0]!.toUpperCase()}${key.slice(1)}MsMin`] = Math.min(...values)
      figures[name]![`search${key[0]!.toUpperCase()}${key.slice(1)}MsMedian`] = percentile(values, 0.5)
    }
  }
  return figures
}

/**
 * Every subject's figures on the log at `dir`/memory/memory.jsonl (filled with `contents`, its
 * checkpoint written), in `scopes` scopes. Run before anything else appends to that log, so its
 * bytes are those of `size` records.
 */
export async function measureSideBySide(dir: string, size: number, scopes: number, contents: readonly string[], plan = searchPlan(scopes)): Promise<Record<string, SubjectFigures>> {
  const lastLine = readFileSync(join(dir, 'memory/memory.jsonl'), 'utf8').trimEnd().split('\n').at(-1)!
  const results: Record<string, SubjectFigures> = {}
  const handles = new Map<string, Opened>()
  for (const subject of subjects(dir, contents, scopes)) {
    const { figures, opened } = await measureSubject(subject, size, scopes, contents, lastLine, join(dir, 'bare.jsonl'))
    results[subject.name] = figures
    handles.set(subject.name, opened)
  }
  const searches = await searchRounds(handles, scopes, plan)
  for (const [name, opened] of handles) {
    Object.assign(results[name]!, searches[name])
    await opened.close()
    for (const [key, value] of Object.entries(results[name]!)) results[name]![key] = round3(value)
  }
  // The better FTS5 layout per figure, as the issue's tables give it.
  const fts5: SubjectFigures = {}
  for (const key of Object.keys(results['FTS5 (column)']!)) fts5[key] = Math.min(...[results['FTS5 (column)']![key]!, results['FTS5 (token)']![key]!].filter(value => !Number.isNaN(value)))
  results['FTS5 (better layout)'] = fts5
  return results
}

/** An issue-13 target: its name, the ratio (or value) measured, the bound, met or not. */
export interface TargetCheck { target: string; measured: number; bound: number; met: boolean }

/** The issue-13 targets as measured in one side-by-side run of the 1,000-scope (`many`) and one-scope (`one`) shapes. */
export function targetChecks(many: Record<string, SubjectFigures> | undefined, one: Record<string, SubjectFigures> | undefined): TargetCheck[] {
  const checks: TargetCheck[] = []
  const ratio = (figures: Record<string, SubjectFigures>, key: string, other = 'FTS5 (better layout)') => round3(figures.JSONL![key]! / Math.max(figures[other]![key]!, 1e-3))
  const add = (target: string, measured: number, bound: number) => checks.push({ target, measured, bound, met: measured <= bound })
  if (many) {
    add('1,000 scopes: cold open -> first search in one scope / FTS5', ratio(many, 'coldOpenFirstSearchMs'), 3)
    add('1,000 scopes: heap B per record, untouched scopes', many.JSONL!.heapPerRecordUntouchedB!, 200)
    add('1,000 scopes: first search in every scope / FTS5', ratio(many, 'firstSearchEveryScopeMs'), 3)
    add('1,000 scopes: first search in a cold scope ms (every scope / scopes)', many.JSONL!.firstSearchColdScopeMs!, 1)
    add('1,000 scopes: isolated append p50 / FTS5 insert', ratio(many, 'isolatedAppendP50Ms'), 2)
    add('1,000 scopes: burst append p50 / bare appendFileSync', many.JSONL!.burstAppendVsBare!, 5)
    add('1,000 scopes: log + checkpoint bytes per record / FTS5 database', ratio(many, 'bytesPerRecord'), 3)
  }
  for (const [shape, figures] of [['1,000 scopes', many], ['one scope', one]] as const) {
    if (!figures) continue
    for (const query of ['Common', 'Rare', 'SixWords']) {
      add(`${shape}: ${query} search p95 ms (median of rounds)`, figures.JSONL![`search${query}P95MsMedian`]!, 2)
      add(`${shape}: ${query} search p95 / FTS5`, ratio(figures, `search${query}P95MsMedian`), 1)
      add(`${shape}: ${query} search p95 / MiniSearch`, ratio(figures, `search${query}P95MsMedian`, 'MiniSearch'), 1)
    }
  }
  if (one) add('one scope: log + checkpoint bytes per record / FTS5 database', ratio(one, 'bytesPerRecord'), 3)
  return checks
}
