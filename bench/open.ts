/**
 * Focused benchmark of the log engine's cold open and first search (issue 3, "Benchmark"): fills
 * one log of BENCH_RECORDS records (default 100,000) in BENCH_SCOPES scopes (default 1), then
 * times a fresh open (replay), the first search (lazy index build of one partition), later
 * searches, and heap beyond content with every partition's index built. Run with
 * `node --expose-gc --import tsx bench/open.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
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
const fill = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
let id = ''
for (let n = 0; n < size; n++) {
  const record = await fill.append({ store: 'agent', scope: scopeOf(n) }, { kind: 'semantic', content: content(n) }, { audit: { via: 'api' } })
  if (n === 0) id = record.id
}
global.gc?.()
const heapBefore = process.memoryUsage().heapUsed
let start = performance.now()
const engine = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
await engine.read({ store: 'agent', scope: scopeOf(0) }, id)
const open = performance.now() - start
start = performance.now()
await engine.search({ store: 'agent', scope: scopeOf(0) }, { query: 'coffee' })
const first = performance.now() - start
for (let s = 1; s < scopes; s++) await engine.search({ store: 'agent', scope: scopeOf(s) }, { query: 'coffee' })
const times: number[] = []
for (let i = 0; i < 200; i++) {
  const t = performance.now()
  await engine.search({ store: 'agent', scope: scopeOf(i) }, { query: WORDS[i % WORDS.length]! })
  times.push(performance.now() - t)
}
times.sort((a, b) => a - b)
global.gc?.()
const heap = (process.memoryUsage().heapUsed - heapBefore - size * Buffer.byteLength(content(1))) / size
console.log(JSON.stringify({ size, scopes, openMs: Math.round(open), firstSearchMs: Math.round(first), searchP50: times[100]!.toFixed(3), searchP95: times[190]!.toFixed(3), heapBytesPerRecordBeyondContent: Math.round(heap) }))
rmSync(dir, { recursive: true, force: true })
