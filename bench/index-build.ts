/**
 * Focused benchmark of a partition's index build (issue 3, "Benchmark": cold open < 1.5 s at
 * 100k): indexes BENCH_RECORDS records (default 100,000) of one scope into a fresh
 * `createSearchIndex()` and times the build (the lazy flush on first use), median of BENCH_RUNS
 * (default 5) runs, for the synthetic text of bench/open.ts and for varied English sentences.
 * Also prints a fingerprint of search results so two versions can be compared for equal output.
 * Run with `node --expose-gc --import tsx bench/index-build.ts`.
 */
import { createHash } from 'node:crypto'
import { createSearchIndex } from '../src/memory/search-index.ts'
import { record, synthetic, varied, VOCABULARY } from './search-corpus.ts'

const size = Number(process.env.BENCH_RECORDS ?? 100000)
const runs = Number(process.env.BENCH_RUNS ?? 5)

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const result: Record<string, unknown> = { size, runs }
for (const [name, text] of [['synthetic', synthetic], ['varied', varied]] as const) {
  const records = Array.from({ length: size }, (_, n) => record(n, text(n)))
  const times: number[] = []
  let fingerprint = ''
  for (let run = 0; run < runs; run++) {
    global.gc?.()
    const index = createSearchIndex()
    for (const each of records) index.update(each)
    const start = performance.now()
    void index.size
    times.push(performance.now() - start)
    if (run === 0) {
      const hash = createHash('sha256')
      for (const query of ['coffee', 'lorem ipsum', 'Caroline', "didn't", 'painting support', '2023', 'zyzzyva997', VOCABULARY[5]!, VOCABULARY[900]!, 'eta', 'rust kayak', 'o\'clock', 'support-group']) {
        for (const hit of index.search({ query, limit: 20 })) hash.update(`${hit.record.id}:${hit.score};`)
      }
      fingerprint = hash.digest('hex').slice(0, 16)
    }
  }
  result[name] = { buildMs: Math.round(median(times)), usPerRecord: +(median(times) * 1000 / size).toFixed(2), all: times.map(Math.round), fingerprint }
}
console.log(JSON.stringify(result))
