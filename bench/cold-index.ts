/**
 * The cold first search of a 100-record scope (issue 13: under 1 ms): BENCH_SCOPES (default
 * 1,000) fresh `createSearchIndex()` indexes of 100 varied records each (bench/search-corpus.ts,
 * the records of bench/search-engine.ts's cold100), each timed on its first search (the lazy build
 * and the search), by CPU time and by wall time; BENCH_ROUNDS (default 3) passes over the scopes.
 * SEARCH_MODULE_B (a path to another build's src/memory/search-index.ts) times that engine too,
 * alternating with this one scope by scope in the same process (an A/B under the same load);
 * the ratio printed is B's p50 / A's p50 per clock.
 * Run with `node --expose-gc --import tsx bench/cold-index.ts`.
 */
import { loadavg } from 'node:os'
import { pathToFileURL } from 'node:url'
import type { MemoryRecord } from '../src/memory/types.ts'
import { record, varied } from './search-corpus.ts'

interface Index { update(record: MemoryRecord): void; search(query: { query: string }): unknown[] }
type Create = () => Index
const load = async (path: string) => ((await import(pathToFileURL(path).href)) as { createSearchIndex: Create }).createSearchIndex
const subjects: Array<{ name: string; create: Create; cpu: number[]; wall: number[] }> = [
  { name: 'A', create: await load(new URL('../src/memory/search-index.ts', import.meta.url).pathname), cpu: [], wall: [] },
]
if (process.env.SEARCH_MODULE_B) subjects.push({ name: 'B', create: await load(process.env.SEARCH_MODULE_B), cpu: [], wall: [] })
const scopes = Number(process.env.BENCH_SCOPES ?? 1000)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const SCOPE_SIZE = 100

const records: MemoryRecord[][] = Array.from({ length: scopes }, (_, s) =>
  Array.from({ length: SCOPE_SIZE }, (_, k) => record(s * SCOPE_SIZE + k, varied(s * SCOPE_SIZE + k), { agent: `bench${s}` })))
let hits = 0
for (let round = 0; round < rounds; round++) {
  for (let s = 0; s < scopes; s++) {
    // Alternate which subject goes first, so that neither always follows the other's garbage.
    for (let at = 0; at < subjects.length; at++) {
      const subject = subjects[(at + s) % subjects.length]!
      const index = subject.create()
      for (const each of records[s]!) index.update(each)
      const cpu = process.cpuUsage()
      const wall = performance.now()
      hits += index.search({ query: 'painting' }).length
      subject.wall.push(performance.now() - wall)
      const used = process.cpuUsage(cpu)
      subject.cpu.push((used.user + used.system) / 1000)
    }
  }
}
const pct = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))]!
const round3 = (value: number) => Math.round(value * 1000) / 1000
const result: Record<string, unknown> = { scopes, rounds, hits, load: loadavg().map(round3) }
for (const subject of subjects) {
  result[subject.name] = { cpuP50: round3(pct(subject.cpu, 0.5)), cpuP95: round3(pct(subject.cpu, 0.95)), wallP50: round3(pct(subject.wall, 0.5)), wallP95: round3(pct(subject.wall, 0.95)) }
}
if (subjects.length === 2) {
  result.ratioBA = { cpuP50: round3(pct(subjects[1]!.cpu, 0.5) / pct(subjects[0]!.cpu, 0.5)), wallP50: round3(pct(subjects[1]!.wall, 0.5) / pct(subjects[0]!.wall, 0.5)) }
}
console.log(JSON.stringify(result))
