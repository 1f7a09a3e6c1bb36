/**
 * One test per sentence of the conversation-memory document (/work/shared/seeds/004_a4c9c9b2958fba5b.txt)
 * that this package implements, in the document's order, through the public API: defineAgent +
 * runAgent with a scripted AI SDK model or a custom-run driver, and the real history stores
 * (in-memory, a workspace on the fs driver, a SQLite file).
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createWorkspace, defineAgent, runAgent } from '../../src/index.ts'
import type { AgentDefinition, AgentDriver } from '../../src/index.ts'
import { history, inMemoryHistoryStore, openHistory, sqliteHistoryStore, workspaceHistoryStore } from '../../src/capabilities/index.ts'
import type { HistoryOptions } from '../../src/capabilities/index.ts'
import { scriptedModel } from '../../src/testing/index.ts'

const REPO_ROOT = join(import.meta.dirname, '..', '..')
const tempDir = () => mkdtempSync(join(tmpdir(), 'vam-hist-seed-'))
const withHistory = (driver: AgentDriver, options: HistoryOptions = {}, extra: Pick<Partial<AgentDefinition>, 'workspace'> = {}) => defineAgent({ name: 'support', driver, capabilities: [history(options)], ...extra })
const userText = (prompt: ReturnType<typeof scriptedModel>['prompts'][number]) => prompt.filter(m => m.role !== 'system').map(m => (typeof m.content === 'string' ? m.content : m.content.map(p => ('text' in p ? p.text : '')).join(''))).join(' | ')

describe('seed 004: Memory Overview and Constructor', () => {
  it('history is stored automatically and injected into the next conversation of the same session', async () => {
    const model = scriptedModel([{ text: 'Nice to meet you, Alice.' }, { text: 'You work at Acme Corp.' }])
    const agent = withHistory({ model })
    await runAgent(agent, { input: 'My name is Alice and I work at Acme Corp.', threadId: 'alice' }).result
    await runAgent(agent, { input: 'Where do I work?', threadId: 'alice' }).result
    expect(userText(model.prompts[1]!)).toBe('My name is Alice and I work at Acme Corp. | Nice to meet you, Alice. | Where do I work?')
  })

  it('store: when none is given, an ephemeral in-memory store is used and no workspace is needed', async () => {
    const options: HistoryOptions = {}
    const capability = history(options)
    expect(capability.store.kind).toBe('in-memory')
    const agent = defineAgent({ name: 'support', driver: { model: scriptedModel([{ text: 'a' }]) }, capabilities: [capability] })
    expect((await runAgent(agent, { input: 'hi', threadId: 't' }).result).status).toBe('completed')
    expect((await (await openHistory(agent, { threadId: 't' })).list()).map(e => e.content)).toEqual(['hi', 'a'])
    const fresh = defineAgent({ name: 'support', driver: { model: scriptedModel([]) }, capabilities: [history()] })
    expect(await (await openHistory(fresh, { threadId: 't' })).list()).toEqual([])
  })

  it('store: a file store keeps the history as files in the agent workspace', async () => {
    const dir = tempDir()
    const agent = withHistory({ model: scriptedModel([{ text: 'a' }]) }, { store: workspaceHistoryStore() }, { workspace: createWorkspace({ dir }) })
    await runAgent(agent, { input: 'hi', threadId: 't' }).result
    expect(readdirSync(join(dir, 'history'))).toHaveLength(1)
    await expect(openHistory(withHistory({ model: scriptedModel([]) }, { store: workspaceHistoryStore() }), { threadId: 't' })).rejects.toMatchObject({ code: 'HISTORY_WORKSPACE_REQUIRED' })
  })

  it('store: a SQLite store keeps the history in a database file that another process reads', async () => {
    const file = join(tempDir(), 'memory.db')
    const agent = withHistory({ model: scriptedModel([{ text: 'Hi there!' }]) }, { store: sqliteHistoryStore({ file }) })
    await runAgent(agent, { input: 'Hello!', threadId: 's1' }).result
    await (agent.capabilities[0] as ReturnType<typeof history>).close()
    const script = `
      import { defineAgent } from './src/index.ts'
      import { history, openHistory, sqliteHistoryStore } from './src/capabilities/index.ts'
      const agent = defineAgent({ name: 'support', driver: { run: () => {} }, capabilities: [history({ store: sqliteHistoryStore({ file: ${JSON.stringify(file)} }) })] })
      const h = await openHistory(agent, { threadId: 's1' })
      console.log(JSON.stringify((await h.list()).map(e => [e.role, e.content])))
      await h.close()`
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 })
    expect(child.stderr).toBe('')
    expect(JSON.parse(child.stdout)).toEqual([['user', 'Hello!'], ['assistant', 'Hi there!']])
  })

  it('model: a summarizer model is needed only when entries exceed max_messages; the agent\'s own model is used by default', async () => {
    const errors: unknown[] = []
    const agent = withHistory({ run: (ctx) => ctx.write('ok') }, { maxMessages: 3, pinCount: 1, recentCount: 1, summarizer: { onError: e => errors.push(e) } })
    await runAgent(agent, { input: 'one', threadId: 't' }).result
    expect(errors).toEqual([])
    await runAgent(agent, { input: 'two', threadId: 't' }).result
    expect(errors).toEqual([expect.objectContaining({ code: 'HISTORY_SUMMARIZER_MODEL_REQUIRED', why: expect.stringContaining('a summary is due') })])
    const model = scriptedModel([{ text: 'ok' }, { text: 'ok' }, { text: 'They said one and two.' }])
    const own = withHistory({ model }, { maxMessages: 3, pinCount: 1, recentCount: 1 })
    await runAgent(own, { input: 'one', threadId: 't' }).result
    await runAgent(own, { input: 'two', threadId: 't' }).result
    expect((await (await openHistory(own, { threadId: 't' })).list()).map(e => e.role)).toEqual(['user', 'summary', 'assistant'])
  })

  it('enabled: false switches history off without removing it', async () => {
    const agent = withHistory({ model: scriptedModel([{ text: 'a' }]) }, { enabled: false })
    expect((await runAgent(agent, { input: 'first', threadId: 't' }).result).status).toBe('completed')
    expect(await (await openHistory(agent, { threadId: 't' })).list()).toEqual([])
  })

  it('description: a description for the agent layer guide, added to the instructions', async () => {
    const model = scriptedModel([{ text: 'a' }])
    await runAgent(withHistory({ model }, { description: 'the support conversation so far' }), { input: 'hi', threadId: 't' }).result
    const system = model.prompts[0]!.filter(m => m.role === 'system').map(m => m.content).join('\n')
    expect(system).toContain('Conversation history: the support conversation so far')
    expect(() => history({ description: '' })).toThrow(expect.objectContaining({ code: 'HISTORY_OPTIONS_INVALID' }))
  })
})

describe('seed 004: Public Methods and MemoryEntry', () => {
  it('add, get_entries, get_context_messages, update, delete, clear and close work on a session\'s entries', async () => {
    const agent = withHistory({ model: scriptedModel([]) }, { store: inMemoryHistoryStore() })
    const h = await openHistory(agent, { threadId: 's1' })
    const [hello, hi] = await h.add({ role: 'user', content: 'Hello!' }, { role: 'assistant', content: 'Hi there!' })
    expect((await h.list()).map(e => `[${e.role}] ${e.content}`)).toEqual(['[user] Hello!', '[assistant] Hi there!'])
    expect((await h.context()).messages).toEqual([{ role: 'user', content: 'Hello!' }, { role: 'assistant', content: 'Hi there!' }])
    expect((await h.update(hi!.id, 'Hi, Alice!'))?.content).toBe('Hi, Alice!')
    expect((await h.delete(hello!.id))?.id).toBe(hello!.id)
    expect(await h.clear()).toBe(1)
    await h.close()
    expect(await h.list()).toEqual([])
  })

  it('an entry has an id, a role, content, message_data (the tool calls and their results) and created/updated timestamps', async () => {
    const model = scriptedModel([{ toolCalls: [{ toolName: 'lookup', input: { order: 'A-1' } }] }, { text: 'Your order A-1 has shipped.' }])
    const agent = defineAgent({
      name: 'support', driver: { model }, capabilities: [history()],
      tools: { lookup: { description: 'Look up an order', inputSchema: (await import('zod')).z.object({ order: (await import('zod')).z.string() }), execute: async ({ order }: { order: string }) => ({ order, status: 'shipped' }) } },
    })
    await runAgent(agent, { input: 'Where is my order?', threadId: 't' }).result
    const entries = await (await openHistory(agent, { threadId: 't' })).list()
    expect(entries.map(e => [e.role, e.content])).toEqual([['user', 'Where is my order?'], ['assistant', ''], ['assistant', 'Your order A-1 has shipped.']])
    expect(entries[1]!.messageData).toEqual({
      toolCalls: [{ toolCallId: expect.any(String), toolName: 'lookup', input: { order: 'A-1' } }],
      toolResults: [{ toolCallId: entries[1]!.messageData!.toolCalls![0]!.toolCallId, toolName: 'lookup', output: { type: 'json', value: { order: 'A-1', status: 'shipped' } } }],
    })
    for (const entry of entries) {
      expect(entry.id).toMatch(/^hist_[0-9a-f]{32}$/)
      expect(Date.parse(entry.createdAt)).not.toBeNaN()
      expect(entry.updatedAt).toBe(entry.createdAt)
    }
  })
})

describe('seed 004 stores and erasure', () => {
  it('erasing memory also erases its text from history kept in memory and in SQLite, outside the workspace', async () => {
    const { eraseMemoryScope, inMemoryMemoryStore, memory, openMemoryStore } = await import('../../src/capabilities/index.ts')
    const secret = 'my locker code is 4711'
    for (const store of [inMemoryHistoryStore(), sqliteHistoryStore({ file: join(tempDir(), 'h.db') })]) {
      const agent = defineAgent({
        name: 'support', driver: { model: scriptedModel([{ text: `Noted: ${secret}.` }]) },
        capabilities: [memory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' } } } }), history({ store })],
      })
      const { adapter, target } = await openMemoryStore(agent, {})
      await adapter.append(target, { kind: 'semantic', content: secret }, { audit: { via: 'api' } })
      await runAgent(agent, { input: `remember ${secret}`, threadId: 't' }).result
      const report = await eraseMemoryScope(adapter as never, target, { audit: { via: 'api' } })
      expect(report.copies.scrubbed.some(copy => copy.key.startsWith('history-store:history:'))).toBe(true)
      const entries = await (await openHistory(agent, { threadId: 't' })).list()
      expect(entries.map(e => e.content)).toEqual(['remember [erased]', 'Noted: [erased].'])
      await store.close()
    }
  })
})
