import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MockEmbeddingModelV3 } from 'ai/test'
import { createStorage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import { afterAll, describe, expect, it } from 'vitest'
import { postgresMemoryStore, sqliteMemoryStore, workspaceJsonlMemoryStore } from '../../../src/capabilities/index.ts'
import { hybridSearch } from '../../../src/memory/hybrid-search.ts'
import { inMemoryMemoryStore } from '../../../src/memory/stores/in-memory.ts'
import type { MemoryStoreAdapter, MemoryStoreContext, MemoryTarget } from '../../../src/memory/types.ts'
import { createWorkspace } from '../../../src/workspace/workspace.ts'
import { postgresTestDatabases, POSTGRES_SKIP_HINT } from '../../helpers/postgres.ts'

// Ranked search keeps the substring rule's page, and at its lowest score gives the places to
// records holding a word of the query first (wordsFirstAtFloor): every built-in store alike.

const target: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'alice' } }
const context = (workspace?: MemoryStoreContext['workspace']): MemoryStoreContext => ({ store: 'agent', agent: 'support', writable: true, ...(workspace ? { workspace } : {}) })
const folders: string[] = []
const closers: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const close of closers) await close()
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'vam-floor-'))
  folders.push(dir)
  return dir
}
const databases = await postgresTestDatabases('vam_floor')

const stores: Array<[string, () => Promise<MemoryStoreAdapter>]> = [
  ['inMemoryMemoryStore', async () => inMemoryMemoryStore().create(context())],
  ['workspaceJsonlMemoryStore (fs)', async () => workspaceJsonlMemoryStore().create(context(createWorkspace({ storage: createStorage({ driver: fsDriver({ base: tempDir() }) }) })))],
  ['sqliteMemoryStore', async () => {
    const factory = sqliteMemoryStore({ file: join(tempDir(), 'memory.db') })
    closers.push(() => factory.close())
    return factory.create()
  }],
]
if (databases.reachable) {
  stores.push(['postgresMemoryStore', async () => {
    const factory = postgresMemoryStore({ connectionString: await databases.fresh() })
    databases.onClose(() => factory.close())
    return factory.create()
  }])
}
else it.skip(`postgresMemoryStore: ${POSTGRES_SKIP_HINT}`, () => {})

/** One older record holding the word "tea", ten newer ones holding it only in "team", one holding "tea" twice inside words; returns the ids. */
async function teaScope(adapter: MemoryStoreAdapter) {
  const audit = { audit: { via: 'api' as const } }
  const tea = await adapter.append(target, { kind: 'semantic', content: 'I drink green tea every morning', createdAt: '2024-01-01T00:00:00.000Z' }, audit)
  const twice = await adapter.append(target, { kind: 'semantic', content: 'the team and the steam room', createdAt: '2023-01-01T00:00:00.000Z' }, audit)
  const teams: string[] = []
  for (let day = 1; day <= 10; day++) teams.push((await adapter.append(target, { kind: 'semantic', content: `meeting with the sales team number ${day}`, createdAt: `2024-02-${String(day).padStart(2, '0')}T00:00:00.000Z` }, audit)).id)
  return { tea: tea.id, twice: twice.id, teams }
}

/** Every text at one point: the vector side ranks nothing above anything. */
const flatEmbedder = () => new MockEmbeddingModelV3({ maxEmbeddingsPerCall: 100, doEmbed: async ({ values }) => ({ embeddings: values.map(() => [1, 0, 0]), warnings: [] }) })

describe.each(stores)('%s: a full substring page gives its places at the lowest score to records holding a word of the query', (_name, open) => {
  it('"tea" finds the older "green tea" among ten newer "team" records, first, and keeps the record holding "tea" twice', async () => {
    const adapter = await open()
    const { tea, twice, teams } = await teaScope(adapter)
    const substring = (await adapter.search(target, { query: 'tea', mode: 'substring' })).map(hit => hit.record.id)
    expect(substring).toEqual([twice, ...teams.slice(1).reverse()])
    const ranked = (await adapter.search(target, { query: 'tea' })).map(hit => hit.record.id)
    expect(ranked).toHaveLength(10)
    expect(ranked[0]).toBe(tea)
    expect(ranked).toContain(twice)
    // The newest "team" records keep the other places.
    expect(new Set(ranked.slice(1))).toEqual(new Set([twice, ...teams.slice(2)]))
  })

  it('hybrid search keeps the same page: "green tea" is on it', async () => {
    const adapter = await open()
    const { tea, twice } = await teaScope(adapter)
    const hits = (await hybridSearch(adapter, target, { query: 'tea' }, { model: flatEmbedder() })).map(hit => hit.record.id)
    expect(hits).toHaveLength(10)
    expect(hits).toContain(tea)
    expect(hits).toContain(twice)
  })
})
