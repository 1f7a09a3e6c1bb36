/**
 * Where the first search in a cold scope spends its CPU time, stage by stage, over every section
 * of a checkpoint made by bench/cold-scopes.ts (BENCH_DIR, required): each stage run over all
 * sections in turn (digest, inflate, unpack: the JSON of the records and the word lists, index
 * restore, search), CPU time per section (the store's own steps, the ranged read and the records
 * entering the state, are left out). Reads checkpoint version 5 and 6 sections (packed payloads)
 * and version 4 ones (JSON). Prints min and median over BENCH_RUNS (default 5) rounds.
 * BENCH_SKIP_INDEX=1 leaves out the restore and the search (for instruction counts: a run with
 * them minus one without, under `valgrind --tool=callgrind`). The checkpoint's snapshots must be
 * of this code's format.
 * Run with `BENCH_DIR=... node --expose-gc --import tsx bench/cold-scope-stages.ts`.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { inflateRawSync } from 'node:zlib'
import { unpackSection, type SectionBody } from '../src/memory/checkpoint-state.ts'
import { restoreSearchIndex, type MemorySearchIndex } from '../src/memory/search-index.ts'
import type { MemoryRecord } from '../src/memory/types.ts'
import { percentile, QUERIES, round3 } from './workload.ts'

const dir = process.env.BENCH_DIR
if (!dir) throw new Error('BENCH_DIR names the folder bench/cold-scopes.ts filled')
const runs = Number(process.env.BENCH_RUNS ?? 5)
const lines = readFileSync(join(dir, 'memory/memory.jsonl.checkpoint'), 'utf8').split('\n')
const version = (JSON.parse(lines[0]!) as { v: number }).v
const sections = lines.slice(2).filter(line => line.length > 0)
const counts = (JSON.parse(lines[1]!) as { partitions: Array<[string, number, number, number]> }).partitions.map(entry => entry[3])
const cpu = (work: () => void) => {
  global.gc?.()
  const usage = process.cpuUsage()
  work()
  const used = process.cpuUsage(usage)
  return (used.user + used.system) / 1000 / sections.length
}
/** The records of a section with their shared fields resolved (`updatedAt` 0: `createdAt`, version 5). */
const recordsOf = (body: SectionBody) => body.records.map((packed) => {
  const record: Record<string, unknown> = { ...(packed as Record<string, unknown>) }
  for (const [field, values] of Object.entries(body.values)) if (typeof record[field] === 'number') record[field] = values[record[field] as number]
  if (record.updatedAt === 0) record.updatedAt = record.createdAt
  return record as unknown as MemoryRecord
})
const figures: Record<string, number[]> = {}
const note = (name: string, ms: number) => (figures[name] ??= []).push(ms)
for (let run = 0; run < runs; run++) {
  let payloads: Uint8Array[] = []
  let bodies: SectionBody[] = []
  let indexes: MemorySearchIndex[] = []
  note('digest', cpu(() => { for (const text of sections) createHash('sha256').update(text).digest('hex') }))
  note('inflate', cpu(() => { payloads = sections.map(text => inflateRawSync(Buffer.from(text, 'base64'))) }))
  note('unpack', cpu(() => { bodies = payloads.map((payload, at) => (version >= 5 ? unpackSection(payload, String(at), counts[at]!) : JSON.parse(Buffer.from(payload).toString()) as SectionBody)) }))
  const records = bodies.map(recordsOf)
  if (process.env.BENCH_SKIP_INDEX === '1') continue
  note('restore', cpu(() => { indexes = bodies.map((body, at) => restoreSearchIndex(body.index, records[at]!)) }))
  note('search', cpu(() => { for (const index of indexes) index.search({ query: QUERIES.common }) }))
}
const stats = (values: number[]) => ({ min: round3(Math.min(...values)), median: round3(percentile(values, 0.5)) })
console.log(JSON.stringify({ version, sections: sections.length, runs, load: loadavg().map(round3), ...Object.fromEntries(Object.entries(figures).map(([name, values]) => [name, stats(values)])) }))
