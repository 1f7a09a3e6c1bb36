import { describe, expect, it } from 'vitest'
import type { AgentTool, CapabilityContext, ToolExecutionContext } from '../../src/agent/types.ts'
import { memory } from '../../src/memory/capability.ts'
import { eventTimeWords, searchWithEventTime } from '../../src/memory/event-time.ts'
import { exportMemoryScope, importMemoryScope } from '../../src/memory/retention.ts'
import { inMemoryMemoryStore } from '../../src/memory/stores/in-memory.ts'
import { workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryStoreAdapter, MemoryStoreOptions } from '../../src/memory/types.ts'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import { isAgentError } from '../../src/errors.ts'
import { sqliteMemoryStore } from '../../src/memory/stores/sqlite.ts'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const target = { store: 'agent', scope: { agent: 'support' } }
const audit = { via: 'api' }

async function toolsOf(options: Partial<MemoryStoreOptions> = {}) {
  const tools: Record<string, AgentTool> = {}
  const context = {
    agent: 'support', run: { runId: 'run_1', threadId: 'thread_1' }, metadata: {},
    tools: { add(name: string, tool: AgentTool) { tools[name] = tool } }, instructions: { add() {} }, prompt: { add() {} }, messages: { transform() {} }, onFinish() {},
  } as unknown as CapabilityContext
  const factory = inMemoryMemoryStore()
  await memory({ stores: { agent: { adapter: factory, scope: { agent: 'support' }, write: { mode: 'tool' }, ...options } } }).resolve(context)
  const call = async (name: string, input: unknown): Promise<any> => {
    const tool = tools[name]!
    const parsed = tool.inputSchema.safeParse(input)
    if (!parsed.success) return { inputError: parsed.error.issues.map(issue => issue.message).join('; ') }
    const exec: ToolExecutionContext = { agent: 'support', runId: 'run_1', threadId: 'thread_1', toolName: name, toolCallId: 'call_1', metadata: {} }
    return tool.execute(parsed.data, exec)
  }
  return { call, adapter: await factory.create({ store: 'agent', agent: 'support', writable: true }) as MemoryStoreAdapter }
}

const contents = (result: { results: Array<{ content: string }> }) => result.results.map(r => r.content)

describe('event time (occurredAt)', () => {
  it('memory_remember keeps occurredAt as given, apart from createdAt, and memory_read and memory_search return it', async () => {
    const { call } = await toolsOf()
    const day = await call('memory_remember', { kind: 'episodic', content: 'The user ran a marathon', occurredAt: '2023-05-07' })
    const instant = await call('memory_remember', { kind: 'episodic', content: 'The user moved house', occurredAt: '2024-01-31T23:30:00-05:00' })
    expect(day.record.occurredAt).toBe('2023-05-07')
    expect(day.record.createdAt).not.toBe('2023-05-07')
    expect(Date.now() - Date.parse(day.record.createdAt)).toBeLessThan(60_000)
    expect((await call('memory_read', { id: instant.record.id })).record.occurredAt).toBe('2024-01-31T23:30:00-05:00')
    expect((await call('memory_search', { query: 'marathon' })).results[0].occurredAt).toBe('2023-05-07')
  })

  it('an occurredAt that is not an instant with a zone or a calendar date is an input error', async () => {
    const { call } = await toolsOf()
    for (const occurredAt of ['last Tuesday', '2023-02-30', '2023-05-07T10:00']) {
      expect((await call('memory_remember', { kind: 'episodic', content: 'x', occurredAt })).inputError).toMatch(/ISO 8601/)
    }
  })

  it('the adapter refuses an invalid occurredAt from code and writes nothing', async () => {
    const adapter = await inMemoryMemoryStore().create({ store: 'agent', agent: 'support', writable: true })
    await expect(adapter.append(target, { kind: 'semantic', content: 'x', occurredAt: 'yesterday' }, { audit })).rejects.toMatchObject({ code: 'MEMORY_RECORD_INVALID' })
    expect(await adapter.export(target)).toEqual([])
  })

  it('the weekday, day, month and year of the event date are searchable words of the record', async () => {
    const { call } = await toolsOf()
    await call('memory_remember', { kind: 'episodic', content: 'Caroline went to a support group', occurredAt: '2023-06-03' })
    await call('memory_remember', { kind: 'episodic', content: 'Caroline went to a pottery class', occurredAt: '2022-11-20' })
    expect(contents(await call('memory_search', { query: 'what did Caroline do in June 2023' }))[0]).toBe('Caroline went to a support group')
    expect(contents(await call('memory_search', { query: 'Caroline on Sunday' }))[0]).toBe('Caroline went to a pottery class')
    expect(eventTimeWords('2023-05-08T23:30:00-05:00')).toBe('Monday 8 May 2023')
    expect(eventTimeWords(undefined)).toBe('')
  })

  it('a record dated in May is found by "May" and "in May", and the modal verb "may" finds nothing', async () => {
    const { call } = await toolsOf()
    await call('memory_remember', { kind: 'episodic', content: 'Maria had dinner with her mom', occurredAt: '2023-05-03' })
    await call('memory_remember', { kind: 'episodic', content: 'Maria adopted a puppy', occurredAt: '2023-06-03' })
    expect(contents(await call('memory_search', { query: 'May' }))).toEqual(['Maria had dinner with her mom'])
    expect(contents(await call('memory_search', { query: 'What did Maria do in May 2023?' }))[0]).toBe('Maria had dinner with her mom')
    expect(contents(await call('memory_search', { query: 'what may help' }))).toEqual([])
  })

  it('occurredAfter and occurredBefore filter by event time, and by createdAt for records without one', async () => {
    const { call, adapter } = await toolsOf()
    await call('memory_remember', { kind: 'episodic', content: 'trip to Rome', occurredAt: '2021-04-10' })
    await call('memory_remember', { kind: 'episodic', content: 'trip to Oslo', occurredAt: '2023-08-01T12:00:00Z' })
    await adapter.append(target, { kind: 'episodic', content: 'trip to Lima', createdAt: '2022-06-15T00:00:00Z' }, { audit })
    expect(contents(await call('memory_search', { query: 'trip', occurredBefore: '2022-01-01' }))).toEqual(['trip to Rome'])
    expect(contents(await call('memory_search', { query: 'trip', occurredAfter: '2022-01-01', occurredBefore: '2023-01-01' }))).toEqual(['trip to Lima'])
    expect(contents(await call('memory_search', { query: 'trip', occurredAfter: '2023-08-01T12:00:00Z' }))).toEqual(['trip to Oslo'])
    // `after` / `before` still filter on createdAt: all three were written after 2022-01-01 except Lima's import time.
    expect(contents(await call('memory_search', { query: 'trip', before: '2023-01-01' }))).toEqual(['trip to Lima'])
  })

  it('occurredAfter not earlier than occurredBefore is an input error', async () => {
    const { call } = await toolsOf()
    expect((await call('memory_search', { query: 'x', occurredAfter: '2024-01-01', occurredBefore: '2023-01-01' })).inputError).toMatch(/occurredAfter. must be earlier/)
  })

  it('an event-time window holding only records ranked below the first 100 still gets its best records', async () => {
    const adapter = await inMemoryMemoryStore().create({ store: 'agent', agent: 'support', writable: true })
    // 150 strong matches in 2020, then 3 weak ones in 2024: the window's records rank below the top 100.
    for (let i = 0; i < 150; i++) await adapter.append(target, { kind: 'semantic', content: `garden garden garden note ${i}`, occurredAt: '2020-01-01' }, { audit })
    for (let i = 0; i < 3; i++) await adapter.append(target, { kind: 'semantic', content: `a long note that mentions the garden once among many other words ${i}`, occurredAt: '2024-03-0' + (i + 1) }, { audit })
    const hits = await searchWithEventTime(adapter, target, { query: 'garden', occurredAfter: '2024-01-01', limit: 5 })
    expect(hits.map(hit => hit.record.occurredAt).sort()).toEqual(['2024-03-01', '2024-03-02', '2024-03-03'])
  })

  it('an invalid occurredAfter from code is MEMORY_QUERY_INVALID', async () => {
    const adapter = await inMemoryMemoryStore().create({ store: 'agent', agent: 'support', writable: true })
    const error = await searchWithEventTime(adapter, target, { query: 'x', occurredAfter: 'soon' }).catch(e => e)
    expect(isAgentError(error) && error.code).toBe('MEMORY_QUERY_INVALID')
  })

  it('occurredAt survives a replay of the log and an export and import of the scope', async () => {
    const workspace = createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
    const adapter = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace, writable: true })
    const written = await adapter.append(target, { kind: 'episodic', content: 'graduation', occurredAt: '2019-06-21' }, { audit })
    const line = JSON.parse((await workspace.readText('memory:memory.jsonl'))!.trim()) as Record<string, unknown>
    expect(line.occurredAt).toBe('2019-06-21')
    const replayed = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace: createWorkspace({ storage: workspace.storage }), writable: true })
    expect((await replayed.read(target, written.id))?.occurredAt).toBe('2019-06-21')
    const other = await inMemoryMemoryStore().create({ store: 'agent', agent: 'support', writable: true })
    await importMemoryScope(other, target, await exportMemoryScope(adapter, target), { audit: { via: 'import' } })
    expect((await other.export(target))[0]!.occurredAt).toBe('2019-06-21')
  })

  it('a log line without occurredAt (written before the field existed) still reads, and the record has no event time', async () => {
    const workspace = createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
    const adapter = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace, writable: true })
    const written = await adapter.append(target, { kind: 'semantic', content: 'plain fact' }, { audit })
    expect(await workspace.readText('memory:memory.jsonl')).not.toContain('occurredAt')
    const replayed = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace: createWorkspace({ storage: workspace.storage }), writable: true })
    const record = await replayed.read(target, written.id)
    expect(record?.content).toBe('plain fact')
    expect(record && 'occurredAt' in record).toBe(false)
  })

  it('the SQLite store keeps occurredAt through a new connection and searches its date words', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-event-time-'))
    try {
      const file = join(dir, 'memory.db')
      const first = sqliteMemoryStore({ file })
      const written = await first.create().append(target, { kind: 'episodic', content: 'Caroline went to a support group', occurredAt: '2023-06-03' }, { audit })
      await first.close()
      const second = sqliteMemoryStore({ file })
      const adapter = second.create()
      expect((await adapter.read(target, written.id))?.occurredAt).toBe('2023-06-03')
      expect((await adapter.search(target, { query: 'June 2023 Saturday' })).map(hit => hit.record.id)).toEqual([written.id])
      expect((await searchWithEventTime(adapter, target, { query: 'support group', occurredBefore: '2023-01-01' }))).toEqual([])
      await second.close()
    }
    finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
