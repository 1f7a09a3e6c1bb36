/**
 * The search engine's query shapes at 100,000 records (issues 13 and 17): p50/p95 of common-term,
 * rare-term, two-word, six-word and question queries, in one scope and in 1,000 scopes of 100
 * records, and the cold first search of a 100-record scope (index build + search). Indexes are
 * `createSearchIndex()` of the memory layer with default options, over the varied sentences of
 * bench/search-corpus.ts. SEARCH_MODULE (a path) swaps in another build of the engine to compare;
 * SEARCH_OPTIONS (JSON) passes index options (say, levers off);
 * BENCH_RECORDS (default 100,000) and BENCH_QUERIES (default 200) shorten it; BENCH_CLOCK=cpu times
 * each operation by this process's CPU time instead of wall time (for a machine shared with other work).
 * Run with `node --expose-gc --import tsx bench/search-engine.ts`.
 */
import { createHash } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import type { MemoryRecord } from '../src/memory/types.ts'
import { record, varied, VOCABULARY } from './search-corpus.ts'
import { cpuClock, time } from './timing.ts'

interface Index { update(record: MemoryRecord): void; search(query: { query: string; limit?: number }): Array<{ record: MemoryRecord; score: number }> }
const modulePath = process.env.SEARCH_MODULE ?? new URL('../src/memory/search-index.ts', import.meta.url).pathname
const { createSearchIndex: create } = await import(pathToFileURL(modulePath).href) as { createSearchIndex: (options?: object) => Index }
const options = JSON.parse(process.env.SEARCH_OPTIONS ?? '{}') as object
const createSearchIndex = () => create(options)

const size = Number(process.env.BENCH_RECORDS ?? 100000)
const queries = Number(process.env.BENCH_QUERIES ?? 200)
const SCOPE_SIZE = 100
const pct = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))]!
const round = (value: number) => Math.round(value * 1000) / 1000

// Query shapes: a word of every third record, a word of a few records, two mid words, six words of
// the vocabulary's middle, and a question of common words as a user would type it.
const SHAPES: Record<string, (i: number) => string> = {
  common: () => 'painting',
  rare: i => VOCABULARY[12000 + (i % 5000)]!,
  twoWords: i => `${VOCABULARY[40 + (i % 50)]} ${VOCABULARY[300 + (i % 50)]}`,
  sixWords: i => Array.from({ length: 6 }, (_, k) => VOCABULARY[20 + k * 97 + (i % 40)]).join(' '),
  question: () => "What did Caroline say about the support-group in May 2023?",
}

const fingerprint = createHash('sha256')
const result: Record<string, unknown> = { size, queries, clock: cpuClock ? 'cpu' : 'wall', options, module: modulePath.replace(/.*\/(src\/)/, '$1') }

// One scope holding all records.
{
  const index = createSearchIndex()
  for (let n = 0; n < size; n++) index.update(record(n, varied(n)))
  result.oneScopeBuildMs = round(time(() => index.search({ query: 'painting' })))
  const rows: Record<string, { p50: number; p95: number }> = {}
  for (const [shape, query] of Object.entries(SHAPES)) {
    for (let i = 0; i < 20; i++) index.search({ query: query(i) })
    const times: number[] = []
    for (let i = 0; i < queries; i++) {
      let hits: Array<{ record: MemoryRecord; score: number }> = []
      times.push(time(() => { hits = index.search({ query: query(i) }) }))
      if (i < 5) for (const hit of hits) fingerprint.update(`${hit.record.id}:${hit.score};`)
    }
    rows[shape] = { p50: round(pct(times, 0.5)), p95: round(pct(times, 0.95)) }
  }
  result.oneScope = rows
}
global.gc?.()

// 1,000 scopes of 100 records: the cold first search of each, then the query shapes in random scopes.
{
  const scopes = Math.max(1, Math.floor(size / SCOPE_SIZE))
  const indexes: Index[] = []
  const cold: number[] = []
  for (let s = 0; s < scopes; s++) {
    const index = createSearchIndex()
    for (let k = 0; k < SCOPE_SIZE; k++) {
      const n = s * SCOPE_SIZE + k
      index.update(record(n, varied(n), { agent: `bench${s}` }))
    }
    cold.push(time(() => index.search({ query: 'painting' })))
    indexes.push(index)
  }
  result.cold100 = { p50: round(pct(cold, 0.5)), p95: round(pct(cold, 0.95)), allScopesMs: Math.round(cold.reduce((a, b) => a + b, 0)) }
  const rows: Record<string, { p50: number; p95: number }> = {}
  let seed = 11
  const pick = () => indexes[(seed = (seed * 1103515245 + 12345) >>> 0) % indexes.length]!
  for (const [shape, query] of Object.entries(SHAPES)) {
    for (let i = 0; i < 20; i++) pick().search({ query: query(i) })
    const times: number[] = []
    for (let i = 0; i < queries; i++) {
      const index = pick()
      times.push(time(() => index.search({ query: query(i) })))
    }
    rows[shape] = { p50: round(pct(times, 0.5)), p95: round(pct(times, 0.95)) }
  }
  result.scopes1000 = rows
}
result.fingerprint = fingerprint.digest('hex').slice(0, 16)
console.log(JSON.stringify(result))
