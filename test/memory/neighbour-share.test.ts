import { MockEmbeddingModelV3 } from 'ai/test'
import { describe, expect, it } from 'vitest'
import type { AgentTool, CapabilityContext, ToolExecutionContext } from '../../src/agent/types.ts'
import { memory } from '../../src/memory/capability.ts'
import { hybridSearch } from '../../src/memory/hybrid-search.ts'
import { inMemoryMemoryStore } from '../../src/memory/stores/in-memory.ts'
import type { MemoryFusionOptions, MemoryRecordInput, MemoryStoreAdapter, MemoryTarget } from '../../src/memory/types.ts'

const target: MemoryTarget = { store: 'agent', scope: { agent: 'support' } }
const audit = { via: 'import' }

/** An embedder that gives each known text its own axis (a query about the adoption shares the adoption record's): only that record is a vector candidate. */
function axisEmbedder(texts: string[]) {
  return new MockEmbeddingModelV3({
    provider: 'test',
    modelId: 'axes',
    maxEmbeddingsPerCall: 100,
    doEmbed: async ({ values }) => ({ embeddings: values.map(value => texts.map(text => (value === text || (value.includes('adopted') && text.includes('adopted')) ? 1 : 0))), warnings: [] }),
  })
}

/** Records written in this order; only the one about the adoption matches the query "adopted children", by words and by vector. */
async function scopeOf(inputs: MemoryRecordInput[]) {
  const adapter = await inMemoryMemoryStore().create({ store: 'agent', agent: 'support', writable: true })
  const ids: string[] = []
  for (const input of inputs) ids.push((await adapter.append(target, input, { audit })).id)
  return { adapter, ids, model: axisEmbedder(inputs.map(input => input.content)) }
}

const adoption = { kind: 'semantic', content: 'Caroline adopted two children', createdAt: '2023-05-08T13:56:00Z' } as const
const sameDay = (content: string, minute: number, extra: Partial<MemoryRecordInput> = {}): MemoryRecordInput => ({ kind: 'semantic', content, createdAt: `2023-05-08T13:${minute}:00Z`, ...extra })

describe('neighbour share of hybrid search', () => {
  it('the records written next to a hit on its day are found with half its score, up to two on each side', async () => {
    const { adapter, ids, model } = await scopeOf([sameDay('The agency was found through a church', 50), sameDay('Sunday lunch was pasta', 51), adoption, sameDay('Her sister helped with the paperwork', 57), sameDay('The house got a new fence', 58), sameDay('The weather turned cold', 59)])
    const hits = await hybridSearch(adapter, target, { query: 'adopted children', limit: 10 }, { model })
    const top = 1 / 11 + 0.75 / 11
    expect(hits.map(hit => [hit.record.id, hit.score])).toEqual([
      [ids[2], Number(top.toFixed(6))],
      [ids[1], Number((top / 2).toFixed(6))],
      [ids[3], Number((top / 2).toFixed(6))],
      [ids[0], Number((top / 2).toFixed(6))],
      [ids[4], Number((top / 2).toFixed(6))],
    ])
  })

  it('a record written next to a hit on another day gets no share', async () => {
    const { adapter, ids, model } = await scopeOf([adoption, { kind: 'semantic', content: 'Her sister helped with the paperwork', createdAt: '2023-05-09T09:00:00Z' }])
    const hits = await hybridSearch(adapter, target, { query: 'adopted children', limit: 10 }, { model })
    expect(hits.map(hit => hit.record.id)).toEqual([ids[0]])
  })

  it('a neighbour the query\'s filters exclude gets no share, and the walk goes past it', async () => {
    const { adapter, ids, model } = await scopeOf([{ ...adoption, tags: ['home'] }, sameDay('Her sister helped with the paperwork', 57, { tags: ['private'] }), sameDay('The house got a new fence', 58, { tags: ['home'] })])
    const hits = await hybridSearch(adapter, target, { query: 'adopted children', limit: 10, tags: ['home'] }, { model })
    expect(hits.map(hit => hit.record.id)).toEqual([ids[0], ids[2]])
    const all = await hybridSearch(adapter, target, { query: 'adopted children', limit: 10, kinds: ['semantic'] }, { model })
    expect(all.map(hit => hit.record.id)).toEqual([ids[0], ids[1], ids[2]])
  })

  it('after a record is deleted, the records on either side of it are neighbours', async () => {
    const { adapter, ids, model } = await scopeOf([adoption, sameDay('Sunday lunch was pasta', 57), sameDay('The house got a new fence', 58), sameDay('Her sister helped with the paperwork', 59)])
    await hybridSearch(adapter, target, { query: 'adopted children', limit: 10 }, { model })
    expect((await adapter.delete(target, ids[1]!, { audit }))?.status).toBe('deleted')
    const hits = await hybridSearch(adapter, target, { query: 'adopted children', limit: 10 }, { model })
    expect(hits.map(hit => hit.record.id)).toEqual([ids[0], ids[2], ids[3]])
  })

  it('neighbourShare 0 leaves the fused ranking as it is', async () => {
    const { adapter, ids, model } = await scopeOf([adoption, sameDay('Her sister helped with the paperwork', 57)])
    const hits = await hybridSearch(adapter, target, { query: 'adopted children', limit: 10 }, { model, neighbourShare: 0 })
    expect(hits.map(hit => hit.record.id)).toEqual([ids[0]])
  })
})

/** `memory_search` of one store over `adapter`, with the store option `search.fusion`, called as the host calls it (input validated first). */
async function memorySearchOf(adapter: MemoryStoreAdapter, model: ReturnType<typeof axisEmbedder>, fusion?: MemoryFusionOptions) {
  const tools: Record<string, AgentTool> = {}
  const context = {
    agent: 'support', run: { runId: 'run_1', threadId: 'thread_1' }, metadata: {},
    tools: { add(name: string, tool: AgentTool) { tools[name] = tool } }, instructions: { add() {} }, prompt: { add() {} }, messages: { transform() {} }, onFinish() {},
  } as unknown as CapabilityContext
  await memory({ stores: { agent: { adapter, scope: { agent: 'support' }, embed: model, ...(fusion ? { search: { fusion } } : {}) } } }).resolve(context)
  const tool = tools.memory_search!
  const exec: ToolExecutionContext = { agent: 'support', runId: 'run_1', threadId: 'thread_1', toolName: 'memory_search', toolCallId: 'call_1', metadata: {} }
  return async (query: string): Promise<string[]> => ((await tool.execute(tool.inputSchema.parse({ query }), exec)) as { results: Array<{ id: string }> }).results.map(hit => hit.id)
}

describe('the store option search.fusion', () => {
  it('memory_search fuses with the store\'s fusion settings: neighbourShare 0 leaves out the neighbours the default finds', async () => {
    const { adapter, ids, model } = await scopeOf([adoption, sameDay('Her sister helped with the paperwork', 57)])
    expect(await (await memorySearchOf(adapter, model))('adopted children')).toEqual([ids[0], ids[1]])
    expect(await (await memorySearchOf(adapter, model, { neighbourShare: 0 }))('adopted children')).toEqual([ids[0]])
  })

  it('fusion values out of their ranges and unknown fusion keys are option errors', () => {
    const adapter = inMemoryMemoryStore()
    const model = axisEmbedder([])
    for (const fusion of [{ rrfK: 0 }, { lexicalDepth: 101 }, { vectorDepth: 0 }, { vectorWeight: -1 }, { neighbourShare: Number.NaN }, { neighbourSpan: 1.5 }, { neighbourspan: 1 }]) {
      expect(() => memory({ stores: { agent: { adapter, scope: { agent: 'support' }, embed: model, search: { fusion: fusion as MemoryFusionOptions } } } })).toThrow(/MEMORY_OPTIONS_INVALID/)
    }
  })
})
