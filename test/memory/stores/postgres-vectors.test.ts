/**
 * Record vectors of hybrid search in the Postgres store (the `MemoryVectorStore` seam): kept in
 * the `embedding` column with the model id, scored in the database, shared by every app instance,
 * erased with the record. Real Postgres (DATABASE_URL), a scripted AI SDK embedding model.
 */
import pg from 'pg'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { describe, expect, it } from 'vitest'
import { embedMemoryScope } from '../../../src/memory/embeddings.ts'
import { adapterVectors, hybridSearch } from '../../../src/memory/hybrid-search.ts'
import { eraseMemoryScope, hardDeleteMemoryRecord } from '../../../src/memory/retention.ts'
import { EXACT_VECTOR_COLUMN, postgresMemoryStore } from '../../../src/memory/stores/postgres.ts'
import { workspaceJsonlMemoryStore } from '../../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryStoreAdapter, MemoryTarget } from '../../../src/memory/types.ts'
import { createWorkspace } from '../../../src/workspace/workspace.ts'
import { countingEmbedder } from '../../search/vectors-embedder.ts'
import { POSTGRES_SKIP_HINT, postgresTestDatabases, schemaOf } from '../../helpers/postgres.ts'

const target: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'ann' } }
const audit = { via: 'api' }
const FACTS = [
  'Melanie goes surfing every weekend',
  'Jon opened a dance studio downtown',
  'Caroline adopted two children last year',
  'Melanie painted a sunrise over the lake',
  'Jon lost his job at the bank',
  'Caroline runs a support group on weekends',
  'The kids love camping by the lake',
  'Melanie signed up for a pottery class',
  'Jon practises dance every evening',
  'Caroline went hiking with her children',
  'Surfing lessons start in June',
  'The studio hosts a weekend dance contest',
]

const postgres = await postgresTestDatabases('vam_vec')

/** A store on its own pool (one app instance). */
function instance(url: string, options: { scoreInDatabase?: boolean } = {}) {
  const pool = new pg.Pool({ connectionString: url, max: 4 })
  pool.on('error', () => {})
  const factory = postgresMemoryStore({ pool, ...(options.scoreInDatabase ? { vectors: { ...EXACT_VECTOR_COLUMN, scoreInDatabase: true } } : {}) })
  postgres.onClose(() => pool.end())
  return factory.create()
}

async function embeddingRows(url: string): Promise<Array<{ content: string | null; model: string | null; hasVector: boolean }>> {
  const { rows } = await postgres.admin.query(`SELECT record::json->>'content' AS content, embedding_model AS model, embedding IS NOT NULL AS "hasVector" FROM ${schemaOf(url)}.memory_records ORDER BY seq`)
  return rows
}

if (!postgres.reachable) {
  describe('postgresMemoryStore record vectors', () => it.skip(`skipped: ${POSTGRES_SKIP_HINT}`, () => {}))
}
else {
  describe('postgresMemoryStore record vectors', () => {
    it('a second app instance on its own pool uses the vectors the first computed: it loads them from the column and embeds only the query', async () => {
      const url = await postgres.fresh()
      const first = instance(url)
      for (const content of FACTS.slice(0, 3)) await first.append(target, { kind: 'semantic', content }, { audit })
      expect(await embedMemoryScope(first, target, countingEmbedder())).toEqual({ embedded: 3 })
      expect((await embeddingRows(url)).map(row => [row.model, row.hasVector])).toEqual([['test/bag-of-words', true], ['test/bag-of-words', true], ['test/bag-of-words', true]])
      const second = instance(url)
      const model = countingEmbedder()
      const hits = await hybridSearch(second, target, { query: 'surfing', limit: 1 }, { model })
      expect(hits.map(hit => hit.record.content)).toEqual(['Melanie goes surfing every weekend'])
      expect(model.batches).toEqual([['surfing']])
      expect(adapterVectors(second, model).stats).toEqual({ embeddedRecords: 0, embeddedQueries: 1, loaded: 3 })
    })

    it('with scoreInDatabase a second instance scores the first one\'s vectors in Postgres: it embeds only the query and loads no vector', async () => {
      const url = await postgres.fresh()
      const first = instance(url, { scoreInDatabase: true })
      for (const content of FACTS.slice(0, 3)) await first.append(target, { kind: 'semantic', content }, { audit })
      expect(await embedMemoryScope(first, target, countingEmbedder())).toEqual({ embedded: 3 })
      const second = instance(url, { scoreInDatabase: true })
      const model = countingEmbedder()
      const hits = await hybridSearch(second, target, { query: 'surfing', limit: 1 }, { model })
      expect(hits.map(hit => hit.record.content)).toEqual(['Melanie goes surfing every weekend'])
      expect(model.batches).toEqual([['surfing']])
      expect(adapterVectors(second, model).stats).toEqual({ embeddedRecords: 0, embeddedQueries: 1, loaded: 0 })
    })

    it('a changed embedding model id embeds every record again and replaces the stored vectors', async () => {
      const url = await postgres.fresh()
      const first = instance(url)
      for (const content of FACTS.slice(0, 3)) await first.append(target, { kind: 'semantic', content }, { audit })
      await embedMemoryScope(first, target, countingEmbedder())
      const model = countingEmbedder('bag-of-words-v2')
      await hybridSearch(instance(url), target, { query: 'dance', limit: 2 }, { model })
      expect(model.batches.flat().sort()).toEqual([...FACTS.slice(0, 3), 'dance'].sort())
      expect((await embeddingRows(url)).map(row => row.model)).toEqual(['test/bag-of-words-v2', 'test/bag-of-words-v2', 'test/bag-of-words-v2'])
    })

    it('an erased record loses its vector in the erasing transaction, and eraseMemoryScope leaves no vector of the scope', async () => {
      const url = await postgres.fresh()
      const adapter = instance(url)
      const records = []
      for (const content of FACTS.slice(0, 3)) records.push(await adapter.append(target, { kind: 'semantic', content }, { audit }))
      await embedMemoryScope(adapter, target, countingEmbedder())
      expect((await hardDeleteMemoryRecord(adapter, target, records[0]!.id, { audit })).erased).toBe(1)
      expect(await embeddingRows(url)).toEqual([
        { content: null, model: null, hasVector: false },
        { content: FACTS[1], model: 'test/bag-of-words', hasVector: true },
        { content: FACTS[2], model: 'test/bag-of-words', hasVector: true },
      ])
      expect((await eraseMemoryScope(adapter, target, { audit })).erased).toBe(2)
      expect((await embeddingRows(url)).map(row => row.hasVector)).toEqual([false, false, false])
      // A vector written after the erasure (a slow embedder of another instance) matches no row.
      await adapter.vectors.write([{ id: records[1]!.id, model: 'test/bag-of-words', vector: new Float32Array([1, 0]) }])
      expect((await embeddingRows(url)).map(row => row.hasVector)).toEqual([false, false, false])
    })

    it('hybrid search over Postgres (vectors scored in the app, and in the database) gives the same fused top-k as over the JSONL store for the same records and embeddings', async () => {
      const url = await postgres.fresh()
      const factory = postgresMemoryStore({ connectionString: url })
      postgres.onClose(() => factory.close())
      const loaded = factory.create()
      for (const content of FACTS) await loaded.append(target, { kind: 'semantic', content }, { audit })
      const scored = instance(url, { scoreInDatabase: true })
      // The same lines (same ids) read by the JSONL store.
      const workspace = createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
      await workspace.append('memory:memory.jsonl', await factory.exportLog())
      const jsonl = await workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', writable: true, workspace })
      const model = countingEmbedder()
      const sizes: number[] = []
      // No query word with a synonym group: the SQL stores' ranking does not expand synonyms.
      for (const query of ['surfing weekend', 'dance studio', 'Caroline hiking', 'lake', 'what does Melanie like to do']) {
        const fused = async (adapter: MemoryStoreAdapter) => (await hybridSearch(adapter, target, { query, limit: 5 }, { model })).map(hit => [hit.record.id, hit.score])
        const expected = await fused(jsonl)
        expect(await fused(loaded), query).toEqual(expected)
        expect(await fused(scored), query).toEqual(expected)
        sizes.push(expected.length)
      }
      expect(sizes).toEqual([5, 5, 5, 5, 5])
    })
  })
}
