import fc from 'fast-check'
import { MockEmbeddingModelV3 } from 'ai/test'
import { describe, expect, it } from 'vitest'
import { createSearchIndex, searchRecords } from '../../src/memory/search-index.ts'
import { SNIPPET_CODE_POINTS, snippetOf } from '../../src/search/snippet.ts'
import { hybridSearch } from '../../src/memory/hybrid-search.ts'
import { inMemoryMemoryStore } from '../../src/memory/stores/in-memory.ts'
import type { MemoryRecord, MemoryRecordInput, MemoryStoreAdapter, MemoryTarget } from '../../src/memory/types.ts'
import { record } from '../fixtures/records.ts'
import { expectDocumentedPage } from '../helpers/substring-page.ts'


function indexOf(records: MemoryRecord[]) {
  const index = createSearchIndex()
  for (const item of records) index.update(item)
  return index
}

const ids = (hits: Array<{ record: MemoryRecord }>) => hits.map(hit => hit.record.id)

describe('ranked search (createSearchIndex)', () => {
  it('a question in a sentence finds the record that answers it (the substring rule finds nothing)', () => {
    const records = [record({ content: 'Melanie took her kids to the museum to see the dinosaurs.' }), record({ content: 'Caroline paints sunsets.' })]
    const query = { query: 'When did Melanie go to the museum?' }
    expect(searchRecords(records, query)).toEqual([])
    expect(ids(indexOf(records).search(query))).toEqual([records[0]!.id])
  })

  it('matches inflected forms, accents and numbers', () => {
    const records = [record({ content: 'She painted the lake at sunrise' }), record({ content: 'Un café près de la gare' }), record({ content: 'Moved house in 2023' })]
    const index = indexOf(records)
    expect(ids(index.search({ query: 'paintings' }))).toEqual([records[0]!.id])
    expect(ids(index.search({ query: 'cafe' }))).toEqual([records[1]!.id])
    expect(ids(index.search({ query: 'what happened in 2023' }))).toEqual([records[2]!.id])
  })

  it('finds Chinese and Japanese text by words of two or more characters', () => {
    const records = [record({ content: '我喜欢喝咖啡' }), record({ content: '東京都に住んでいます' }), record({ content: 'tea' })]
    const index = indexOf(records)
    expect(ids(index.search({ query: '咖啡' }))).toEqual([records[0]!.id])
    expect(ids(index.search({ query: '京都' }))).toEqual([records[1]!.id])
  })

  it('tolerates a misspelt word and a compound written as one word', () => {
    const records = [record({ content: 'Caroline wants to continue her education in counseling' }), record({ content: 'Melanie went on a road trip with her family' }), record({ content: 'unrelated note' })]
    const index = indexOf(records)
    expect(ids(index.search({ query: 'educaton' }))).toEqual([records[0]!.id])
    expect(ids(index.search({ query: 'roadtrip' }))).toEqual([records[1]!.id])
  })

  it('a query searched again after a record is added or deleted sees the change (misspelt and exact words)', () => {
    const index = createSearchIndex()
    const first = record({ content: 'Caroline studies counseling' })
    index.update(first)
    expect(ids(index.search({ query: 'educaton' }))).toEqual([])
    const added = record({ content: 'Caroline wants to continue her education' })
    index.update(added)
    expect(ids(index.search({ query: 'educaton' }))).toEqual([added.id])
    index.update({ ...added, status: 'deleted' })
    expect(ids(index.search({ query: 'educaton' }))).toEqual([])
    expect(ids(index.search({ query: 'counseling' }))).toEqual([first.id])
    index.update({ ...first, status: 'deleted' })
    expect(ids(index.search({ query: 'counseling' }))).toEqual([])
  })

  it('a query whose words no record holds returns only the substring rule\'s hits, each with score 0', () => {
    const records = [record({ content: 'the catalogue of spring seeds' }), record({ content: 'a catalogue of tools' }), record({ content: 'unrelated note' })]
    const hits = indexOf(records).search({ query: 'atalog' })
    expect(hits.map(hit => [hit.record.id, hit.score])).toEqual([[records[1]!.id, 0], [records[0]!.id, 0]])
  })

  it('weights title and tags above content', () => {
    const inContent = record({ content: 'notes about a garden and other things in the yard', createdAt: '2024-02-01T00:00:00Z' })
    const inTitle = record({ content: 'notes about other things in the yard today', title: 'Garden', createdAt: '2024-01-01T00:00:00Z' })
    const inTag = record({ content: 'notes about other things in the yard again', tags: ['garden'], createdAt: '2024-01-01T00:00:00Z' })
    const hits = indexOf([inContent, inTitle, inTag]).search({ query: 'garden' })
    expect(ids(hits).at(-1)).toBe(inContent.id)
    expect(hits[0]!.score).toBeGreaterThan(hits[2]!.score)
  })

  it('ranked search returns the substring rule\'s page up to the order of its ties: every hit above the page\'s lowest score, and as many at it (same filters and limit)', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'b', 'ab', 'the ', 'tea ', 'steam ', 'É', ' '), maxLength: 12 })
    const arbitraryRecord = fc.record({
      content: text,
      title: fc.option(text, { nil: undefined }),
      tags: fc.array(fc.constantFrom('a', 'tea', 'b'), { maxLength: 2 }),
      kind: fc.constantFrom('semantic', 'profile'),
      status: fc.constantFrom('active', 'active', 'superseded', 'deleted') as fc.Arbitrary<MemoryRecord['status']>,
      createdAt: fc.constantFrom('2024-01-01T00:00:00Z', '2024-06-01T00:00:00+02:00', '2025-01-01T00:00:00Z'),
    }).map(fields => record(fields))
    const query = fc.record({
      query: fc.constantFrom('a', 'tea', 'the', 'ab', 'b a', 'steam', 'é'),
      limit: fc.integer({ min: 1, max: 8 }),
      kinds: fc.option(fc.constantFrom<string[]>(['semantic'], ['profile']), { nil: undefined }),
      after: fc.option(fc.constant('2024-03-01'), { nil: undefined }),
    })
    fc.assert(fc.property(fc.array(arbitraryRecord, { maxLength: 25 }), query, (records, search) => {
      const clean = Object.fromEntries(Object.entries(search).filter(([, value]) => value !== undefined)) as unknown as import('../../src/memory/types.ts').MemorySearchQuery & { limit: number }
      const ranked = indexOf(records).search(clean)
      expectDocumentedPage(ranked, records, clean)
      expect(ranked.length).toBeLessThanOrEqual(clean.limit)
      const active = new Set(records.filter(item => item.status === 'active').map(item => item.id))
      for (const id of ids(ranked)) expect(active.has(id)).toBe(true)
    }))
  })

  it('a full page of the substring rule gives its places at the lowest score to the most relevant records: "tea" finds the older "green tea" among ten newer "team" records', () => {
    const tea = record({ content: 'I drink green tea every morning', createdAt: '2024-01-01T00:00:00Z' })
    const teams = Array.from({ length: 10 }, (_, i) => record({ content: `meeting with the sales team number ${i}`, createdAt: `2024-02-${String(i + 1).padStart(2, '0')}T00:00:00Z` }))
    const records = [tea, ...teams]
    expect(ids(searchRecords(records, { query: 'tea' }))).not.toContain(tea.id)
    const hits = indexOf(records).search({ query: 'tea' })
    expect(hits).toHaveLength(10)
    expect(hits[0]!.record.id).toBe(tea.id)
    // The page's hits above its lowest score keep their places.
    const twice = record({ content: 'the team and the steam room', createdAt: '2023-01-01T00:00:00Z' })
    expect(ids(indexOf([...records, twice]).search({ query: 'tea' }))).toEqual(expect.arrayContaining([tea.id, twice.id]))
  })

  it('mode "substring" gives exactly the documented rule', () => {
    const records = Array.from({ length: 15 }, (_, i) => record({ content: `tea ${'tea '.repeat(i % 4)} steam`, createdAt: `2024-01-${String(i + 1).padStart(2, '0')}T00:00:00Z` }))
    expect(indexOf(records).search({ query: 'tea', limit: 7, mode: 'substring' })).toEqual(searchRecords(records, { query: 'tea', limit: 7 }))
  })

  it('filters apply before the limit: limit results come back whenever that many active records match', () => {
    const notes = Array.from({ length: 30 }, (_, i) => record({ content: `tea note ${i}`, createdAt: `2024-02-${String((i % 28) + 1).padStart(2, '0')}T00:00:00Z` }))
    const profiles = Array.from({ length: 5 }, (_, i) => record({ content: `tea profile ${i}`, kind: 'profile', tags: ['Prefs'], createdAt: '2023-01-01T00:00:00Z' }))
    const index = indexOf([...notes, ...profiles])
    expect(ids(index.search({ query: 'tea', kinds: ['profile'], limit: 5 })).sort()).toEqual(ids(profiles.map(item => ({ record: item }))).sort())
    expect(index.search({ query: 'tea', tags: ['prefs'], limit: 5 })).toHaveLength(5)
    expect(index.search({ query: 'tea', kinds: [] })).toEqual([])
  })

  it('after and before compare instants, honouring time zone offsets', () => {
    const early = record({ id: 'early', content: 'green tea', createdAt: '2024-05-01T08:00:00Z' })
    const late = record({ id: 'late', content: 'green tea', createdAt: '2024-05-01T10:00:00Z' })
    const index = indexOf([early, late])
    expect(ids(index.search({ query: 'green tea', after: '2024-05-01T10:30:00+01:00' }))).toEqual(['late'])
    expect(ids(index.search({ query: 'green tea', before: '2024-05-01T10:30:00+01:00' }))).toEqual(['early'])
  })

  it('an invalid date, an empty query, an unknown mode or a limit outside 1..100 is an input error, not an empty result', () => {
    const index = indexOf([record({ content: 'tea' })])
    for (const query of [{ query: 'tea', after: '2024-13-01' }, { query: '  ' }, { query: 'tea', limit: 0 }, { query: 'tea', limit: 101 }, { query: 'tea', limit: 2.5 }, { query: 'tea', mode: 'fuzzy' as 'ranked' }]) {
      expect(() => index.search(query)).toThrow(expect.objectContaining({ code: 'MEMORY_QUERY_INVALID' }))
    }
    expect(index.search({ query: 'tea', limit: 100 })).toHaveLength(1)
  })

  it('superseded and deleted records leave the index at once', () => {
    const kept = record({ content: 'likes green tea' })
    const gone = record({ content: 'likes black tea' })
    const index = indexOf([kept, gone])
    index.update({ ...gone, status: 'superseded', supersededBy: kept.id, version: 2 })
    expect(ids(index.search({ query: 'black tea' }))).toEqual([kept.id])
    index.update({ ...kept, status: 'deleted', version: 2 })
    expect(index.search({ query: 'tea' })).toEqual([])
    expect(index.size).toBe(0)
  })

  it('a snippet shows the content around the best match, cut on code points', () => {
    const content = `${'😀 filler words here. '.repeat(20)}The key fact: Melanie loves pottery classes. ${'more 😀 filler. '.repeat(20)}`
    const [hit] = indexOf([record({ content })]).search({ query: 'pottery' })
    expect(hit!.snippet).toContain('pottery')
    expect(hit!.snippet!.startsWith('…')).toBe(true)
    expect(Array.from(hit!.snippet!).length).toBeLessThanOrEqual(SNIPPET_CODE_POINTS + 2)
    expect(hit!.snippet).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/)
    expect(snippetOf('short', new Set(['short']))).toBe('short')
  })
})

describe('ranked search through a store adapter', () => {
  const target: MemoryTarget = { store: 'agent', scope: { user: 'u1' } }
  async function store(contents: string[]): Promise<{ adapter: MemoryStoreAdapter; ids: string[] }> {
    const adapter = await inMemoryMemoryStore().create({ store: 'agent', agent: 'a', writable: true })
    const created: string[] = []
    for (const content of contents) created.push((await adapter.append(target, { kind: 'semantic', content } as MemoryRecordInput, { audit: { via: 'api' } })).id)
    return { adapter, ids: created }
  }

  it('is the default of the in-memory store, and deleted or superseded records are never returned', async () => {
    const { adapter, ids: [first, second] } = await store(['Melanie loves pottery', 'Melanie took a pottery class'])
    expect((await adapter.search(target, { query: 'What does Melanie love?' }))[0]!.record.id).toBe(first)
    await adapter.delete(target, first!, { audit: { via: 'api' } })
    const replacement = await adapter.append(target, { kind: 'semantic', content: 'Melanie stopped pottery', supersedes: [second!] }, { audit: { via: 'api' } })
    expect((await adapter.search(target, { query: 'pottery' })).map(hit => hit.record.id)).toEqual([replacement.id])
  })

  it('another scope\'s records are never ranked', async () => {
    const { adapter } = await store(['green tea'])
    expect(await adapter.search({ store: 'agent', scope: { user: 'u2' } }, { query: 'green tea' })).toEqual([])
  })
})

// A deterministic local embedder: one dimension per concept, so "children" and "youngsters" meet.
const CONCEPTS: Record<string, number> = { kid: 0, youngster: 0, children: 0, child: 0, museum: 1, tea: 2, coffee: 3, dinosaur: 1 }
function conceptEmbedder(fail = false) {
  return new MockEmbeddingModelV3({
    maxEmbeddingsPerCall: 100,
    doEmbed: async ({ values }) => {
      if (fail) throw new Error('embedder offline')
      return {
        embeddings: values.map((text) => {
          const vector = [0, 0, 0, 0, 0.01]
          for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
            const dimension = CONCEPTS[word.replace(/s$/, '')]
            if (dimension !== undefined) vector[dimension]! += 1
          }
          return vector
        }),
        warnings: [],
      }
    },
  })
}

describe('hybrid search (store option embed)', () => {
  const target: MemoryTarget = { store: 'agent', scope: { user: 'u1' } }

  it('fuses full-text and vector rankings: a record that shares no word with the query is found by meaning', async () => {
    const adapter = await inMemoryMemoryStore().create({ store: 'agent', agent: 'a', writable: true })
    const kids = await adapter.append(target, { kind: 'semantic', content: 'Melanie took the youngsters out on Saturday' }, { audit: { via: 'api' } })
    const tea = await adapter.append(target, { kind: 'semantic', content: 'Melanie drinks green tea' }, { audit: { via: 'api' } })
    const model = conceptEmbedder()
    expect((await adapter.search(target, { query: 'children' })).map(hit => hit.record.id)).toEqual([])
    const hits = await hybridSearch(adapter, target, { query: 'children', limit: 1 }, { model })
    expect(hits.map(hit => hit.record.id)).toEqual([kids.id])
    // Records are embedded once with embedMany; the query with embed.
    expect(model.doEmbedCalls.map(call => call.values.length)).toEqual([2, 1])
    await hybridSearch(adapter, target, { query: 'tea' }, { model })
    expect(model.doEmbedCalls.map(call => call.values.length)).toEqual([2, 1, 1])
    await adapter.delete(target, kids.id, { audit: { via: 'api' } })
    expect((await hybridSearch(adapter, target, { query: 'children' }, { model })).map(hit => hit.record.id)).not.toContain(kids.id)
    expect((await hybridSearch(adapter, target, { query: 'tea', kinds: ['profile'] }, { model }))).toEqual([])
    expect(tea.id).toBeDefined()
  })

  it('an embedder failure falls back to the full-text results', async () => {
    const adapter = await inMemoryMemoryStore().create({ store: 'agent', agent: 'a', writable: true })
    const tea = await adapter.append(target, { kind: 'semantic', content: 'Melanie drinks green tea' }, { audit: { via: 'api' } })
    const hits = await hybridSearch(adapter, target, { query: 'green tea' }, { model: conceptEmbedder(true) })
    expect(hits.map(hit => hit.record.id)).toEqual([tea.id])
  })
})

describe('memory_search tool and the store option search.mode', () => {
  async function searchTool(options: Partial<import('../../src/memory/types.ts').MemoryStoreOptions>) {
    const factory = inMemoryMemoryStore()
    const adapter = await factory.create({ store: 'agent', agent: 'a', writable: true })
    await adapter.append({ store: 'agent', scope: { user: 'u1' } }, { kind: 'semantic', content: `Melanie loves pottery. ${'filler text. '.repeat(30)}` }, { audit: { via: 'api' } })
    const tools: Record<string, import('../../src/agent/types.ts').AgentTool> = {}
    const { memory } = await import('../../src/memory/capability.ts')
    await memory({ stores: { agent: { adapter: factory, scope: { user: 'u1' }, ...options } } }).resolve({
      agent: 'a', run: { runId: 'r', threadId: 't' }, metadata: {}, tools: { add(name, tool) { tools[name] = tool } }, instructions: { add() {} },
      prompt: { add() {} }, messages: { transform() {} }, onFinish() {},
    })
    const tool = tools.memory_search!
    return async (query: string) => (await tool.execute(tool.inputSchema.parse({ query }), { agent: 'a', runId: 'r', threadId: 't', toolName: 'memory_search', toolCallId: 'c', metadata: {} })) as { results: Array<{ content: string; snippet?: string }> }
  }

  it('ranks by default (with a snippet for long content) and follows the documented rule with search.mode "substring"', async () => {
    const ranked = await searchTool({})
    const [hit] = (await ranked('What does Melanie love?')).results
    expect(hit!.snippet).toContain('Melanie loves pottery')
    const substring = await searchTool({ search: { mode: 'substring' } })
    expect((await substring('What does Melanie love?')).results).toEqual([])
    expect((await substring('loves pottery')).results).toHaveLength(1)
  })

  it('a store with embed searches hybrid through memory_search (records with embedMany, the query with embed)', async () => {
    const model = conceptEmbedder()
    const hybrid = await searchTool({ embed: model })
    expect((await hybrid('pottery')).results).toHaveLength(1)
    expect(model.doEmbedCalls.map(call => call.values)).toEqual([[expect.stringContaining('Melanie loves pottery')], ['pottery']])
  })
})
