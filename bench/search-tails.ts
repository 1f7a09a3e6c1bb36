/**
 * `npm run bench:search`: the query tails of issue 13 in a short loop. BENCH_RECORDS records
 * (default 100,000) in two shapes, one scope and scopes of 100, searched with common-term,
 * rare-term and six-word queries by the engine (`createSearchIndex()` of the memory layer, default
 * options: every ranking lever on), an FTS5 table (bench/baselines/fts5.ts, the better of its two
 * layouts per row) and MiniSearch (bench/baselines/minisearch.ts, one index per scope), the three
 * interleaved query by query so they see the same machine. Prints p50 / p95 per engine and the
 * ratio of the engine's p95 to the better baseline's.
 *
 * CORPUS=log (default) is the text of bench/log.ts (short notes of 16 words with filler);
 * CORPUS=varied the varied sentences of bench/search-corpus.ts. SEARCH_MODULE (a path) swaps in
 * another build of the engine; BENCH_QUERIES (default 200) queries per shape; BENCH_CLOCK=cpu
 * times each query by this process's CPU time instead of wall time (a machine shared with other
 * work preempts a query for whole time slices, which wall-clock tails then show).
 * Run with `node --expose-gc --import tsx bench/search-tails.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { MemoryRecord } from '../src/memory/types.ts'
import { openFts5Baseline, type Fts5Baseline } from './baselines/fts5.ts'
import { createMiniSearchBaseline } from './baselines/minisearch.ts'
import { record, varied, VOCABULARY } from './search-corpus.ts'
import { cpuClock, time } from './timing.ts'

interface Index { update(record: MemoryRecord): void; search(query: { query: string; limit?: number }): unknown[] }
const modulePath = process.env.SEARCH_MODULE ?? new URL('../src/memory/search-index.ts', import.meta.url).pathname
const { createSearchIndex } = await import(pathToFileURL(modulePath).href) as { createSearchIndex: () => Index }

const size = Number(process.env.BENCH_RECORDS ?? 100000)
const queries = Number(process.env.BENCH_QUERIES ?? 200)
const corpus = process.env.CORPUS ?? 'log'
const SCOPE_SIZE = 100

// bench/log.ts's records, word for word.
const WORDS = ['coffee', 'tea', 'window', 'aisle', 'paris', 'lyon', 'dog', 'cat', 'music', 'jazz', 'blues', 'garden', 'python', 'rust', 'hiking', 'kayak']
const logText = (n: number) => `note ${n}: ${WORDS[n % WORDS.length]} ${WORDS[(n * 7) % WORDS.length]} ${n % 997 === 0 ? `zyzzyva${n}` : ''} ${'lorem ipsum dolor sit amet '.repeat(4)}`
const text = corpus === 'varied' ? varied : logText
const SHAPES: Record<string, (i: number) => string> = corpus === 'varied'
  ? {
      common: () => 'painting',
      rare: i => VOCABULARY[12000 + (i % 5000)]!,
      sixWords: i => Array.from({ length: 6 }, (_, k) => VOCABULARY[20 + k * 97 + (i % 40)]).join(' '),
    }
  : {
      common: () => 'coffee',
      rare: i => `zyzzyva${997 * (i % Math.max(1, Math.floor(size / 997)))}`,
      sixWords: i => Array.from({ length: 6 }, (_, k) => WORDS[(i + k * 5) % WORDS.length]).join(' '),
    }

const pct = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))]!
const round = (value: number) => Math.round(value * 1000) / 1000
const dir = mkdtempSync(join(tmpdir(), 'vam-search-tails-'))
const result: Record<string, unknown> = { size, queries, corpus, clock: cpuClock ? 'cpu' : 'wall', module: modulePath.replace(/.*\/(src\/)/, '$1') }

for (const [shapeName, scopes] of [['oneScope', 1], ['scopes', Math.max(1, Math.floor(size / SCOPE_SIZE))]] as const) {
  const scopeOf = (n: number) => scopes === 1 ? 'u0' : `u${Math.floor(n / SCOPE_SIZE)}`
  const indexes = new Map<string, Index>()
  const mini = createMiniSearchBaseline()
  const fts: Fts5Baseline[] = [openFts5Baseline(join(dir, `${shapeName}-column.db`), 'column'), openFts5Baseline(join(dir, `${shapeName}-token.db`), 'token')]
  const rows = Array.from({ length: size }, (_, n) => ({ scope: scopeOf(n), content: text(n) }))
  for (const [n, row] of rows.entries()) {
    let index = indexes.get(row.scope)
    if (!index) indexes.set(row.scope, index = createSearchIndex())
    index.update(record(n, row.content, { agent: 'bench', user: row.scope }))
    mini.insert(row.scope, row.content)
  }
  for (const db of fts) db.load(rows)
  // Every index built before timing (first searches are bench/index-build.ts's subject).
  for (const index of indexes.values()) index.search({ query: 'coffee' })
  const scopeNames = [...indexes.keys()]
  const out: Record<string, Record<string, { p50: number; p95: number }>> = {}
  for (const [shape, query] of Object.entries(SHAPES)) {
    const engine: number[] = []
    const ftsTimes: number[][] = fts.map(() => [])
    const miniTimes: number[] = []
    let seed = 11
    for (let i = -20; i < queries; i++) {
      const scope = scopeNames[(seed = (seed * 1103515245 + 12345) >>> 0) % scopeNames.length]!
      const q = query(Math.abs(i))
      const e = time(() => indexes.get(scope)!.search({ query: q }))
      const f = fts.map(db => time(() => db.search(scope, q)))
      const m = time(() => mini.search(scope, q))
      if (i < 0) continue
      engine.push(e)
      f.forEach((value, at) => ftsTimes[at]!.push(value))
      miniTimes.push(m)
    }
    const summary = (values: number[]) => ({ p50: round(pct(values, 0.5)), p95: round(pct(values, 0.95)) })
    const ftsBest = ftsTimes.map(summary).sort((a, c) => a.p95 - c.p95)[0]!
    const rowOut = { engine: summary(engine), fts5: ftsBest, minisearch: summary(miniTimes) }
    out[shape] = { ...rowOut, engineVsBestBaseline: { p50: round(rowOut.engine.p50 / Math.min(ftsBest.p50, rowOut.minisearch.p50)), p95: round(rowOut.engine.p95 / Math.min(ftsBest.p95, rowOut.minisearch.p95)) } }
  }
  result[shapeName] = out
  for (const db of fts) db.close()
  global.gc?.()
}
rmSync(dir, { recursive: true, force: true })
console.log(JSON.stringify(result))
