import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { MockEmbeddingModelV3 } from 'ai/test'
import { afterAll, describe, expect, it } from 'vitest'
import type { AgentTool, CapabilityContext, ToolExecutionContext } from '../../src/agent/types.ts'
import { memory } from '../../src/memory/capability.ts'
import { eraseMemoryScope } from '../../src/memory/retention.ts'
import { workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryRecord, MemoryStoreOptions, MemoryVectorEntry, MemoryVectorStore } from '../../src/memory/types.ts'
import { adapterVectors, hybridSearch } from '../../src/memory/hybrid-search.ts'
import { embeddingModelId, embeddingText, memoryVectorStore, readVectorLines, recordVectors } from '../../src/memory/vectors-store.ts'
import { VECTOR_BLOCK_MIN_VECTORS } from '../../src/memory/vector-block.ts'
import { encodeVector, normalizeVector } from '../../src/search/vectors.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import { countingEmbedder, wordVector, type CountingEmbedder } from '../search/vectors-embedder.ts'

const run = promisify(execFile)
const CHILD = fileURLToPath(new URL('./vectors-child.ts', import.meta.url))
const folders: string[] = []
afterAll(() => { for (const folder of folders) rmSync(folder, { recursive: true, force: true }) })

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vam-vectors-'))
  folders.push(dir)
  return dir
}

const sidecarOf = (dir: string) => join(dir, 'memory', 'memory.jsonl.vectors')
const target = { store: 'agent', scope: { agent: 'support' } }
const audit = { via: 'api' }

/** The memory tools of one store over the workspace in `dir`, called as the host calls them (input validated first). */
async function toolsOver(dir: string, model: CountingEmbedder, extra: Partial<MemoryStoreOptions> = {}) {
  const tools: Record<string, AgentTool> = {}
  const context = {
    agent: 'support', run: { runId: 'run_1', threadId: 'thread_1' }, metadata: {},
    tools: { add(name: string, tool: AgentTool) { tools[name] = tool } }, instructions: { add() {} }, prompt: { add() {} }, messages: { transform() {} }, onFinish() {},
    workspace: createWorkspace({ dir }),
  } as unknown as CapabilityContext
  const factory = workspaceJsonlMemoryStore()
  await memory({ stores: { agent: { adapter: factory, scope: { agent: 'support' }, write: { mode: 'tool' }, embed: model, ...extra } } }).resolve(context)
  const call = async (name: string, input: unknown): Promise<any> => {
    const tool = tools[name]!
    const exec: ToolExecutionContext = { agent: 'support', runId: 'run_1', threadId: 'thread_1', toolName: name, toolCallId: 'call_1', metadata: {} }
    return tool.execute(tool.inputSchema.parse(input), exec)
  }
  const adapter = factory.create({ store: 'agent', agent: 'support', workspace: (context as unknown as { workspace: ReturnType<typeof createWorkspace> }).workspace, writable: true })
  return { call, adapter }
}

function sidecarLines(dir: string): Array<{ dims: number; id: string; model: string; vector: string }> {
  return readFileSync(sidecarOf(dir), 'utf8').split('\n').filter(Boolean).map(line => JSON.parse(line))
}

const facts = ['Caroline adopted two children last spring', 'Melanie goes surfing every weekend', 'Jon opened a dance studio downtown']

/**
 * Three remembered facts, the first erased by a process killed after the log's compaction and
 * before its sidecar rewrite (the sidecar put back as it was), and a store opened afresh over it.
 */
async function afterKilledErasure() {
  const dir = tempDir()
  const { call, adapter } = await toolsOver(dir, countingEmbedder())
  const ids: string[] = []
  for (const content of facts) ids.push((await call('memory_remember', { kind: 'semantic', content })).record.id)
  const before = readFileSync(sidecarOf(dir))
  expect(await adapter.hardDelete(target, ids[0]!, { audit })).toBe(true)
  writeFileSync(sidecarOf(dir), before)
  const { adapter: next } = await toolsOver(dir, countingEmbedder())
  return { dir, ids, next }
}

describe('durable record vectors', () => {
  it('memory_remember computes the record vector at write and stores it beside the log with the model id', async () => {
    const dir = tempDir()
    const model = countingEmbedder()
    const { call } = await toolsOver(dir, model)
    const created = await call('memory_remember', { kind: 'semantic', content: facts[0] })
    expect(created.action).toBe('created')
    expect(created.warnings).toBeUndefined()
    expect(model.batches).toEqual([[facts[0]]])
    const lines = sidecarLines(dir)
    expect(lines).toEqual([{ dims: 16, id: created.record.id, model: 'test/bag-of-words', vector: encodeVector(normalizeVector(wordVector(facts[0]!))) }])
  })

  it('a restart in a second process loads the stored vectors and embeds only the query', async () => {
    const dir = tempDir()
    const model = countingEmbedder()
    const { call } = await toolsOver(dir, model)
    const ids: string[] = []
    for (const content of facts) ids.push((await call('memory_remember', { kind: 'semantic', content })).record.id)
    const { stdout } = await run(process.execPath, ['--import', 'tsx', CHILD, dir, 'who likes surfing on weekends'], { cwd: process.cwd() })
    const child = JSON.parse(stdout) as { ids: string[]; batches: string[][] }
    expect(child.batches).toEqual([['who likes surfing on weekends']])
    expect(child.ids[0]).toBe(ids[1])
  }, 60_000)

  it('a changed embedding model embeds every record again and keeps the two models\' vectors apart', async () => {
    const dir = tempDir()
    const { call } = await toolsOver(dir, countingEmbedder())
    for (const content of facts) await call('memory_remember', { kind: 'semantic', content })
    const { stdout } = await run(process.execPath, ['--import', 'tsx', CHILD, dir, 'dance studio', 'other-model'], { cwd: process.cwd() })
    const child = JSON.parse(stdout) as { batches: string[][] }
    expect(child.batches.flat().sort()).toEqual([...facts, 'dance studio'].sort())
    const models = sidecarLines(dir).map(line => line.model)
    expect(models.filter(m => m === 'test/bag-of-words')).toHaveLength(3)
    expect(models.filter(m => m === 'test/other-model')).toHaveLength(3)
  }, 60_000)

  it('an embedder failure never loses the write, and the next search embeds the record', async () => {
    const dir = tempDir()
    const model = countingEmbedder()
    const { call } = await toolsOver(dir, model)
    model.fail = true
    const created = await call('memory_remember', { kind: 'semantic', content: facts[1] })
    expect(created.action).toBe('created')
    expect(created.warnings).toHaveLength(1)
    expect(created.warnings[0]).toMatch(/vector .* could not be computed yet .*embedding service unavailable.* the next search computes it/)
    expect((await call('memory_read', { id: created.record.id })).record.content).toBe(facts[1])
    expect(existsSync(sidecarOf(dir))).toBe(false)
    model.fail = false
    const found = await call('memory_search', { query: 'Melanie surfing' })
    expect(found.results.map((r: { id: string }) => r.id)).toEqual([created.record.id])
    expect(model.batches).toContainEqual([facts[1]])
    expect(sidecarLines(dir).map(line => line.id)).toEqual([created.record.id])
  })

  it('a search while the embedder is down answers with the full-text results and a warning naming its error; once it is back, no warning', async () => {
    const dir = tempDir()
    const model = countingEmbedder()
    const { call } = await toolsOver(dir, model)
    for (const content of facts) await call('memory_remember', { kind: 'semantic', content })
    model.fail = true
    const found = await call('memory_search', { query: 'dance studio' })
    expect(found.results.map((r: { content: string }) => r.content)).toEqual([facts[2]])
    expect(found.warnings).toHaveLength(1)
    expect(found.warnings[0]).toMatch(/^semantic search failed \(.*embedding service unavailable.*\): these are full-text results only$/)
    model.fail = false
    const again = await call('memory_search', { query: 'dance studio' })
    expect(again.results[0].content).toBe(facts[2])
    expect(again.warnings).toBeUndefined()
  })

  it('each distinct query is embedded once (query cache)', async () => {
    const dir = tempDir()
    const model = countingEmbedder()
    const { call } = await toolsOver(dir, model)
    for (const content of facts) await call('memory_remember', { kind: 'semantic', content })
    await call('memory_search', { query: 'children adopted' })
    await call('memory_search', { query: 'children adopted' })
    await call('memory_search', { query: 'surfing' })
    expect(model.batches.filter(batch => batch[0] === 'children adopted')).toHaveLength(1)
    expect(model.batches.filter(batch => batch[0] === 'surfing')).toHaveLength(1)
  })

  it('records written in one tick share one embedder call', async () => {
    const dir = tempDir()
    const model = countingEmbedder()
    const adapter = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace: createWorkspace({ dir }), writable: true })
    const records = await Promise.all(facts.map(content => adapter.append(target, { kind: 'semantic', content }, { audit })))
    const vectors = adapterVectors(adapter, model)
    await Promise.all(records.map(record => vectors.ensure([record])))
    expect(model.batches).toHaveLength(1)
    expect(model.batches[0]!.sort()).toEqual(records.map(embeddingText).sort())
  })

  it('hardDelete removes the record\'s vector from the stored bytes and keeps the others', async () => {
    const dir = tempDir()
    const { call, adapter } = await toolsOver(dir, countingEmbedder())
    const ids: string[] = []
    for (const content of facts) ids.push((await call('memory_remember', { kind: 'semantic', content })).record.id)
    const erasedVector = encodeVector(normalizeVector(wordVector(facts[0]!)))
    expect(readFileSync(sidecarOf(dir), 'utf8')).toContain(erasedVector)
    expect(await adapter.hardDelete(target, ids[0]!, { audit })).toBe(true)
    const bytes = readFileSync(sidecarOf(dir))
    expect(bytes.includes(Buffer.from(ids[0]!))).toBe(false)
    expect(bytes.includes(Buffer.from(erasedVector))).toBe(false)
    expect(sidecarLines(dir).map(line => line.id)).toEqual(ids.slice(1))
    // The erased record is gone from this process's vector ranking too.
    const hits = await hybridSearch(adapter, target, { query: 'adopted two children last spring' }, { model: countingEmbedder() })
    expect(hits.map(hit => hit.record.id)).not.toContain(ids[0])
  })

  it('hardDelete also removes the vectors an earlier erasure left when its process was killed between the log\'s compaction and the sidecar rewrite', async () => {
    const { dir, ids, next } = await afterKilledErasure()
    expect(await next.hardDelete(target, ids[1]!, { audit })).toBe(true)
    const bytes = readFileSync(sidecarOf(dir))
    for (const n of [0, 1]) {
      expect(bytes.includes(Buffer.from(ids[n]!))).toBe(false)
      expect(bytes.includes(Buffer.from(encodeVector(normalizeVector(wordVector(facts[n]!)))))).toBe(false)
    }
    expect(sidecarLines(dir).map(line => line.id)).toEqual([ids[2]])
  })

  it('eraseMemoryScope also removes the vectors an interrupted earlier erasure left', async () => {
    const { dir, ids, next } = await afterKilledErasure()
    // The scope's two active records are erased; the record erased before is swept with them.
    expect(await eraseMemoryScope(next, target, { audit })).toMatchObject({ erased: 2 })
    const bytes = readFileSync(sidecarOf(dir))
    for (const id of ids) expect(bytes.includes(Buffer.from(id))).toBe(false)
    for (const content of facts) expect(bytes.includes(Buffer.from(encodeVector(normalizeVector(wordVector(content)))))).toBe(false)
  })

  it('eraseMemoryScope removes the vectors of every record of the scope from the stored bytes', async () => {
    const dir = tempDir()
    const { call, adapter } = await toolsOver(dir, countingEmbedder())
    const ids: string[] = []
    for (const content of facts) ids.push((await call('memory_remember', { kind: 'semantic', content })).record.id)
    expect(await eraseMemoryScope(adapter, target, { audit })).toMatchObject({ erased: 3 })
    const bytes = readFileSync(sidecarOf(dir))
    for (const id of ids) expect(bytes.includes(Buffer.from(id))).toBe(false)
    for (const content of facts) expect(bytes.includes(Buffer.from(encodeVector(normalizeVector(wordVector(content)))))).toBe(false)
  })

  it('hybrid search applies the event-time window to the vector ranking too', async () => {
    const dir = tempDir()
    const { call } = await toolsOver(dir, countingEmbedder())
    await call('memory_remember', { kind: 'episodic', content: 'Melanie goes surfing every weekend', occurredAt: '2021-06-01' })
    await call('memory_remember', { kind: 'episodic', content: 'Jon opened a dance studio', occurredAt: '2023-06-01' })
    // "weekend surfing" is nearest to Melanie's record by vector, which lies outside the window.
    const found = await call('memory_search', { query: 'weekend surfing', occurredAfter: '2022-01-01' })
    expect(found.results.map((r: { content: string }) => r.content)).not.toContain('Melanie goes surfing every weekend')
    const all = await call('memory_search', { query: 'weekend surfing' })
    expect(all.results[0].content).toBe('Melanie goes surfing every weekend')
  })

  it('a torn last line of the vector sidecar is skipped and its record embedded again', async () => {
    const dir = tempDir()
    const { call } = await toolsOver(dir, countingEmbedder())
    for (const content of facts) await call('memory_remember', { kind: 'semantic', content })
    const size = readFileSync(sidecarOf(dir)).length
    truncateSync(sidecarOf(dir), size - 20)
    const { stdout } = await run(process.execPath, ['--import', 'tsx', CHILD, dir, 'dance studio'], { cwd: process.cwd() })
    const child = JSON.parse(stdout) as { ids: string[]; batches: string[][] }
    expect(child.batches.flat().sort()).toEqual([facts[2], 'dance studio'].sort())
  }, 60_000)

  it('an edited sidecar line (not a vector of the right length) is skipped and its record embedded again', async () => {
    const dir = tempDir()
    const { call } = await toolsOver(dir, countingEmbedder())
    const id = (await call('memory_remember', { kind: 'semantic', content: facts[0] })).record.id
    writeFileSync(sidecarOf(dir), `${JSON.stringify({ dims: 16, id, model: 'test/bag-of-words', vector: 'AAAA' })}\n`)
    const { stdout } = await run(process.execPath, ['--import', 'tsx', CHILD, dir, 'children'], { cwd: process.cwd() })
    expect((JSON.parse(stdout) as { batches: string[][] }).batches.flat().sort()).toEqual([facts[0], 'children'].sort())
  }, 60_000)
})

describe('vector sidecar reads in chunks', () => {
  const entry = (n: number, dims: number) => `${JSON.stringify({ dims, id: `mem_${n}`, model: 'test/model', vector: encodeVector(Float32Array.from({ length: dims }, (_, i) => (i + n) % 7)) })}\n`

  it('reading the sidecar a few hundred bytes at a time gives every entry a whole read gives, in order, and a line longer than the chunk whole', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-vectors-chunks-'))
    const workspace = createWorkspace({ dir })
    // Entries of 4 dimensions (about 90 bytes) and one of 400 (over 2,000 bytes): longer than the chunk.
    const text = [0, 1, 2, 3, 4].map(n => entry(n, 4)).join('') + entry(5, 400) + [6, 7].map(n => entry(n, 4)).join('')
    await workspace.append('memory.vectors', text)
    const size = Buffer.byteLength(text)
    const whole = await readVectorLines(workspace, 'memory.vectors', 0, size, size)
    const chunked = await readVectorLines(workspace, 'memory.vectors', 0, size, 256)
    expect(whole.entries.map(found => found.id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map(n => `mem_${n}`))
    expect(chunked).toEqual(whole)
    expect(chunked.end).toBe(size)
    expect(chunked.entries[5]!.vector.length).toBe(400)
  })

  it('a last line still being appended is left for the next read, which starts at its first byte', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-vectors-chunks-'))
    const workspace = createWorkspace({ dir })
    const complete = entry(0, 4) + entry(1, 4)
    const torn = entry(2, 4).slice(0, 40)
    await workspace.append('memory.vectors', complete + torn)
    const first = await readVectorLines(workspace, 'memory.vectors', 0, Buffer.byteLength(complete + torn), 64)
    expect(first.entries.map(found => found.id)).toEqual(['mem_0', 'mem_1'])
    expect(first.end).toBe(Buffer.byteLength(complete))
    await workspace.append('memory.vectors', entry(2, 4).slice(40))
    const next = await readVectorLines(workspace, 'memory.vectors', first.end, Buffer.byteLength(complete + entry(2, 4)), 64)
    expect(next.entries.map(found => found.id)).toEqual(['mem_2'])
  })
})

describe('vector blocks of large scopes', () => {
  // Past the vectors from which a fetch of one scope stores that scope's block.
  const perScope = VECTOR_BLOCK_MIN_VECTORS + 50
  const scopeA = { store: 'agent', scope: { agent: 'support', user: 'a' } }
  const scopeB = { store: 'agent', scope: { agent: 'support', user: 'b' } }
  /** A distinct 32-dimension vector per text (no two records share one: a byte scan then tells each record's vector apart). */
  const textVector = (text: string) => Array.from({ length: 32 }, (_, d) => Math.sin((Number(/\d+/.exec(text)?.[0] ?? 0) + 1) * 0.7 + d * 1.3 + (text.includes('Alder') ? 0.5 : 0)))
  const embedder = () => new MockEmbeddingModelV3({ provider: 'test', modelId: 'distinct', maxEmbeddingsPerCall: 10_000, doEmbed: async ({ values }) => ({ embeddings: values.map(textVector), warnings: [] }) })
  const contentOf = (scope: 'a' | 'b', n: number) => scope === 'a' ? `Alder note ${n} about hiking` : `Birch note ${n} about sailing`
  const open = (dir: string, workspace = createWorkspace({ dir })) => workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace, writable: true })

  /** Two scopes of `perScope` records with stored vectors, each scope's block stored by a cold process searching it. */
  async function twoLargeScopes(): Promise<{ dir: string; ids: { a: string[]; b: string[] } }> {
    const dir = tempDir()
    const adapter = open(dir)
    const ids = { a: [] as string[], b: [] as string[] }
    for (const [name, target] of [['a', scopeA], ['b', scopeB]] as const) {
      for (let n = 0; n < perScope; n++) ids[name].push((await adapter.append(target, { kind: 'semantic', content: contentOf(name, n) }, { audit })).id)
      await hybridSearch(adapter, target, { query: 'hiking', limit: 5 }, { model: embedder() })
    }
    // A cold process reads both scopes in turn: each scope's vectors from lines, stored as that scope's block.
    const cold = open(dir)
    for (const target of [scopeA, scopeB]) await hybridSearch(cold, target, { query: 'sailing', limit: 5 }, { model: embedder() })
    return { dir, ids }
  }

  it('two large scopes searched in turn in one process each keep their own block, and a cold process reads each scope\'s vectors from its block, not from sidecar lines', async () => {
    const { dir, ids } = await twoLargeScopes()
    const blocks = readdirSync(join(dir, 'memory')).filter(name => name.startsWith('memory.jsonl.vectors.block.'))
    expect(blocks).toHaveLength(2)
    const inner = createWorkspace({ dir })
    const readOf = new Map<string, number>()
    const workspace = Object.create(inner) as typeof inner
    workspace.readBytes = async (key, start, end) => {
      const got = await inner.readBytes(key, start, end)
      readOf.set(key, (readOf.get(key) ?? 0) + (got?.length ?? 0))
      return got
    }
    const model = embedder()
    const cold = open(dir, workspace)
    for (const [target, first] of [[scopeA, ids.a[7]!], [scopeB, ids.b[7]!]] as const) {
      const [hit] = await hybridSearch(cold, target, { query: target === scopeA ? contentOf('a', 7) : contentOf('b', 7), limit: 1 }, { model })
      expect(hit!.record.id).toBe(first)
    }
    const sidecarRead = readOf.get('memory:memory.jsonl.vectors') ?? 0
    const blockRead = [...readOf].filter(([key]) => key.startsWith('memory:memory.jsonl.vectors.block.')).map(([, bytes]) => bytes)
    // Each scope's block read whole (its 4,146 vectors of 32 float32), the sidecar only for the last bytes whose digest the index and blocks keep.
    expect(blockRead).toHaveLength(2)
    for (const bytes of blockRead) expect(bytes).toBeGreaterThanOrEqual(perScope * 32 * 4)
    expect(sidecarRead).toBeLessThanOrEqual(4 * 4096)
    expect(adapterVectors(cold, model).stats.embeddedRecords).toBe(0)
  }, 120_000)

  it('a large scope searched with two embedding models in turn keeps one block per model: each cold search ranks by its own model\'s vectors, and only the first search of the new model embeds', async () => {
    const dir = tempDir()
    const adapter = open(dir)
    for (let n = 0; n < perScope; n++) await adapter.append(scopeA, { kind: 'semantic', content: contentOf('a', n) }, { audit })
    // Model y: the same dimensions, other vectors; its nearest record to a query differs from x's.
    const otherVector = (text: string) => Array.from({ length: 32 }, (_, d) => Math.cos((Number(/\d+/.exec(text)?.[0] ?? 0) + 3) * 1.9 + d * 0.4))
    const models = {
      x: () => embedder(),
      y: () => new MockEmbeddingModelV3({ provider: 'test', modelId: 'other', maxEmbeddingsPerCall: 10_000, doEmbed: async ({ values }) => ({ embeddings: values.map(otherVector), warnings: [] }) }),
    }
    const exactTop = (vectorOf: (text: string) => number[], query: string) => {
      const q = normalizeVector(vectorOf(query))
      let best = { n: -1, score: -Infinity }
      for (let n = 0; n < perScope; n++) {
        const v = normalizeVector(vectorOf(contentOf('a', n)))
        const score = v.reduce((sum, value, d) => sum + value * q[d]!, 0)
        if (score > best.score) best = { n, score }
      }
      return contentOf('a', best.n)
    }
    const query = 'question 41'
    const expected = { x: exactTop(textVector, query), y: exactTop(otherVector, query) }
    expect(expected.x).not.toBe(expected.y)
    const embedded: Array<[string, number]> = []
    for (const name of ['x', 'x', 'y', 'x', 'y', 'y'] as const) {
      const model = models[name]()
      const cold = open(dir)
      const [hit] = await hybridSearch(cold, scopeA, { query, limit: 1 }, { model, lexicalWeight: 0 })
      expect(hit!.record.content, name).toBe(expected[name])
      embedded.push([name, adapterVectors(cold, model).stats.embeddedRecords])
    }
    expect(embedded).toEqual([['x', perScope], ['x', 0], ['y', perScope], ['x', 0], ['y', 0], ['y', 0]])
    expect(readdirSync(join(dir, 'memory')).filter(name => name.startsWith('memory.jsonl.vectors.block.'))).toHaveLength(2)
  }, 120_000)

  it('erasing a scope and a record of another removes every scope\'s block and their .tmp leftovers: no file holds an erased record\'s text or vector (bytes or base64), no vector file its id', async () => {
    const { dir, ids } = await twoLargeScopes()
    // What a process killed while writing a block leaves (fs replace: a sibling .tmp, then a rename).
    for (const name of readdirSync(join(dir, 'memory')).filter(name => name.startsWith('memory.jsonl.vectors.block.'))) writeFileSync(join(dir, 'memory', `${name}.4242.1700000000000.tmp`), readFileSync(join(dir, 'memory', name)))
    const adapter = open(dir)
    expect(await eraseMemoryScope(adapter, scopeA, { audit })).toMatchObject({ erased: perScope })
    expect(await adapter.hardDelete(scopeB, ids.b[3]!, { audit })).toBe(true)
    const erased = [...ids.a.map((id, n) => ({ id, text: contentOf('a', n) })), { id: ids.b[3]!, text: contentOf('b', 3) }]
    const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter(entry => entry.isFile()).map(entry => ({ name: entry.name, bytes: readFileSync(join(entry.parentPath, entry.name)) }))
    expect(readdirSync(join(dir, 'memory')).filter(name => name.includes('.block'))).toEqual([])
    for (const { id, text } of [erased[0]!, erased[1000]!, erased.at(-2)!, erased.at(-1)!]) {
      const vector = normalizeVector(textVector(text))
      for (const needle of [Buffer.from(text), Buffer.from(vector.buffer), Buffer.from(encodeVector(vector))]) expect(files.some(({ bytes }) => bytes.includes(needle))).toBe(false)
      // The log keeps the erased ids (its erasure events name them); no vector file does.
      expect(files.some(({ name, bytes }) => name.includes('.vectors') && bytes.includes(Buffer.from(id)))).toBe(false)
    }
    // The kept records still rank from their stored vectors, none embedded again.
    const model = embedder()
    const cold = open(dir)
    const [hit] = await hybridSearch(cold, scopeB, { query: contentOf('b', 9), limit: 1 }, { model })
    expect(hit!.record.id).toBe(ids.b[9])
    expect(adapterVectors(cold, model).stats.embeddedRecords).toBe(0)
  }, 120_000)
})

describe('the process cache of record vectors', () => {
  const recordOf = (id: string, content: string) => ({ id, title: undefined, content, tags: [] }) as unknown as MemoryRecord
  const unit = (values: number[]) => normalizeVector(values)

  /** A vector store that reads vectors by id (as the sidecar and the database stores do), holding `entries`. */
  function fetchingStore(entries: MemoryVectorEntry[]): MemoryVectorStore {
    const base = memoryVectorStore()
    return { ...base, async fetch(_model, ids) { return entries.filter(entry => ids.includes(entry.id)) } }
  }

  it('vectors fetched for records not held yet are placed without looking them up in the held indexes', async () => {
    const model = countingEmbedder()
    const id = embeddingModelId(model)
    const stored = ['mem_a', 'mem_b', 'mem_c'].map((record, n) => ({ id: record, model: id, vector: unit(wordVector(facts[n]!)) }))
    const vectors = recordVectors(fetchingStore(stored), model)
    const first = [recordOf('mem_a', facts[0]!)]
    await vectors.ensure(first, undefined, 'p1')
    const index = vectors.index('p1', first)!
    let lookups = 0
    const has = index.has.bind(index)
    index.has = (key: string) => { lookups++; return has(key) }
    await vectors.ensure([recordOf('mem_b', facts[1]!), recordOf('mem_c', facts[2]!)], undefined, 'p2')
    expect(lookups).toBe(0)
    expect(vectors.stats.loaded).toBe(3)
    expect(model.calls).toBe(0)
  })

  it('a vector read again for a record already in an index replaces the index\'s copy', async () => {
    const model = countingEmbedder()
    const id = embeddingModelId(model)
    const store = memoryVectorStore()
    const before = unit([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    const after = unit([0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    await store.write([{ id: 'mem_a', model: id, vector: before }])
    const vectors = recordVectors(store, model)
    const records = [recordOf('mem_a', facts[0]!)]
    await vectors.ensure(records, undefined, 'p1')
    const index = vectors.index('p1', records)!
    // Another writer stores the record's vector again, and a vector for a new record: the next ensure reads both.
    await store.write([{ id: 'mem_a', model: id, vector: after }, { id: 'mem_b', model: id, vector: before }])
    await vectors.ensure([recordOf('mem_b', facts[1]!)], undefined, 'p1')
    expect(index.search(after, 1, () => true)).toEqual([{ id: 'mem_a', similarity: 1 }])
    expect(model.calls).toBe(0)
  })
})
