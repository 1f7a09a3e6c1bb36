/**
 * `npx tsx bench/hybrid-first-search-stages.ts`: where the first hybrid search of one large scope
 * goes after a cold open, stage by stage, in this process's CPU time (bench/hybrid-first-search.ts
 * times the whole search). The same files as that bench (`--records N`, default 100,000, in one
 * scope, `--dims D`, default 256); a first cold process stores the scope's vector block, then
 * `--rounds R` (default 5) cold opens each run the stages in order:
 * - `changes`: the scope's active records (`adapter.changes`, the log's replay from its checkpoint);
 * - `fetch`: their vectors from the store (`RecordVectors.ensure`: the line index and the block);
 * - `index`: the partition's vector index built from them (`RecordVectors.index`);
 * - `search`: the query embedded and the exact scan (`RecordVectors.search`);
 * - `full text`: the first full-text search of the same cold open.
 * Prints min and median per stage.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hybridSearch } from '../src/memory/hybrid-search.ts'
import { workspaceJsonlMemoryStore } from '../src/memory/stores/workspace-jsonl.ts'
import { encodeVector, normalizeVector } from '../src/search/vectors.ts'
import type { MemoryTarget } from '../src/memory/types.ts'
import { createWorkspace } from '../src/workspace/workspace.ts'
import { embeddingModelId, embeddingText, recordVectors } from '../src/memory/vectors-store.ts'
import { partitionKey } from '../src/memory/records.ts'
import { hashingEmbedder, hashingVector } from './hashing-embedder.ts'
import { rememberLog } from './import-log.ts'

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? fallback : process.argv[at + 1]!
}
const RECORDS = Number(arg('records', '100000'))
const DIMENSIONS = Number(arg('dims', '256'))
const ROUNDS = Number(arg('rounds', '5'))
const WORDS = 'tea coffee hiking painting pottery camping music guitar family garden travel book movie running cooking sister brother school work city beach mountain river dinner lunch friend dog cat car train plane'.split(' ')
let seed = 11
const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
const pick = () => WORDS[Math.floor(random() * WORDS.length)]!
const target: MemoryTarget = { store: 'agent', scope: { agent: 'bench', user: 'u0' } }
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const cpuMs = (from: NodeJS.CpuUsage) => { const used = process.cpuUsage(from); return (used.user + used.system) / 1000 }

const dir = mkdtempSync(join(tmpdir(), 'vam-hybrid-stages-'))
try {
  const workspace = createWorkspace({ dir })
  await workspace.append('memory:memory.jsonl', await rememberLog(RECORDS, () => target, i => `User enjoys ${pick()} and ${pick()} with a ${pick()} near the ${pick()} on the weekend, note ${i}`))
  const fill = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace, writable: true })
  const records = await fill.export(target)
  const model = embeddingModelId(hashingEmbedder(DIMENSIONS))
  for (let at = 0; at < records.length; at += 1024) {
    const lines = records.slice(at, at + 1024).map(record => `${JSON.stringify({ dims: DIMENSIONS, id: record.id, model, vector: encodeVector(normalizeVector(hashingVector(embeddingText(record), DIMENSIONS))) })}\n`)
    await workspace.append('memory:memory.jsonl.vectors', lines.join(''))
  }
  if (!(await fill.log.checkpoint())) throw new Error('no checkpoint written')
  // A first cold process reads the lines and stores the scope's block.
  const first = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
  await hybridSearch(first, target, { query: 'hiking in the mountain', limit: 10 }, { model: hashingEmbedder(DIMENSIONS) })
  const stages = ['changes', 'fetch', 'index', 'search', 'full text'] as const
  const taken = new Map<string, number[]>(stages.map(stage => [stage, []]))
  for (let round = 0; round < ROUNDS; round++) {
    const adapter = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
    const vectors = recordVectors(adapter.vectors!, hashingEmbedder(DIMENSIONS))
    const partition = partitionKey(target.store, target.scope)
    let at = process.cpuUsage()
    const changes = await adapter.changes!(target, undefined)
    taken.get('changes')!.push(cpuMs(at))
    at = process.cpuUsage()
    await vectors.ensure(changes.records, undefined, partition)
    taken.get('fetch')!.push(cpuMs(at))
    at = process.cpuUsage()
    vectors.index(partition, changes.records)
    taken.get('index')!.push(cpuMs(at))
    at = process.cpuUsage()
    const query = await vectors.query('hiking in the mountain')
    await vectors.search(partition, query, 100, { accept: () => true, ids: () => [] })
    taken.get('search')!.push(cpuMs(at))
    at = process.cpuUsage()
    await adapter.search(target, { query: 'hiking in the mountain', limit: 100 })
    taken.get('full text')!.push(cpuMs(at))
  }
  console.log(`first hybrid search of one scope of ${RECORDS} records after a cold open, by stage (${DIMENSIONS} dimensions, ${ROUNDS} rounds, CPU ms)`)
  console.log('| stage | CPU min / median (ms) |')
  console.log('| --- | --- |')
  for (const stage of stages) console.log(`| ${stage} | ${Math.min(...taken.get(stage)!).toFixed(0)} / ${median(taken.get(stage)!).toFixed(0)} |`)
}
finally {
  rmSync(dir, { recursive: true, force: true })
}
