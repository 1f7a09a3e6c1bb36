/**
 * Hybrid search keeps each scope's active records and vector index between searches and applies
 * only what changed (`MemoryStoreAdapter.changes`): every kind of change, made here or by another
 * OS process, is seen by the next search, which answers exactly as a search that reads the scope
 * whole, and never calls `export`. Real stores (a JSONL log in a folder, a SQLite file, Postgres at
 * DATABASE_URL), a scripted AI SDK embedding model.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { hybridSearch } from '../../src/memory/hybrid-search.ts'
import { inMemoryMemoryStore } from '../../src/memory/stores/in-memory.ts'
import { postgresMemoryStore } from '../../src/memory/stores/postgres.ts'
import { sqliteMemoryStore } from '../../src/memory/stores/sqlite.ts'
import { workspaceJsonlMemoryStore, type MemoryLogStoreAdapter } from '../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryStoreAdapter, MemoryTarget } from '../../src/memory/types.ts'
import { memoryVectorStore } from '../../src/memory/vectors-store.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import { runDbChild } from '../helpers/db-child.ts'
import { POSTGRES_SKIP_HINT, postgresTestDatabases } from '../helpers/postgres.ts'
import { countingEmbedder } from '../search/vectors-embedder.ts'

const target: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'alice' } }
const audit = { via: 'api' }
const QUERY = 'who goes surfing or dancing on the weekend'
const folders: string[] = []
afterAll(() => { for (const folder of folders) rmSync(folder, { recursive: true, force: true }) })
const postgres = await postgresTestDatabases('vam_hscope')

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vam-hybrid-scope-'))
  folders.push(dir)
  return dir
}

/** The adapter with its `export` calls counted (the vector store and change signal are the adapter's own). */
type StoreAdapter = Omit<MemoryLogStoreAdapter, 'log'>

function counting(adapter: StoreAdapter): { adapter: StoreAdapter; exports: () => number } {
  let exports = 0
  return { adapter: { ...adapter, export: (t) => { exports++; return adapter.export(t) } }, exports: () => exports }
}

/** Ids and scores of a hybrid search with a fresh embedder cache (vectors are loaded from the store). */
async function searched(adapter: MemoryStoreAdapter): Promise<Array<[string, string, number]>> {
  const hits = await hybridSearch(adapter, target, { query: QUERY, limit: 20 }, { model: countingEmbedder() })
  return hits.map(hit => [hit.record.id, hit.record.content, hit.score])
}

interface StoreUnderTest {
  /** A new app instance over the same records, with its own vector cache: the oracle that reads the scope whole at its first search. */
  open(): StoreAdapter
  /** Where another process writes (`runDbChild`). */
  child: ['jsonl' | 'sqlite' | 'postgres', string]
}

async function seesEveryChange(store: StoreUnderTest): Promise<void> {
  const { adapter, exports } = counting(store.open())
  const ids: string[] = []
  for (const content of ['Melanie goes surfing every weekend', 'Jon opened a dance studio downtown', 'Caroline adopted two children', 'Melanie painted a sunrise'])
    ids.push((await adapter.append(target, { kind: 'semantic', content }, { audit })).id)
  const step = async () => {
    const kept = await searched(adapter)
    expect(kept).toEqual(await searched(store.open()))
    return kept.map(([, content]) => content)
  }
  expect(await step()).toHaveLength(4)

  await adapter.append(target, { kind: 'semantic', content: 'Jon dances salsa on Saturdays' }, { audit })
  expect(await step()).toContain('Jon dances salsa on Saturdays')

  await adapter.append(target, { kind: 'semantic', content: 'Melanie goes surfing twice a week', supersedes: [ids[0]!] }, { audit })
  let contents = await step()
  expect(contents).toContain('Melanie goes surfing twice a week')
  expect(contents).not.toContain('Melanie goes surfing every weekend')

  await adapter.delete(target, ids[1]!, { audit })
  expect(await step()).not.toContain('Jon opened a dance studio downtown')

  expect(await adapter.hardDelete(target, ids[3]!, { audit })).toBe(true)
  expect(await step()).not.toContain('Melanie painted a sunrise')

  await runDbChild(store.child[0], store.child[1], 2, 'weekend surfing')
  contents = await step()
  expect(contents).toEqual(expect.arrayContaining(['weekend surfing fact 0', 'weekend surfing fact 1', 'Caroline adopted two children']))
  expect(contents).toHaveLength(5)
  expect(exports()).toBe(0)
}

describe('hybrid search over the change signal', () => {
  it('the JSONL store: a write, a supersede, a delete, an erase and another process\'s writes are all seen by the next search, which never exports the scope', async () => {
    const dir = tempDir()
    await seesEveryChange({
      open: () => workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace: createWorkspace({ dir }), writable: true }),
      child: ['jsonl', dir],
    })
  })

  it('the SQLite store: a write, a supersede, a delete, an erase and another process\'s writes are all seen by the next search, which never exports the scope', async () => {
    const file = join(tempDir(), 'memory.db')
    const factories: Array<ReturnType<typeof sqliteMemoryStore>> = []
    try {
      await seesEveryChange({
        open: () => {
          const factory = sqliteMemoryStore({ file, busyTimeoutMs: 20000 })
          factories.push(factory)
          return factory.create()
        },
        child: ['sqlite', file],
      })
    }
    finally {
      await factories[0]?.close()
    }
  })

  if (!postgres.reachable) {
    it.skip(`the Postgres store (skipped: ${POSTGRES_SKIP_HINT})`, () => {})
  }
  else {
    it('the Postgres store: a write, a supersede, a delete, an erase and another process\'s writes are all seen by the next search, which never exports the scope', async () => {
      const url = await postgres.fresh()
      await seesEveryChange({
        open: () => {
          const factory = postgresMemoryStore({ connectionString: url })
          postgres.onClose(() => factory.close())
          return factory.create()
        },
        child: ['postgres', url],
      })
      // Its cost is outside this process: the erasure's vacuum waits (up to erasureWaitMs, 10 s) for
      // transactions of other tests open in the same database, and the child is a tsx process
      // (about 1.5 s of CPU, 5-8 s of wall time at a load of 15-20).
    }, 90_000)
  }

  it('after any sequence of writes, supersedes, deletes and erasures, the kept scope answers as a search that reads the scope whole', async () => {
    const words = ['surfing', 'dance', 'weekend', 'children', 'painting', 'studio', 'lake', 'salsa']
    const operation = fc.oneof(
      fc.record({ type: fc.constant('remember' as const), words: fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 4 }) }),
      fc.record({ type: fc.constantFrom('supersede' as const, 'delete' as const, 'erase' as const), pick: fc.nat(), words: fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 4 }) }),
    )
    await fc.assert(fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 12 }), async (operations) => {
      const adapter = inMemoryMemoryStore().create({ store: 'agent', agent: 'support', writable: true }) as MemoryLogStoreAdapter
      // The same store without the change signal and with a vector cache of its own: read whole at every search.
      const whole: MemoryStoreAdapter = { ...adapter, changes: undefined, vectors: memoryVectorStore() }
      let n = 0
      for (const op of operations) {
        const active = (await adapter.export(target)).filter(record => record.status === 'active')
        const picked = active.length > 0 && op.type !== 'remember' ? active[op.pick! % active.length]! : undefined
        const content = `${op.words.join(' ')} note ${n++}`
        if (op.type === 'remember' || (op.type === 'supersede' && picked)) await adapter.append(target, { kind: 'semantic', content, ...(picked ? { supersedes: [picked.id] } : {}) }, { audit })
        else if (op.type === 'delete' && picked) await adapter.delete(target, picked.id, { audit })
        else if (op.type === 'erase' && picked) await adapter.hardDelete(target, picked.id, { audit })
        const model = countingEmbedder()
        const kept = await hybridSearch(adapter, target, { query: 'surfing on the weekend', limit: 20 }, { model })
        const read = await hybridSearch(whole, target, { query: 'surfing on the weekend', limit: 20 }, { model })
        expect(kept.map(hit => [hit.record.id, hit.score])).toEqual(read.map(hit => [hit.record.id, hit.score]))
      }
    }), { numRuns: 30 })
  })
})
