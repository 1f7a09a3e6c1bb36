/**
 * Focused benchmark of the log engine's cold open and first search (issue 3, "Benchmark"): fills
 * one log of BENCH_RECORDS records (default 100,000) in BENCH_SCOPES scopes (default 1), runs one
 * search per scope (so every partition's index exists, as in a store in use), writes a checkpoint
 * (timed: it holds the log's lock), then times a fresh open from that checkpoint and its first
 * search ("replay + index"), the same without checkpoints (full replay, index built by the first
 * search), later searches, and heap beyond content with every partition's index built.
 * Run with `node --expose-gc --import tsx bench/open.ts`.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { workspaceJsonlMemoryStore } from '../src/memory/stores/workspace-jsonl.ts'
import { createWorkspace } from '../src/workspace/workspace.ts'

const size = Number(process.env.BENCH_RECORDS ?? 100000)
const scopes = Number(process.env.BENCH_SCOPES ?? 1)
const WORDS = ['coffee', 'tea', 'window', 'aisle', 'paris', 'lyon', 'dog', 'cat', 'music', 'jazz', 'blues', 'garden', 'python', 'rust', 'hiking', 'kayak']
const content = (n: number) => `note ${n}: ${WORDS[n % WORDS.length]} ${WORDS[(n * 7) % WORDS.length]} ${n % 997 === 0 ? `zyzzyva${n}` : ''} ${'lorem ipsum dolor sit amet '.repeat(4)}`
const scopeOf = (n: number) => ({ agent: 'bench', user: `u${n % scopes}` })
const dir = mkdtempSync(join(tmpdir(), 'vam-open-'))
// Checkpoints only when asked for below: the fill's own threshold checkpoints would race the timed opens.
const fill = workspaceJsonlMemoryStore({ checkpointEvery: 10 * size }).create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
let id = ''
for (let n = 0; n < size; n++) {
  const record = await fill.append({ store: 'agent', scope: scopeOf(n) }, { kind: 'semantic', content: content(n) }, { audit: { via: 'api' } })
  if (n === 0) id = record.id
}
for (let s = 0; s < scopes; s++) await fill.search({ store: 'agent', scope: scopeOf(s) }, { query: 'coffee' })
let start = performance.now()
await fill.log.checkpoint()
const checkpointWriteMs = Math.round(performance.now() - start)
const checkpointBytesPerRecord = Math.round(statSync(join(dir, 'memory/memory.jsonl.checkpoint')).size / size)

/** Cold open of a new workspace object (first read), then its first search. */
async function coldOpen(checkpointEvery?: false) {
  global.gc?.()
  const started = performance.now()
  const engine = workspaceJsonlMemoryStore(checkpointEvery === false ? { checkpointEvery } : { checkpointEvery: 10 * size }).create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
  await engine.read({ store: 'agent', scope: scopeOf(0) }, id)
  const open = performance.now() - started
  const searched = performance.now()
  await engine.search({ store: 'agent', scope: scopeOf(0) }, { query: 'coffee' })
  const first = performance.now() - searched
  return { engine, open: Math.round(open), first: Math.round(first) }
}

// Heap first, while no other engine is alive: a full replay with every partition's index built.
global.gc?.()
const heapBefore = process.memoryUsage().heapUsed
let measured: Awaited<ReturnType<typeof coldOpen>> | undefined = await coldOpen(false)
for (let s = 1; s < scopes; s++) await measured.engine.search({ store: 'agent', scope: scopeOf(s) }, { query: 'coffee' })
const times: number[] = []
for (let i = 0; i < 200; i++) {
  const t = performance.now()
  await measured.engine.search({ store: 'agent', scope: scopeOf(i) }, { query: WORDS[i % WORDS.length]! })
  times.push(performance.now() - t)
}
times.sort((a, b) => a - b)
global.gc?.()
const heap = (process.memoryUsage().heapUsed - heapBefore - size * Buffer.byteLength(content(1))) / size
measured = undefined
// Then the timed opens, each in a collected heap.
const { open: checkpointOpen, first: checkpointFirst } = await coldOpen()
const { open: replayOpen, first: replayFirst } = await coldOpen(false)
console.log(JSON.stringify({
  size,
  scopes,
  checkpointWriteMs,
  checkpointBytesPerRecord,
  checkpointOpenMs: checkpointOpen,
  checkpointFirstSearchMs: checkpointFirst,
  checkpointOpenWithIndexMs: checkpointOpen + checkpointFirst,
  openMs: replayOpen,
  firstSearchMs: replayFirst,
  coldOpenWithIndexMs: replayOpen + replayFirst,
  searchP50: times[100]!.toFixed(3),
  searchP95: times[190]!.toFixed(3),
  heapBytesPerRecordBeyondContent: Math.round(heap),
}))
rmSync(dir, { recursive: true, force: true })
