import { MockEmbeddingModelV3 } from 'ai/test'
import { describe, expect, it } from 'vitest'
import { hybridSearch } from '../../../src/memory/hybrid-search.ts'
import type { MemoryStoreAdapter, MemoryTarget } from '../../../src/memory/types.ts'
import { everyStoreFamily } from '../../helpers/store-matrix.ts'

// Ranked search keeps the substring rule's page, and at its lowest score gives the places to
// records holding a word of the query first (wordsFirstAtFloor): every built-in store alike.

const target: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'alice' } }
const stores = await everyStoreFamily('vam-floor')

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
