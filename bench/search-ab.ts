/**
 * Two builds of the search engine side by side in one process, query by query interleaved (the
 * order alternating), timed by this process's CPU time: an A/B on a machine shared with other
 * work. A (default: /work/main's `src/memory/search-index.ts`, or the path in `A`) and B (this
 * tree's, or `B`) each index the same BENCH_RECORDS records (default 100,000) in one scope;
 * CORPUS=workload (default: bench/workload.ts, the records and queries of `npm run bench`), log
 * (bench/search-tails.ts's notes) or varied (bench/search-corpus.ts's sentences and
 * bench/search-engine.ts's shapes). Per shape: min and median over 5 rounds of the p50 and p95
 * of BENCH_QUERIES (default 200) queries, then how many answers (ids and scores) are identical.
 * Run with `node --expose-gc --import tsx bench/search-ab.ts`.
 */
import { pathToFileURL } from 'node:url'
import type { MemoryRecord } from '../src/memory/types.ts'
import { record, varied, VOCABULARY } from './search-corpus.ts'
import { QUERIES, workloadContents } from './workload.ts'

interface Index { update(record: MemoryRecord): void; search(query: { query: string }): Array<{ record: MemoryRecord; score: number }> }
const paths = [process.env.A ?? '/work/main/src/memory/search-index.ts', process.env.B ?? new URL('../src/memory/search-index.ts', import.meta.url).pathname]
const modules = await Promise.all(paths.map(path => import(pathToFileURL(path).href) as Promise<{ createSearchIndex: () => Index }>))
const size = Number(process.env.BENCH_RECORDS ?? 100000)
const queries = Number(process.env.BENCH_QUERIES ?? 200)
const corpus = process.env.CORPUS ?? 'workload'
const ROUNDS = 5

const WORDS = ['coffee', 'tea', 'window', 'aisle', 'paris', 'lyon', 'dog', 'cat', 'music', 'jazz', 'blues', 'garden', 'python', 'rust', 'hiking', 'kayak']
const logText = (n: number) => `note ${n}: ${WORDS[n % WORDS.length]} ${WORDS[(n * 7) % WORDS.length]} ${n % 997 === 0 ? `zyzzyva${n}` : ''} ${'lorem ipsum dolor sit amet '.repeat(4)}`
const texts = corpus === 'workload' ? workloadContents(size) : Array.from({ length: size }, (_, n) => (corpus === 'log' ? logText(n) : varied(n)))
const SHAPES: Record<string, (i: number) => string> = corpus === 'workload'
  ? { common: () => QUERIES.common, rare: () => QUERIES.rare, sixWords: () => QUERIES.sixWords }
  : corpus === 'log'
    ? { common: () => 'coffee', rare: i => `zyzzyva${997 * (i % Math.max(1, Math.floor(size / 997)))}`, sixWords: i => Array.from({ length: 6 }, (_, k) => WORDS[(i + k * 5) % WORDS.length]).join(' ') }
    : {
        common: () => 'painting',
        rare: i => VOCABULARY[12000 + (i % 5000)]!,
        twoWords: i => `${VOCABULARY[40 + (i % 50)]} ${VOCABULARY[300 + (i % 50)]}`,
        sixWords: i => Array.from({ length: 6 }, (_, k) => VOCABULARY[20 + k * 97 + (i % 40)]).join(' '),
        question: () => 'What did Caroline say about the support-group in May 2023?',
      }

const indexes = modules.map(({ createSearchIndex }) => {
  const index = createSearchIndex()
  texts.forEach((content, n) => index.update(record(n, content)))
  index.search({ query: 'coffee' })
  return index
})
const cpu = (fn: () => void) => {
  const start = process.cpuUsage()
  fn()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / 1000
}
const pct = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))]!
const round = (value: number) => Math.round(value * 1000) / 1000
const result: Record<string, unknown> = { size, queries, corpus, clock: 'cpu', a: paths[0], b: paths[1] }
for (const [shape, query] of Object.entries(SHAPES)) {
  const rounds: number[][] = []
  for (let r = 0; r < ROUNDS; r++) {
    const times: number[][] = [[], []]
    for (let i = -10; i < queries; i++) {
      for (const which of (i + r) % 2 === 0 ? [0, 1] : [1, 0]) {
        const spent = cpu(() => indexes[which]!.search({ query: query(Math.abs(i)) }))
        if (i >= 0) times[which]!.push(spent)
      }
    }
    rounds.push([pct(times[0]!, 0.5), pct(times[0]!, 0.95), pct(times[1]!, 0.5), pct(times[1]!, 0.95)])
  }
  const column = (at: number) => {
    const values = rounds.map(row => row[at]!).sort((a, c) => a - c)
    return { min: round(values[0]!), median: round(values[ROUNDS >> 1]!) }
  }
  let same = 0
  for (let i = 0; i < 20; i++) {
    const [a, b] = indexes.map(index => JSON.stringify(index.search({ query: query(i) }).map(hit => [hit.record.id, hit.score])))
    if (a === b) same++
  }
  result[shape] = { aP50: column(0), aP95: column(1), bP50: column(2), bP95: column(3), identical: `${same}/20` }
}
console.log(JSON.stringify(result))
