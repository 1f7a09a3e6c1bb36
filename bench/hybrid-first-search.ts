/**
 * `npm run bench:hybrid-first-search`: the first hybrid search of a scope in a process that has
 * not read the store yet (a cold open of the JSONL store over a log with a checkpoint and a
 * vector sidecar holding every record's vector), against the first full-text search of the same
 * cold open (the part that is not vectors), in the same run.
 *
 * `--records N` (default 100,000) over `--scopes S` (default 1,000; `--scopes 1`: one scope),
 * `--dims D` (default 256) of the hashing embedder; the sidecar's lines are in write order
 * (scopes interleaved, as records arrive). `--rounds R` (default 5) cold opens per subject,
 * interleaved, each searching another scope. `--baseline <dir>`: a source tree of another
 * version (`git archive <commit> src | tar -x -C <dir>`, with `node_modules` linked beside it):
 * its store and `hybridSearch` are timed too, on the same files. Prints min and median of wall
 * and this process's CPU time, and the records embedded (0 expected: every vector is stored).
 * `--every-scope`: then, per subject and round, one cold open searching every scope once in
 * turn (the first search of each scope in a process that holds the indexes of the scopes
 * searched before it): CPU of the whole sweep and the median of the last tenth of the scopes.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { hybridSearch } from '../src/memory/hybrid-search.ts'
import { workspaceJsonlMemoryStore } from '../src/memory/stores/workspace-jsonl.ts'
import { encodeVector, normalizeVector } from '../src/search/vectors.ts'
import type { MemoryStoreAdapter, MemoryTarget } from '../src/memory/types.ts'
import { createWorkspace } from '../src/workspace/workspace.ts'
import { embeddingModelId, embeddingText } from '../src/memory/vectors-store.ts'
import { hashingEmbedder, hashingVector } from './hashing-embedder.ts'
import { rememberLog } from './import-log.ts'

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? fallback : process.argv[at + 1]!
}
const RECORDS = Number(arg('records', '100000'))
const SCOPES = Number(arg('scopes', '1000'))
const DIMENSIONS = Number(arg('dims', '256'))
const ROUNDS = Number(arg('rounds', '5'))
const BASELINE = arg('baseline', '')
const EVERY_SCOPE = process.argv.includes('--every-scope')
const WORDS = 'tea coffee hiking painting pottery camping music guitar family garden travel book movie running cooking sister brother school work city beach mountain river dinner lunch friend dog cat car train plane'.split(' ')
let seed = 11
const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
const pick = () => WORDS[Math.floor(random() * WORDS.length)]!
const targetOf = (i: number): MemoryTarget => ({ store: 'agent', scope: { agent: 'bench', user: `u${i % SCOPES}` } })
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

interface Tree {
  createWorkspace: typeof createWorkspace
  workspaceJsonlMemoryStore: typeof workspaceJsonlMemoryStore
  hybridSearch: typeof hybridSearch
}
const current: Tree = { createWorkspace, workspaceJsonlMemoryStore, hybridSearch }
const load = async (dir: string): Promise<Tree> => ({
  ...(await import(pathToFileURL(join(dir, 'src/workspace/workspace.ts')).href)),
  ...(await import(pathToFileURL(join(dir, 'src/memory/stores/workspace-jsonl.ts')).href)),
  ...(await import(pathToFileURL(join(dir, 'src/memory/hybrid-search.ts')).href)),
}) as Tree
const before = BASELINE ? await load(BASELINE) : undefined

const dir = mkdtempSync(join(tmpdir(), 'vam-hybrid-first-'))
try {
  const log = await rememberLog(RECORDS, targetOf, i => `User enjoys ${pick()} and ${pick()} with a ${pick()} near the ${pick()} on the weekend, note ${i}`)
  const workspace = createWorkspace({ dir })
  await workspace.append('memory:memory.jsonl', log)
  const fill = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace, writable: true })
  const records = (await Promise.all(Array.from({ length: SCOPES }, (_, s) => fill.export(targetOf(s))))).flat()
  records.sort((a, b) => a.createdAt.localeCompare(b.createdAt))
  const model = embeddingModelId(hashingEmbedder(DIMENSIONS))
  // The sidecar in write order: the vectors of the scopes interleaved, as records arrive.
  for (let at = 0; at < records.length; at += 1024) {
    const lines = records.slice(at, at + 1024).map(record => `${JSON.stringify({ dims: DIMENSIONS, id: record.id, model, vector: encodeVector(normalizeVector(hashingVector(embeddingText(record), DIMENSIONS))) })}\n`)
    await workspace.append('memory:memory.jsonl.vectors', lines.join(''))
  }
  if (!(await fill.log.checkpoint())) throw new Error('no checkpoint written')
  const sizes = ['memory.jsonl', 'memory.jsonl.checkpoint', 'memory.jsonl.vectors'].map(name => `${name} ${(statSync(join(dir, 'memory', name)).size / 1e6).toFixed(0)} MB`).join(', ')

  interface Subject { name: string; search: (tree: Tree, adapter: MemoryStoreAdapter, target: MemoryTarget, embedder: ReturnType<typeof hashingEmbedder>) => Promise<unknown>; tree: Tree }
  const subjects: Subject[] = [
    { name: 'hybrid, first search', tree: current, search: (tree, adapter, target, embedder) => tree.hybridSearch(adapter, target, { query: 'hiking in the mountain', limit: 10 }, { model: embedder }) },
    ...(before ? [{ name: 'hybrid, first search, before (baseline tree)', tree: before, search: (tree: Tree, adapter: MemoryStoreAdapter, target: MemoryTarget, embedder: ReturnType<typeof hashingEmbedder>) => tree.hybridSearch(adapter, target, { query: 'hiking in the mountain', limit: 10 }, { model: embedder }) }] : []),
    { name: 'full text only, first search', tree: current, search: (_tree, adapter, target) => adapter.search(target, { query: 'hiking in the mountain', limit: 10 }) },
  ]
  const taken = new Map(subjects.map(({ name }) => [name, { wall: [] as number[], cpu: [] as number[], embedded: 0 }]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const subject of round % 2 === 0 ? subjects : [...subjects].reverse()) {
      // A cold open: a new workspace object has no log state, no vector cache and no line index.
      const adapter = subject.tree.workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: subject.tree.createWorkspace({ dir }), writable: true })
      const embedder = hashingEmbedder(DIMENSIONS)
      const target = targetOf(round * 7 + 3)
      const cpu = process.cpuUsage()
      const start = performance.now()
      await subject.search(subject.tree, adapter, target, embedder)
      const wall = performance.now() - start
      const used = process.cpuUsage(cpu)
      const row = taken.get(subject.name)!
      row.wall.push(wall)
      row.cpu.push((used.user + used.system) / 1000)
      row.embedded += embedder.embedded
    }
  }
  console.log(`first search of a scope after a cold open: ${RECORDS} records in ${SCOPES} scope(s), ${DIMENSIONS} dimensions, ${ROUNDS} interleaved rounds (${sizes})`)
  console.log('| subject | wall min / median (ms) | CPU min / median (ms) | texts embedded (all rounds) |')
  console.log('| --- | --- | --- | --- |')
  for (const { name } of subjects) {
    const { wall, cpu, embedded } = taken.get(name)!
    console.log(`| ${name} | ${Math.min(...wall).toFixed(0)} / ${median(wall).toFixed(0)} | ${Math.min(...cpu).toFixed(0)} / ${median(cpu).toFixed(0)} | ${embedded} |`)
  }
  if (EVERY_SCOPE) {
    const hybrid = subjects.filter(subject => subject.name.startsWith('hybrid'))
    const sweeps = new Map(hybrid.map(({ name }) => [name, { total: [] as number[], tail: [] as number[] }]))
    for (let round = 0; round < ROUNDS; round++) {
      for (const subject of round % 2 === 0 ? hybrid : [...hybrid].reverse()) {
        const adapter = subject.tree.workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: subject.tree.createWorkspace({ dir }), writable: true })
        const embedder = hashingEmbedder(DIMENSIONS)
        const each: number[] = []
        for (let scope = 0; scope < SCOPES; scope++) {
          const cpu = process.cpuUsage()
          await subject.search(subject.tree, adapter, targetOf(scope), embedder)
          const used = process.cpuUsage(cpu)
          each.push((used.user + used.system) / 1000)
        }
        const row = sweeps.get(subject.name)!
        row.total.push(each.reduce((sum, value) => sum + value, 0))
        row.tail.push(median(each.slice(-Math.max(1, Math.floor(SCOPES / 10)))))
      }
    }
    console.log(`\nevery scope searched once in turn after one cold open, ${ROUNDS} interleaved rounds`)
    console.log('| subject | sweep CPU min / median (ms) | last tenth of the scopes: median search CPU, min / median over rounds (ms) |')
    console.log('| --- | --- | --- |')
    for (const { name } of hybrid) {
      const { total, tail } = sweeps.get(name)!
      console.log(`| ${name} | ${Math.min(...total).toFixed(0)} / ${median(total).toFixed(0)} | ${Math.min(...tail).toFixed(2)} / ${median(tail).toFixed(2)} |`)
    }
  }
}
finally {
  rmSync(dir, { recursive: true, force: true })
}
