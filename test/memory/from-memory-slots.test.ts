/**
 * The examples of docs/from-memory-slots.md, one test each: every example of the slots document
 * (/work/shared/seeds/000_0bf17b1616f748fb.txt) written with this package, run through the
 * public API with a scripted model, real stores and a real workspace.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createWorkspace, defineAgent, runAgent } from '../../src/index.ts'
import type { AgentRun } from '../../src/index.ts'
import { inMemoryMemoryStore, memory, memorySlot, openMemoryStore, sqliteMemoryStore, workspaceJsonlMemoryStore } from '../../src/capabilities/index.ts'
import type { MemoryRecord, MemoryStoreAdapter } from '../../src/capabilities/index.ts'
import { scriptedModel } from '../../src/testing/index.ts'

type Prompt = ReturnType<typeof scriptedModel>['prompts'][number]
const systemOf = (prompt: Prompt) => prompt.filter((message) => message.role === 'system').map((message) => message.content).join('\n')

async function send(run: AgentRun | Promise<AgentRun>) {
  const awaited = await run
  for await (const _ of awaited) { /* drain */ }
  return awaited.result
}

describe('docs/from-memory-slots.md', () => {
  it('Memory in code: a session slot saved with remember_preferences is in the system prompt of the next conversation with the same id', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-slots-'))
    const model = scriptedModel([
      { toolCalls: [{ toolName: 'remember_preferences', input: { text: 'The user wants answers in French.' } }] },
      { text: 'D\'accord.' },
      { text: 'Tokyo.' },
    ])
    const agent = defineAgent({
      name: 'assistant',
      driver: { model },
      instructions: 'You are a helpful assistant. Save lasting preferences with remember_preferences.',
      workspace: createWorkspace({ dir }),
      capabilities: [memory({ stores: {
        preferences: memorySlot({
          description: 'the user\'s preferences: language, tone, tools they like',
          scope: 'session',
          adapter: workspaceJsonlMemoryStore({ path: 'memory/preferences.jsonl' }),
        }),
      } })],
    })
    await send(runAgent(agent, { input: 'Please always answer in French.', threadId: 'user-42' }))
    const { text } = await send(runAgent(agent, { input: 'What is the capital of Japan?', threadId: 'user-42' }))
    expect(text).toBe('Tokyo.')
    expect(systemOf(model.prompts[2]!).endsWith('<memory name="preferences">\n- The user wants answers in French.\n</memory>')).toBe(true)
    // The tool descriptions carry the slot's description.
    const tools = model.calls[0]!.tools!.map((tool) => [tool.name, 'description' in tool ? tool.description : ''])
    expect(tools.map(([name]) => name).sort()).toEqual(['recall_preferences', 'remember_preferences'])
    for (const [, description] of tools) expect(description).toContain('the user\'s preferences: language, tone, tools they like')
  })

  it('Scopes: a scope function of the run metadata keeps one memory per user, and returning undefined switches the slot off', async () => {
    const adapter = inMemoryMemoryStore()
    const userFacts = memorySlot({
      scope: ({ metadata }) => (typeof metadata.userId === 'string' ? { user: metadata.userId } : undefined),
      adapter,
    })
    const model = scriptedModel([
      { toolCalls: [{ toolName: 'remember_user_facts', input: { text: 'Works at Acme Corp.' } }] }, { text: 'Hello!' },
      { text: 'Hi.' },
      { text: 'Who?' },
    ])
    const agent = defineAgent({ name: 'assistant', driver: { model }, capabilities: [memory({ stores: { user_facts: userFacts } })] })
    await send(runAgent(agent, { input: 'Hi again!', metadata: { userId: 'u-42' } }))
    await send(runAgent(agent, { input: 'Where do I work?', metadata: { userId: 'u-42' } }))
    expect(systemOf(model.prompts[2]!)).toContain('<memory name="user_facts">\n- Works at Acme Corp.\n</memory>')
    await send(runAgent(agent, { input: 'Hi!' }))
    expect(systemOf(model.prompts[3]!)).not.toContain('<memory')
    expect(model.calls[3]!.tools ?? []).toEqual([])
  })

  it('SQLite: a global slot in a SQLite file keeps items across agents that share the file', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'vam-slots-')), 'agent.db')
    const notes = () => memory({ stores: { notes: memorySlot({ scope: 'global', adapter: sqliteMemoryStore({ file }) }) } })
    const first = scriptedModel([{ toolCalls: [{ toolName: 'remember_notes', input: { text: 'The office moved to Berlin.' } }] }, { text: 'Noted.' }])
    await send(runAgent(defineAgent({ name: 'assistant', driver: { model: first }, capabilities: [notes()] }), { input: 'We moved to Berlin.' }))
    const second = scriptedModel([{ text: 'Berlin.' }])
    await send(runAgent(defineAgent({ name: 'assistant', driver: { model: second }, capabilities: [notes()] }), { input: 'Where is the office?' }))
    expect(systemOf(second.prompts[0]!)).toContain('<memory name="notes">\n- The office moved to Berlin.\n</memory>')
  })

  it('A custom provider: an adapter of five functions serves remember_<name> and recall_<name>, newest first', async () => {
    const items = new Map<string, MemoryRecord[]>()
    const key = (scope: object) => JSON.stringify(scope)
    let next = 0
    const myAdapter: MemoryStoreAdapter = {
      async search(target, query) {
        const words = query.query.toLowerCase().split(/\W+/).filter((word) => word.length >= 3)
        return (items.get(key(target.scope)) ?? []).filter((record) => words.some((word) => record.content.toLowerCase().includes(word))).map((record) => ({ record, score: 1 }))
      },
      async read(target, id) { return (items.get(key(target.scope)) ?? []).find((record) => record.id === id) },
      async append(target, input, options) {
        const at = new Date(Date.UTC(2025, 0, 1, 0, 0, next)).toISOString()
        const record: MemoryRecord = { id: `item-${++next}`, store: target.store, scope: target.scope, kind: input.kind, content: input.content, tags: [], metadata: input.metadata ?? {}, pinned: false, supersedes: [], provenance: input.provenance ?? {}, audit: options.audit, createdAt: at, updatedAt: at, version: 1, status: 'active' }
        items.set(key(target.scope), [...(items.get(key(target.scope)) ?? []), record])
        return record
      },
      async delete(target, id) {
        const record = (items.get(key(target.scope)) ?? []).find((r) => r.id === id)
        if (record) record.status = 'deleted'
        return record
      },
      async export(target) { return items.get(key(target.scope)) ?? [] },
    }
    const seen: unknown[] = []
    const agent = defineAgent({
      name: 'assistant',
      driver: { async run(ctx) {
        seen.push(await ctx.tools.remember_notes!.call({ text: 'Likes green tea.' }))
        seen.push(await ctx.tools.remember_notes!.call({ text: 'Has a cat named Miso.' }))
        seen.push(await ctx.tools.recall_notes!.call({}))
        seen.push(await ctx.tools.recall_notes!.call({ query: 'what tea', limit: 5 }))
        ctx.write('ok')
      } },
      capabilities: [memory({ stores: { notes: memorySlot({ scope: 'global', adapter: myAdapter }) } })],
    })
    await send(runAgent(agent, { input: 'go' }))
    const outputs = seen.map((outcome) => (outcome as { output: { items?: Array<{ text: string }> } }).output)
    expect(outputs[2]!.items!.map((item) => item.text)).toEqual(['Has a cat named Miso.', 'Likes green tea.'])
    expect(outputs[3]!.items!.map((item) => item.text)).toEqual(['Likes green tea.'])
  })

  it('Testing memory: an item added from code is in the first system prompt, and remember_notes adds the next one first', async () => {
    const store = inMemoryMemoryStore()
    const model = scriptedModel([{ toolCalls: [{ toolName: 'remember_notes', input: { text: 'Lives in Oslo.' } }] }, { text: 'Noted.' }])
    const agent = defineAgent({ name: 'assistant', driver: { model }, capabilities: [memory({ stores: { notes: memorySlot({ scope: 'global', adapter: store }) } })] })
    const notes = await openMemoryStore(agent, { store: 'notes' })
    await notes.adapter.append(notes.target, { kind: 'semantic', content: 'The user likes tea.' }, { audit: { via: 'api' } })
    await send(runAgent(agent, { input: 'I moved to Oslo.' }))
    expect(systemOf(model.prompts[0]!).endsWith('<memory name="notes">\n- The user likes tea.\n</memory>')).toBe(true)
    const recalled = await openMemoryStore(agent, { store: 'notes' })
    const texts = (await recalled.adapter.export(recalled.target)).filter((record) => record.status === 'active').reverse().map((record) => record.content)
    expect(texts).toEqual(['Lives in Oslo.', 'The user likes tea.'])
  })

  it('A read-only slot: expose.remember false offers only recall_<name>, and code fills it', async () => {
    const model = scriptedModel([{ text: 'Ok.' }])
    const agent = defineAgent({ name: 'assistant', driver: { model }, capabilities: [memory({ stores: { policies: memorySlot({ scope: 'global', adapter: inMemoryMemoryStore(), expose: { remember: false } }) } })] })
    const policies = await openMemoryStore(agent, { store: 'policies' })
    await policies.adapter.append(policies.target, { kind: 'semantic', content: 'Refunds within 30 days.' }, { audit: { via: 'api' } })
    await send(runAgent(agent, { input: 'Can I get a refund?' }))
    expect(model.calls[0]!.tools!.map((tool) => tool.name)).toEqual(['recall_policies'])
    expect(systemOf(model.prompts[0]!)).toContain('- Refunds within 30 days.')
  })
})
