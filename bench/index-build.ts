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
import type { MemoryRecord } from '../src/memory/types.ts'

const size = Number(process.env.BENCH_RECORDS ?? 100000)
const runs = Number(process.env.BENCH_RUNS ?? 5)
const WORDS = ['coffee', 'tea', 'window', 'aisle', 'paris', 'lyon', 'dog', 'cat', 'music', 'jazz', 'blues', 'garden', 'python', 'rust', 'hiking', 'kayak']
const synthetic = (n: number) => `note ${n}: ${WORDS[n % WORDS.length]} ${WORDS[(n * 7) % WORDS.length]} ${n % 997 === 0 ? `zyzzyva${n}` : ''} ${'lorem ipsum dolor sit amet '.repeat(4)}`
// Varied sentences (~130 characters): mixed case, apostrophes, numbers, punctuation, a large vocabulary.
const VOCABULARY = Array.from({ length: 20000 }, (_, i) => {
  let word = ''
  for (let x = i * 2654435761 >>> 0, k = 0; k < 3 + (i % 7); k++, x = (x * 1103515245 + 12345) >>> 0) word += 'etaoinshrdlcumwfgypbvkjxqz'[(x >>> 16) % (k === 0 ? 26 : 14)]
  return word
})
const COMMON = ['the', 'I', 'my', 'we', 'Caroline\'s', 'didn\'t', 'went', 'to', 'and', 'a', 'with', 'on', 'May', '2023,', 'painting', 'LGBTQ', 'support-group', '3.5', 'o\'clock']
const varied = (n: number) => {
  const words: string[] = []
  let x = (n * 2246822519) >>> 0
  for (let length = 0; length < 130;) {
    x = (x * 1664525 + 1013904223) >>> 0
    const word = x % 3 === 0 ? COMMON[(x >>> 8) % COMMON.length]! : VOCABULARY[Math.floor(((x >>> 8) / 0xffffff) ** 2 * VOCABULARY.length)]!
    const cased = x % 11 === 0 ? word[0]!.toUpperCase() + word.slice(1) : word
    words.push(x % 13 === 0 ? `${cased}.` : cased)
    length += cased.length + 1
  }
  return words.join(' ')
}
const record = (n: number, content: string): MemoryRecord => ({
  id: `mem_${n}`, store: 'agent', scope: { agent: 'bench' }, kind: 'semantic', content, title: n % 5 === 0 ? `Title ${n % 50}` : undefined,
  tags: n % 3 === 0 ? ['travel', `t${n % 10}`] : [], metadata: {}, pinned: false, supersedes: [], provenance: {}, audit: { via: 'api' },
  createdAt: new Date(Date.UTC(2024, 0, 1) + n * 1000).toISOString(), updatedAt: '2024-01-01T00:00:00.000Z', version: 1, status: 'active',
})

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
