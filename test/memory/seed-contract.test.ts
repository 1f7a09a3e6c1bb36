/**
 * One test per sentence of the capability document (/work/shared/seeds/002_50d6403dcb0f9731.txt),
 * in the document's order, each named after the behaviour the sentence requires. Everything runs
 * through the public API: defineAgent + runAgent + resolveApproval with a scripted AI SDK model or
 * a custom-run driver, a real workspace (unstorage fs driver in a temp dir, or the memory driver),
 * and the real store adapters.
 */
import { mkdtempSync, readFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { createWorkspace, defineAgent, resolveApproval, runAgent } from '../../src/index.ts'
import type { AgentDefinition, AgentRun, AgentRunEvent, AgentRunResult, AgentUser, CustomRunContext, ToolCallOutcome } from '../../src/index.ts'
import { inMemoryMemoryStore, memory, memorySlot, openMemoryStore, workspaceJsonlMemoryStore } from '../../src/capabilities/index.ts'
import type { MemoryOptions, MemoryRecord, MemoryStoreAdapter, MemoryStoreFactory, MemoryStoreOptions, MemoryScopeContext } from '../../src/capabilities/index.ts'
import { scriptedModel } from '../../src/testing/index.ts'
import type { ProviderRunContext } from '../../src/index.ts'
import { verifyLog } from '../../src/memory/event-log.ts'
import { formatEvent } from '../../src/cli/format.ts'
import { describeAgent } from '../../src/cli/info.ts'
import type { Workspace } from '../../src/workspace/types.ts'

// ---- harness ----

function fsWorkspace(options: { writable?: boolean; dir?: string } = {}): Workspace & { dir: string } {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'vam-seed-'))
  return createWorkspace({ dir, ...(options.writable === false ? { writable: false } : {}) }) as Workspace & { dir: string }
}

function memoryWorkspace(): Workspace {
  return createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
}

interface Finished { events: AgentRunEvent[]; result: AgentRunResult }

async function finish(run: AgentRun | Promise<AgentRun>): Promise<Finished> {
  const awaited = await run
  const events: AgentRunEvent[] = []
  for await (const event of awaited) events.push(event)
  return { events, result: await awaited.result }
}

type ScriptedCall = [toolName: string, input: Record<string, unknown>]

/** A custom-run driver that makes the given calls through `ctx.tools` and keeps what it saw. */
function scriptedRun(calls: ScriptedCall[], seen: { contexts: CustomRunContext[]; outcomes: ToolCallOutcome[] } = { contexts: [], outcomes: [] }) {
  return {
    seen,
    driver: {
      async run(ctx: CustomRunContext) {
        seen.contexts.push(ctx)
        if (ctx.input === undefined) { ctx.write('continued'); return } // resumed after an approval
        for (const [name, input] of calls) {
          const tool = ctx.tools[name]
          if (!tool) { seen.outcomes.push({ status: 'error', toolCallId: 'none', error: { code: 'NO_TOOL', message: name, why: name, fix: '' } }); continue }
          seen.outcomes.push(await tool.call(input))
        }
        ctx.write('done')
      },
    },
  }
}

function agentWith(options: MemoryOptions, driver: AgentDefinition['driver'], workspace?: Workspace): AgentDefinition {
  return defineAgent({ name: 'support', driver, ...(workspace ? { workspace } : {}), capabilities: [memory(options)] })
}

/** The tool names a custom-run driver receives for these memory options. */
async function toolNames(options: MemoryOptions, workspace: Workspace = memoryWorkspace(), user?: AgentUser): Promise<string[]> {
  const { driver, seen } = scriptedRun([])
  await finish(runAgent(agentWith(options, driver, workspace), { input: 'hi', ...(user ? { user } : {}) }))
  return Object.keys(seen.contexts[0]?.tools ?? {}).sort()
}

/** Runs the calls through a custom-run driver and returns their outcomes in order. */
async function callTools(agent: (driver: AgentDefinition['driver']) => AgentDefinition, calls: ScriptedCall[], run: { user?: AgentUser; threadId?: string } = {}): Promise<ToolCallOutcome[]> {
  const { driver, seen } = scriptedRun(calls)
  await finish(runAgent(agent(driver), { input: 'go', ...run }))
  return seen.outcomes
}

function ok(outcome: ToolCallOutcome | undefined): any {
  if (outcome?.status !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(outcome)}`)
  return outcome.output
}

function errorCode(outcome: ToolCallOutcome | undefined): string | undefined {
  return outcome?.status === 'error' ? outcome.error.code : undefined
}

function jsonlLines(workspace: { dir: string }, path = 'memory/memory.jsonl'): Array<Record<string, any>> {
  const file = join(workspace.dir, path)
  if (!existsSync(file)) return []
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))
}

async function adapterOf(store: MemoryStoreAdapter | MemoryStoreFactory, workspace?: Workspace): Promise<MemoryStoreAdapter> {
  if ('create' in store && typeof store.create === 'function') return store.create({ store: 'agent', agent: 'support', writable: true, ...(workspace ? { workspace } : {}) })
  return store as MemoryStoreAdapter
}

const toolWrites = (extra: Partial<MemoryStoreOptions> = {}): MemoryStoreOptions => ({ adapter: workspaceJsonlMemoryStore(), scope: { agent: 'support' }, write: { mode: 'tool' }, ...extra })

// ---- "Memory" (introduction) ----

describe('seed: Memory', () => {
  it('memory() lets an Agent search, read, remember and delete scoped durable records through its stores', async () => {
    const workspace = fsWorkspace()
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: toolWrites() } }, driver, workspace)
    const [remembered] = await callTools(agent, [['memory_remember', { kind: 'semantic', content: 'The customer prefers email' }]])
    const id = ok(remembered).record.id as string
    // Durable: a new workspace object over the same folder (a restarted process) still has it.
    const reopened = fsWorkspace({ dir: workspace.dir })
    const again = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: toolWrites() } }, driver, reopened)
    const [search, read, del, after] = await callTools(again, [
      ['memory_search', { query: 'email' }], ['memory_read', { id }], ['memory_delete', { id, reason: 'done' }], ['memory_search', { query: 'email' }],
    ])
    expect(ok(search).results.map((r: { id: string }) => r.id)).toEqual([id])
    expect(ok(read).record.content).toBe('The customer prefers email')
    expect(ok(del)).toEqual({ action: 'deleted', store: 'agent', id, reason: 'done' })
    expect(ok(after).results).toEqual([])
  })

  it('memory() adds memory_search and memory_read, plus memory_remember and memory_delete when a store opts into tool writes', async () => {
    expect(await toolNames({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' } } } })).toEqual(['memory_read', 'memory_search'])
    expect(await toolNames({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' }, write: { mode: 'tool' } } } })).toEqual(['memory_delete', 'memory_read', 'memory_remember', 'memory_search'])
  })

  it('memory is explicit Agent behavior: a run that calls no memory tool writes no record', async () => {
    const workspace = fsWorkspace()
    const model = scriptedModel([{ text: 'I will remember that you like tea.' }])
    const agent = agentWith({ stores: { agent: toolWrites() } }, { model }, workspace)
    const { result } = await finish(runAgent(agent, { input: 'Please remember that I like tea' }))
    expect(result.status).toBe('completed')
    expect(jsonlLines(workspace)).toEqual([])
  })

  it('memory is not Chat History: earlier messages of the thread are not memory records', async () => {
    const workspace = fsWorkspace()
    const first = agentWith({ stores: { agent: toolWrites() } }, { model: scriptedModel([{ text: 'Noted.' }]) }, workspace)
    const { result } = await finish(runAgent(first, { input: 'my favourite colour is turquoise' }))
    const second = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: toolWrites() } }, driver, workspace)
    const [search] = await callTools(second, [['memory_search', { query: 'turquoise' }]], { threadId: result.threadId })
    expect(ok(search).results).toEqual([])
    expect(jsonlLines(workspace)).toEqual([])
  })

  it('each store owns its adapter, scope, allowed kinds, read tools and write policy', async () => {
    const workspace = fsWorkspace()
    const notes = inMemoryMemoryStore()
    const options: MemoryOptions = { stores: {
      agent: { adapter: workspaceJsonlMemoryStore(), scope: { agent: 'support' }, allowKinds: ['semantic'], write: { mode: 'tool', policy: 'allow' } },
      notes: { adapter: notes, scope: { agent: 'support', user: 'alice' }, allowKinds: ['episodic'], read: { tools: { search: false } }, write: { mode: 'tool', policy: 'deny' } },
    } }
    const agent = (driver: AgentDefinition['driver']) => agentWith(options, driver, workspace)
    const outcomes = await callTools(agent, [
      ['memory_remember', { kind: 'semantic', content: 'shared fact' }],
      ['memory_remember', { kind: 'episodic', content: 'event' }],
      ['memory_remember', { store: 'notes', kind: 'episodic', content: 'event' }],
      ['memory_search', { store: 'notes', query: 'event' }],
    ])
    expect(ok(outcomes[0]).store).toBe('agent')
    expect(errorCode(outcomes[1])).toBe('MEMORY_KIND_NOT_ALLOWED')
    expect(errorCode(outcomes[2])).toBe('TOOL_DENIED_BY_POLICY')
    expect(errorCode(outcomes[3])).toBe('MEMORY_OPERATION_NOT_ALLOWED')
    expect(jsonlLines(workspace).map((l) => [l.store, l.scope])).toEqual([['agent', { agent: 'support' }]])
    expect(await (await adapterOf(notes)).export({ store: 'notes', scope: { agent: 'support', user: 'alice' } })).toEqual([])
  })

  it('the built-in workspaceJsonlMemoryStore() keeps records in the Agent Workspace', async () => {
    const workspace = fsWorkspace()
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: toolWrites() } }, driver, workspace)
    const [remembered] = await callTools(agent, [['memory_remember', { kind: 'semantic', content: 'kept in the workspace' }]])
    expect(await workspace.has('memory/memory.jsonl')).toBe(true)
    expect(jsonlLines(workspace)[0]).toMatchObject({ recordId: ok(remembered).record.id, content: 'kept in the workspace' })
  })
})

// ---- "Configure memory" ----

describe('seed: Configure memory', () => {
  it('configure at least one store with an explicit scope: no store or no scope is an error', () => {
    expect(() => memory({ stores: {} })).toThrow(/MEMORY_STORES_REQUIRED/)
    expect(() => memory({ stores: { agent: { adapter: workspaceJsonlMemoryStore() } as unknown as MemoryStoreOptions } })).toThrow(/MEMORY_SCOPE_REQUIRED/)
  })

  it('the documented example (model driver, workspace, one approval-gated JSONL store) runs and asks for approval before writing', async () => {
    const workspace = fsWorkspace()
    const model = scriptedModel([{ toolCalls: [{ toolName: 'memory_remember', input: { kind: 'semantic', content: 'The customer uses the Pro plan' } }] }, { text: 'Saved.' }])
    const agent = defineAgent({
      driver: { model },
      workspace,
      capabilities: [
        memory({
          stores: {
            agent: {
              adapter: workspaceJsonlMemoryStore(),
              scope: { agent: 'support' },
              write: { mode: 'tool', policy: 'require-approval' },
            },
          },
        }),
      ],
    })
    const requested = await finish(runAgent(agent, { input: 'remember my plan' }))
    expect(requested.result.status).toBe('awaiting-approval')
    expect(jsonlLines(workspace)).toEqual([])
    const approved = await finish(resolveApproval(agent, requested.result.approvals[0]!.id, { approved: true, approver: 'admin' }))
    expect(approved.result.status).toBe('completed')
    expect(jsonlLines(workspace)).toHaveLength(1)
    expect(jsonlLines(workspace)[0]).toMatchObject({ scope: { agent: 'support' }, content: 'The customer uses the Pro plan' })
  })
})

// ---- "Agent-visible tool contract" ----

describe('seed: Agent-visible tool contract', () => {
  async function schemas(): Promise<Record<string, { required: string[]; properties: Record<string, unknown> }>> {
    const { driver, seen } = scriptedRun([])
    await finish(runAgent(agentWith({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' }, write: { mode: 'tool' } } } }, driver, memoryWorkspace()), { input: 'hi' }))
    return Object.fromEntries(Object.entries(seen.contexts[0]!.tools).map(([name, tool]) => [name, tool.inputSchema as { required: string[]; properties: Record<string, unknown> }]))
  }

  it('memory_search is added when a store allows search and takes query (required), store, kinds, tags, after, before, limit', async () => {
    const search = (await schemas()).memory_search!
    expect(search.required).toEqual(['query'])
    // The documented inputs, plus the keywords/topics filters of the hosted-memory document and the event-time filters.
    const documented = ['query', 'store', 'kinds', 'tags', 'after', 'before', 'limit']
    expect(Object.keys(search.properties).filter((key) => documented.includes(key))).toEqual(documented)
    expect(Object.keys(search.properties).filter((key) => !documented.includes(key))).toEqual(['keywords', 'topics', 'occurredAfter', 'occurredBefore'])
    expect(await toolNames({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' }, read: { tools: { search: false } } } } })).toEqual(['memory_read'])
  })

  it('memory_read is added when a store allows exact reads and takes id (required), store', async () => {
    const read = (await schemas()).memory_read!
    expect(read.required).toEqual(['id'])
    expect(Object.keys(read.properties)).toEqual(['id', 'store'])
    expect(await toolNames({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' }, read: { tools: { read: false } } } } })).toEqual(['memory_search'])
  })

  it('memory_remember is added when a store sets write.mode tool and takes content and kind (required), store, title, tags, metadata, pinned, confidence, supersedes, provenance', async () => {
    const remember = (await schemas()).memory_remember!
    expect(remember.required).toEqual(['content', 'kind'])
    // The documented inputs, plus episode, keywords, topics, rawExtract and recallTriggers from the hosted-memory document, and the event time.
    const documented = ['content', 'kind', 'store', 'title', 'tags', 'metadata', 'pinned', 'confidence', 'supersedes', 'provenance']
    expect(Object.keys(remember.properties).filter((key) => documented.includes(key))).toEqual(documented)
    expect(Object.keys(remember.properties).filter((key) => !documented.includes(key))).toEqual(['episode', 'keywords', 'topics', 'rawExtract', 'recallTriggers', 'occurredAt'])
  })

  it('memory_delete is added when a store sets write.mode tool and takes id (required), store, reason', async () => {
    const del = (await schemas()).memory_delete!
    expect(del.required).toEqual(['id'])
    expect(Object.keys(del.properties)).toEqual(['id', 'store', 'reason'])
  })

  it('the Agent can omit store when the Capability has one store or a store named agent', async () => {
    const one = (driver: AgentDefinition['driver']) => agentWith({ stores: { notes: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' }, write: { mode: 'tool' } } } }, driver, memoryWorkspace())
    expect(ok((await callTools(one, [['memory_remember', { kind: 'semantic', content: 'x' }]]))[0]).store).toBe('notes')
    const named = (driver: AgentDefinition['driver']) => agentWith({ stores: {
      other: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' }, write: { mode: 'tool' } },
      agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' }, write: { mode: 'tool' } },
    } }, driver, memoryWorkspace())
    expect(ok((await callTools(named, [['memory_remember', { kind: 'semantic', content: 'x' }]]))[0]).store).toBe('agent')
  })

  it('otherwise the Agent must pass store: omitting it is a tool error listing the stores', async () => {
    const two = (driver: AgentDefinition['driver']) => agentWith({ stores: {
      facts: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' } },
      notes: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' } },
    } }, driver, memoryWorkspace())
    const [omitted, passed] = await callTools(two, [['memory_search', { query: 'x' }], ['memory_search', { query: 'x', store: 'notes' }]])
    expect(errorCode(omitted)).toBe('MEMORY_STORE_REQUIRED')
    expect(omitted?.status === 'error' && omitted.error.message).toContain('"facts", "notes"')
    expect(ok(passed).store).toBe('notes')
  })
})

// ---- "How memory works" ----

describe('seed: How memory works', () => {
  it('when the Capability resolves, memory() creates each store adapter and resolves each store scope (at every invocation)', async () => {
    const created: string[] = []
    const scoped: MemoryScopeContext[] = []
    const inner = inMemoryMemoryStore()
    const factory: MemoryStoreFactory = { kind: 'counting', create: async (context) => { created.push(context.store); return adapterOf(inner) } }
    const { driver } = scriptedRun([])
    const agent = agentWith({ stores: { agent: { adapter: factory, scope: (ctx) => { scoped.push(ctx); return { agent: ctx.agent } } } } }, driver, memoryWorkspace())
    const first = await finish(runAgent(agent, { input: 'one' }))
    const second = await finish(runAgent(agent, { input: 'two' }))
    expect(created).toEqual(['agent', 'agent'])
    expect(scoped.map((c) => c.run.runId)).toEqual([first.result.runId, second.result.runId])
  })

  it('every operation uses the store scope, so the Agent cannot read or write records in another scope', async () => {
    const workspace = fsWorkspace()
    const options: MemoryOptions = { stores: { agent: { adapter: workspaceJsonlMemoryStore(), scope: ({ user }) => (user ? { agent: 'support', user: user.id } : undefined), write: { mode: 'tool' } } } }
    const agent = (driver: AgentDefinition['driver']) => agentWith(options, driver, workspace)
    const [alices] = await callTools(agent, [['memory_remember', { kind: 'profile', content: 'Alice is allergic to nuts' }]], { user: { id: 'alice' } })
    const aliceId = ok(alices).record.id
    const bob = await callTools(agent, [
      ['memory_search', { query: 'allergic' }], ['memory_read', { id: aliceId }], ['memory_delete', { id: aliceId }],
      ['memory_remember', { kind: 'profile', content: 'takeover', supersedes: [aliceId] }],
    ], { user: { id: 'bob' } })
    expect(ok(bob[0]).results).toEqual([])
    expect(bob.slice(1).map(errorCode)).toEqual(['MEMORY_RECORD_NOT_FOUND', 'MEMORY_RECORD_NOT_FOUND', 'MEMORY_SUPERSEDE_NOT_FOUND'])
    expect(jsonlLines(workspace).map((l) => [l.type, l.scope.user])).toEqual([['remember', 'alice']])
  })

  it('memory_remember adds provenance from the current Agent Invocation: runId, threadId, source tool, toolName memory_remember', async () => {
    const workspace = fsWorkspace()
    const { driver } = scriptedRun([['memory_remember', { kind: 'semantic', content: 'x' }]])
    const { result } = await finish(runAgent(agentWith({ stores: { agent: toolWrites() } }, driver, workspace), { input: 'go' }))
    expect(jsonlLines(workspace)[0]!.provenance).toEqual({ runId: result.runId, threadId: result.threadId, source: 'tool', toolName: 'memory_remember' })
  })

  it('when supersedes lists record ids, the store marks those records as superseded', async () => {
    const workspace = fsWorkspace()
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: toolWrites() } }, driver, workspace)
    const [a, b] = await callTools(agent, [['memory_remember', { kind: 'profile', content: 'plan: Basic' }], ['memory_remember', { kind: 'profile', content: 'team: Blue' }]])
    const ids = [ok(a).record.id, ok(b).record.id]
    const [c] = await callTools(agent, [['memory_remember', { kind: 'profile', content: 'plan: Pro, team: Red', supersedes: ids }]])
    const [readA, readB, search] = await callTools(agent, [['memory_read', { id: ids[0] }], ['memory_read', { id: ids[1] }], ['memory_search', { query: 'plan' }]])
    expect([ok(readA).record.status, ok(readB).record.status]).toEqual(['superseded', 'superseded'])
    expect(ok(readA).record.supersededBy).toBe(ok(c).record.id)
    expect(ok(search).results.map((r: { id: string }) => r.id)).toEqual([ok(c).record.id])
  })

  it('memory_delete is a soft delete: the record disappears from the tools but the store keeps it as deleted', async () => {
    const store = inMemoryMemoryStore()
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: { adapter: store, scope: { agent: 'support' }, write: { mode: 'tool' } } } }, driver, memoryWorkspace())
    const [created] = await callTools(agent, [['memory_remember', { kind: 'semantic', content: 'to forget' }]])
    const id = ok(created).record.id
    const [deleted, read] = await callTools(agent, [['memory_delete', { id, reason: 'asked to' }], ['memory_read', { id }]])
    expect(ok(deleted).action).toBe('deleted')
    expect(errorCode(read)).toBe('MEMORY_RECORD_NOT_FOUND')
    const exported = await (await adapterOf(store)).export({ store: 'agent', scope: { agent: 'support' } })
    expect(exported.map((r: MemoryRecord) => [r.id, r.status, r.content, r.deleteReason])).toEqual([[id, 'deleted', 'to forget', 'asked to']])
  })

  it('the JSONL store appends a tombstone for memory_delete and keeps the original line', async () => {
    const workspace = fsWorkspace()
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: toolWrites() } }, driver, workspace)
    const [created] = await callTools(agent, [['memory_remember', { kind: 'semantic', content: 'original' }]])
    const before = readFileSync(join(workspace.dir, 'memory/memory.jsonl'), 'utf8')
    await callTools(agent, [['memory_delete', { id: ok(created).record.id, reason: 'obsolete' }]])
    const after = readFileSync(join(workspace.dir, 'memory/memory.jsonl'), 'utf8')
    expect(after.startsWith(before)).toBe(true)
    expect(jsonlLines(workspace).map((l) => [l.type, l.recordId, l.version])).toEqual([['remember', ok(created).record.id, 1], ['delete', ok(created).record.id, 2]])
    expect(jsonlLines(workspace)[1]).toMatchObject({ reason: 'obsolete' })
  })

  it('memory_remember checks allowKinds for the selected store', async () => {
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: {
      agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' }, allowKinds: ['profile'], write: { mode: 'tool' } },
      log: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' }, allowKinds: ['episodic'], write: { mode: 'tool' } },
    } }, driver, memoryWorkspace())
    const outcomes = await callTools(agent, [
      ['memory_remember', { kind: 'episodic', content: 'x' }],
      ['memory_remember', { store: 'log', kind: 'episodic', content: 'x' }],
      ['memory_remember', { store: 'log', kind: 'profile', content: 'x' }],
    ])
    expect(outcomes.map((o) => o.status === 'ok' ? 'ok' : errorCode(o))).toEqual(['MEMORY_KIND_NOT_ALLOWED', 'ok', 'MEMORY_KIND_NOT_ALLOWED'])
    expect(outcomes[0]?.status === 'error' && outcomes[0].error.message).toContain('"profile"')
  })

  it('tool calls for a store that does not allow the operation fail', async () => {
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: {
      agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' }, write: { mode: 'tool' } },
      archive: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' }, read: { tools: { search: false, read: false } } },
    } }, driver, memoryWorkspace())
    const outcomes = await callTools(agent, [
      ['memory_search', { store: 'archive', query: 'x' }], ['memory_read', { store: 'archive', id: 'x' }],
      ['memory_remember', { store: 'archive', kind: 'semantic', content: 'x' }], ['memory_delete', { store: 'archive', id: 'x' }],
    ])
    expect(outcomes.map(errorCode)).toEqual(Array(4).fill('MEMORY_OPERATION_NOT_ALLOWED'))
  })
})

// ---- "Workspace JSONL store" ----

describe('seed: Workspace JSONL store', () => {
  it('workspaceJsonlMemoryStore() appends records, supersede events and delete tombstones to a JSONL file in the Agent Workspace', async () => {
    const workspace = fsWorkspace()
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: toolWrites() } }, driver, workspace)
    const [a] = await callTools(agent, [['memory_remember', { kind: 'semantic', content: 'v1' }]])
    const [b] = await callTools(agent, [['memory_remember', { kind: 'semantic', content: 'v2', supersedes: [ok(a).record.id] }]])
    await callTools(agent, [['memory_delete', { id: ok(b).record.id }]])
    expect(jsonlLines(workspace).map((l) => l.type)).toEqual(['remember', 'remember', 'supersede', 'delete'])
  })

  it('each line has the store name, scope, version and a SHA-256 digest that chains and verifies', async () => {
    const workspace = fsWorkspace()
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: toolWrites({ scope: { agent: 'support', tenant: 'acme' } }) } }, driver, workspace)
    const [a] = await callTools(agent, [['memory_remember', { kind: 'semantic', content: 'one' }]])
    await callTools(agent, [['memory_delete', { id: ok(a).record.id }]])
    const lines = jsonlLines(workspace)
    for (const line of lines) {
      expect(line.store).toBe('agent')
      expect(line.scope).toEqual({ agent: 'support', tenant: 'acme' })
      expect(line.digest).toMatch(/^[0-9a-f]{64}$/)
    }
    expect(lines.map((l) => l.version)).toEqual([1, 2])
    expect(lines[1]!.prev).toBe(lines[0]!.digest)
    expect((await verifyLog(workspace, 'memory/memory.jsonl')).ok).toBe(true)
  })

  it('search counts case-insensitive matches of query in title, content and tags, and returns 10 results by default', async () => {
    const workspace = memoryWorkspace()
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: toolWrites() } }, driver, workspace)
    const writes: ScriptedCall[] = [
      ['memory_remember', { kind: 'semantic', content: 'nothing here', title: 'About TEA' }],
      ['memory_remember', { kind: 'semantic', content: 'nothing here either', tags: ['Tea'] }],
      ['memory_remember', { kind: 'semantic', content: 'Tea, tea and more TEA' }],
      ['memory_remember', { kind: 'semantic', content: 'coffee only' }],
      ...Array.from({ length: 10 }, (_, i): ScriptedCall => ['memory_remember', { kind: 'semantic', content: `filler tea ${i}` }]),
    ]
    await callTools(agent, writes)
    const [all, coffee] = await callTools(agent, [['memory_search', { query: 'tEa' }], ['memory_search', { query: 'COFFEE' }]])
    expect(ok(all).results).toHaveLength(10)
    expect(ok(all).results[0].content).toBe('Tea, tea and more TEA')
    expect(ok(coffee).results.map((r: { content: string }) => r.content)).toEqual(['coffee only'])
    const [wide] = await callTools(agent, [['memory_search', { query: 'tea', limit: 50 }]])
    const contents = ok(wide).results.map((r: { title?: string; tags: string[]; content: string }) => r.title ?? r.tags[0] ?? r.content)
    expect(contents).toContain('About TEA')
    expect(contents).toContain('Tea')
    expect(ok(wide).results).toHaveLength(13)
  })
})

// ---- "Requirements" ----

describe('seed: Requirements', () => {
  it('memory() requires a stores map', () => {
    expect(() => memory(undefined as unknown as MemoryOptions)).toThrow(/MEMORY_STORES_REQUIRED/)
    expect(() => memory({} as MemoryOptions)).toThrow(/MEMORY_STORES_REQUIRED/)
  })

  it('each store requires an adapter and a scope with at least one non-empty field', () => {
    expect(() => memory({ stores: { agent: { scope: { agent: 'a' } } as unknown as MemoryStoreOptions } })).toThrow(/MEMORY_ADAPTER_REQUIRED/)
    expect(() => memory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: '' } } } })).toThrow(/MEMORY_SCOPE_REQUIRED/)
  })

  it('workspaceJsonlMemoryStore() requires a Workspace', async () => {
    const { driver } = scriptedRun([])
    const { result } = await finish(runAgent(agentWith({ stores: { agent: { adapter: workspaceJsonlMemoryStore(), scope: { agent: 'support' } } } }, driver), { input: 'hi' }))
    expect(result.status).toBe('failed')
    expect(result.error?.code).toBe('MEMORY_WORKSPACE_REQUIRED')
  })

  it('workspaceJsonlMemoryStore() requires write access when the Agent remembers or deletes records', async () => {
    const writable = fsWorkspace()
    await callTools((driver) => agentWith({ stores: { agent: toolWrites() } }, driver, writable), [['memory_remember', { kind: 'semantic', content: 'saved before' }]])
    const readOnly = fsWorkspace({ dir: writable.dir, writable: false })
    const { driver, seen } = scriptedRun([])
    const failed = await finish(runAgent(agentWith({ stores: { agent: toolWrites() } }, driver, readOnly), { input: 'go' }))
    expect(failed.result.error?.code).toBe('MEMORY_WORKSPACE_READ_ONLY')
    expect(seen.contexts).toHaveLength(0)
    // A store the model only reads runs on the read-only workspace (the host keeps its transcript in memory).
    const outcomes = await callTools((run) => agentWith({ stores: { agent: { adapter: workspaceJsonlMemoryStore(), scope: { agent: 'support' } } } }, run, readOnly), [['memory_search', { query: 'saved' }]])
    expect(ok(outcomes[0]).results.map((r: { content: string }) => r.content)).toEqual(['saved before'])
  })

  it('a custom adapter implements search, read, append, delete and export, and memory() uses it', async () => {
    const inner = await adapterOf(inMemoryMemoryStore())
    const calls: string[] = []
    const custom: MemoryStoreAdapter = {
      search: (t, q) => { calls.push('search'); return inner.search(t, q) },
      read: (t, id) => { calls.push('read'); return inner.read(t, id) },
      append: (t, input, o) => { calls.push('append'); return inner.append(t, input, o) },
      delete: (t, id, o) => { calls.push('delete'); return inner.delete(t, id, o) },
      export: (t) => { calls.push('export'); return inner.export(t) },
    }
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: { adapter: custom, scope: { agent: 'support' }, write: { mode: 'tool' } } } }, driver, memoryWorkspace())
    const [created] = await callTools(agent, [['memory_remember', { kind: 'semantic', content: 'custom' }]])
    await callTools(agent, [['memory_search', { query: 'custom' }], ['memory_delete', { id: ok(created).record.id }]])
    expect(calls).toEqual(['append', 'search', 'read', 'delete'])
    expect((await custom.export({ store: 'agent', scope: { agent: 'support' } })).map((r) => r.status)).toEqual(['deleted'])
    const { export: _omitted, ...incomplete } = custom
    expect(() => memory({ stores: { agent: { adapter: incomplete as MemoryStoreAdapter, scope: { agent: 'a' } } } })).toThrow(/MEMORY_ADAPTER_REQUIRED.*export/)
  })

  it('a MemoryStoreFactory has a kind and a create(context) function that returns the adapter', async () => {
    const inner = inMemoryMemoryStore()
    const contexts: unknown[] = []
    const factory: MemoryStoreFactory = { kind: 'mine', create: (context) => { contexts.push(context); return adapterOf(inner) } }
    const workspace = memoryWorkspace()
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: { adapter: factory, scope: { agent: 'support' }, write: { mode: 'tool' } } } }, driver, workspace)
    const [created] = await callTools(agent, [['memory_remember', { kind: 'semantic', content: 'via factory' }]], { user: { id: 'alice' } })
    expect(ok(created).record.kind).toBe('semantic')
    expect(contexts).toEqual([{ store: 'agent', agent: 'support', workspace, user: { id: 'alice' }, writable: true }])
    expect(() => memory({ stores: { agent: { adapter: { kind: 'mine' } as unknown as MemoryStoreFactory, scope: { agent: 'a' } } } })).toThrow(/MEMORY_ADAPTER_REQUIRED/)
  })
})

// ---- "Security and approval" ----

describe('seed: Security and approval', () => {
  it('read tools never require approval, even on a store whose writes require approval', async () => {
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: toolWrites({ write: { mode: 'tool', policy: 'require-approval' } }) } }, driver, fsWorkspace())
    const outcomes = await callTools(agent, [['memory_search', { query: 'x' }], ['memory_read', { id: 'mem_x' }]])
    expect(outcomes.map((o) => o.status === 'ok' ? 'ok' : errorCode(o))).toEqual(['ok', 'MEMORY_RECORD_NOT_FOUND'])
  })

  it('write tools exist only for stores with write.mode tool', async () => {
    const names = await toolNames({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' }, write: { mode: 'off', policy: 'allow' } } } })
    expect(names).toEqual(['memory_read', 'memory_search'])
  })

  it('write.policy "allow" (the default) runs memory_remember and memory_delete without approval', async () => {
    const workspace = fsWorkspace()
    const { driver, seen } = scriptedRun([['memory_remember', { kind: 'semantic', content: 'x' }]])
    const { result } = await finish(runAgent(agentWith({ stores: { agent: toolWrites() } }, driver, workspace), { input: 'go' }))
    expect(result.status).toBe('completed')
    const id = ok(seen.outcomes[0]).record.id
    const [del] = await callTools((d) => agentWith({ stores: { agent: toolWrites() } }, d, workspace), [['memory_delete', { id }]])
    expect(ok(del).action).toBe('deleted')
    expect(jsonlLines(workspace).map((l) => l.type)).toEqual(['remember', 'delete'])
  })

  it('write.policy "require-approval" stops the call with an approval request, and the write runs after a user approves it', async () => {
    const workspace = fsWorkspace()
    const model = scriptedModel([{ toolCalls: [{ toolName: 'memory_remember', input: { kind: 'semantic', content: 'Ticket 42 is urgent' } }] }, { text: 'Saved it.' }])
    const agent = agentWith({ stores: { agent: toolWrites({ write: { mode: 'tool', policy: 'require-approval' } }) } }, { model }, workspace)
    const requested = await finish(runAgent(agent, { input: 'remember ticket 42', user: { id: 'alice' } }))
    expect(requested.result.status).toBe('awaiting-approval')
    const approval = requested.result.approvals[0]!
    expect(approval.reason).toBe('Remember in store "agent" (kind semantic): "Ticket 42 is urgent"')
    expect(jsonlLines(workspace)).toEqual([])
    const approved = await finish(resolveApproval(agent, approval.id, { approved: true, approver: 'carol' }))
    expect(approved.result.status).toBe('completed')
    const [line] = jsonlLines(workspace)
    expect(line).toMatchObject({ content: 'Ticket 42 is urgent', scope: { agent: 'support' }, audit: { approver: 'carol', user: 'alice', via: 'tool' } })
  })

  it('write.policy "deny" rejects writes to that store and writes nothing', async () => {
    const workspace = fsWorkspace()
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: toolWrites({ write: { mode: 'tool', policy: 'deny' } }) } }, driver, workspace)
    const outcomes = await callTools(agent, [['memory_remember', { kind: 'semantic', content: 'x' }], ['memory_delete', { id: 'mem_x' }]])
    expect(outcomes.map(errorCode)).toEqual(['TOOL_DENIED_BY_POLICY', 'TOOL_DENIED_BY_POLICY'])
    expect(jsonlLines(workspace)).toEqual([])
  })

  it('the store scope comes from configuration or from a scope function that receives the Capability context', async () => {
    const workspace = fsWorkspace()
    const options: MemoryOptions = { stores: {
      agent: { adapter: workspaceJsonlMemoryStore(), scope: { agent: 'support', project: 'p1' }, write: { mode: 'tool' } },
      user: { adapter: workspaceJsonlMemoryStore(), scope: (ctx) => (ctx.user ? { agent: ctx.agent, user: ctx.user.id, tenant: String(ctx.metadata.tenant) } : undefined), write: { mode: 'tool' } },
    } }
    const { driver } = scriptedRun([['memory_remember', { kind: 'semantic', content: 'Prefers tea' }], ['memory_remember', { store: 'user', kind: 'semantic', content: 'Lives in Oslo' }]])
    await finish(runAgent(agentWith(options, driver, workspace), { input: 'go', user: { id: 'alice' }, metadata: { tenant: 'acme' } }))
    expect(jsonlLines(workspace).map((l) => [l.store, l.scope])).toEqual([['agent', { agent: 'support', project: 'p1' }], ['user', { agent: 'support', user: 'alice', tenant: 'acme' }]])
  })

  it('the model cannot change the store scope: a scope argument is a tool input error and nothing is written', async () => {
    const workspace = fsWorkspace()
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: toolWrites() } }, driver, workspace)
    const outcomes = await callTools(agent, [
      ['memory_remember', { kind: 'semantic', content: 'x', scope: { agent: 'other' } }],
      ['memory_search', { query: 'x', scope: {} }],
    ])
    expect(outcomes.map(errorCode)).toEqual(['TOOL_INPUT_INVALID', 'TOOL_INPUT_INVALID'])
    expect(jsonlLines(workspace)).toEqual([])
  })

  it('model input can set kind, tags, metadata and provenance fields', async () => {
    const workspace = fsWorkspace()
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: toolWrites() } }, driver, workspace)
    await callTools(agent, [['memory_remember', { kind: 'procedural', content: 'reset via settings', tags: ['howto'], metadata: { product: 'app', steps: 3 }, provenance: { url: 'https://docs.example' } }]])
    expect(jsonlLines(workspace)[0]).toMatchObject({ kind: 'procedural', tags: ['howto'], metadata: { product: 'app', steps: 3 }, provenance: { url: 'https://docs.example', source: 'tool' } })
  })

  it('provenance values from the model replace the invocation defaults, while the host-written audit stays trustworthy', async () => {
    const workspace = fsWorkspace()
    const { driver } = scriptedRun([['memory_remember', { kind: 'semantic', content: 'x', provenance: { runId: 'forged', source: 'admin', toolName: 'root' } }]])
    const { result } = await finish(runAgent(agentWith({ stores: { agent: toolWrites() } }, driver, workspace), { input: 'go', user: { id: 'mallory' } }))
    const [line] = jsonlLines(workspace)
    expect(line!.provenance).toEqual({ runId: 'forged', threadId: result.threadId, source: 'admin', toolName: 'root' })
    expect(line!.audit).toEqual({ via: 'tool', agent: 'support', runId: result.runId, threadId: result.threadId, user: 'mallory' })
  })
})

// ---- "Driver support" ----

describe('seed: Driver support', () => {
  it('a model-backed driver receives the configured memory tools', async () => {
    const model = scriptedModel([{ toolCalls: [{ toolName: 'memory_search', input: { query: 'tea' } }] }, { text: 'Nothing found.' }])
    const agent = agentWith({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' } } } }, { model }, memoryWorkspace())
    const { events, result } = await finish(runAgent(agent, { input: 'what do I drink?' }))
    expect(result.status).toBe('completed')
    expect(events.find((e) => e.type === 'tool-result')).toMatchObject({ toolName: 'memory_search', output: { store: 'agent', results: [] } })
    const firstCall = model.doStreamCalls[0]!
    expect((firstCall.tools ?? []).map((t) => t.name).sort()).toEqual(['memory_read', 'memory_search'])
  })

  it('a provider-backed driver receives the configured memory tools through the provider MCP bridge', async () => {
    const workspace = fsWorkspace()
    const seen: { tools: string[]; result?: unknown } = { tools: [] }
    const provider = {
      async run(ctx: ProviderRunContext) {
        const client = await ctx.connect() // a real @modelcontextprotocol/sdk Client over Streamable HTTP
        seen.tools = (await client.listTools()).tools.map((t) => t.name).sort()
        seen.result = await client.callTool({ name: 'memory_remember', arguments: { kind: 'semantic', content: 'provider run' } })
      },
    }
    const { result } = await finish(runAgent(agentWith({ stores: { agent: { adapter: workspaceJsonlMemoryStore(), scope: { agent: 'support' }, write: { mode: 'tool' } } } }, { provider }, workspace), { input: 'go' }))
    expect(result.status).toBe('completed')
    expect(seen.tools).toEqual(['memory_delete', 'memory_read', 'memory_remember', 'memory_search'])
    expect(seen.result).toMatchObject({ structuredContent: { action: 'created', store: 'agent' } })
    expect(jsonlLines(workspace)).toMatchObject([{ content: 'provider run', scope: { agent: 'support' }, audit: { runId: result.runId } }])
  })

  it('a custom-run-backed driver receives the configured memory tools in driver.run({ tools })', async () => {
    const { driver, seen } = scriptedRun([['memory_remember', { kind: 'semantic', content: 'custom run' }], ['memory_search', { query: 'custom' }]])
    await finish(runAgent(agentWith({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' }, write: { mode: 'tool' } } } }, driver, memoryWorkspace()), { input: 'go' }))
    expect(Object.keys(seen.contexts[0]!.tools).sort()).toEqual(['memory_delete', 'memory_read', 'memory_remember', 'memory_search'])
    expect(ok(seen.outcomes[1]).results.map((r: { content: string }) => r.content)).toEqual(['custom run'])
  })
})

// ---- "Verify memory" ----

describe('seed: Verify memory', () => {
  it('asking the Agent to search its memory shows a memory_search tool step in the stream (as agent dev prints it)', async () => {
    const model = scriptedModel([{ toolCalls: [{ toolName: 'memory_search', input: { query: 'plan' } }] }, { text: 'You have no plan on file.' }])
    const agent = agentWith({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' } } } }, { model }, memoryWorkspace())
    const { events } = await finish(runAgent(agent, { input: 'search your memory for my plan' }))
    const step = events.find((e) => e.type === 'tool-call')
    expect(step).toMatchObject({ toolName: 'memory_search', input: { query: 'plan' } })
    expect(formatEvent(step!)).toContain('[tool] memory_search {"query":"plan"}')
  })

  it('agent info does not list memory tools because the Capability adds them at invocation time', () => {
    const agent = agentWith({ stores: { agent: toolWrites() } }, { run() {} }, memoryWorkspace())
    expect(Object.keys(agent.tools)).toEqual([])
    const info = describeAgent(agent).join('\n')
    expect(info).toContain('capabilities: memory')
    expect(info).toContain('tools: none')
    expect(info).not.toMatch(/memory_(read|remember|delete)/)
  })

  it('memory_remember and memory_delete appear only when a store sets write.mode tool', async () => {
    const off = await toolNames({ stores: { a: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' } }, b: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' }, write: { mode: 'off' } } } })
    const on = await toolNames({ stores: { a: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' } }, b: { adapter: inMemoryMemoryStore(), scope: { agent: 'support' }, write: { mode: 'tool' } } } })
    expect(off).not.toContain('memory_remember')
    expect(off).not.toContain('memory_delete')
    expect(on).toEqual(['memory_delete', 'memory_read', 'memory_remember', 'memory_search'])
  })

  it('for the JSONL store, memory_remember leaves a Workspace file line with the store scope and provenance', async () => {
    const workspace = fsWorkspace()
    const { driver } = scriptedRun([['memory_remember', { kind: 'semantic', content: 'verify me' }]])
    const { result } = await finish(runAgent(agentWith({ stores: { agent: toolWrites() } }, driver, workspace), { input: 'go' }))
    const raw = readFileSync(join(workspace.dir, 'memory', 'memory.jsonl'), 'utf8')
    expect(raw.endsWith('\n')).toBe(true)
    const line = JSON.parse(raw.trim())
    expect(line.scope).toEqual({ agent: 'support' })
    expect(line.provenance).toEqual({ runId: result.runId, threadId: result.threadId, source: 'tool', toolName: 'memory_remember' })
  })
})

// ---- "Options" ----

describe('seed: Options', () => {
  it('stores: named Memory Stores available to the Agent', async () => {
    expect(await toolNames({ stores: { first: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' } } } })).toEqual(['memory_read', 'memory_search'])
  })

  it('stores.*.adapter: a MemoryStoreAdapter or a MemoryStoreFactory', async () => {
    const adapter = await adapterOf(inMemoryMemoryStore())
    expect(await toolNames({ stores: { agent: { adapter, scope: { agent: 'a' } } } })).toEqual(['memory_read', 'memory_search'])
    expect(await toolNames({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' } } } })).toEqual(['memory_read', 'memory_search'])
  })

  it('stores.*.scope: fields agent, environment, project, session, tenant, thread, user, workspace are accepted, others are not', async () => {
    const all = { agent: 'a', environment: 'e', project: 'p', session: 's', tenant: 't', thread: 'th', user: 'u', workspace: 'w' }
    const workspace = fsWorkspace()
    const { driver } = scriptedRun([['memory_remember', { kind: 'semantic', content: 'x' }]])
    await finish(runAgent(agentWith({ stores: { agent: toolWrites({ scope: all }) } }, driver, workspace), { input: 'go' }))
    expect(jsonlLines(workspace)[0]!.scope).toEqual(all)
    expect(() => memory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { org: 'x' } as never } } })).toThrow(/MEMORY_SCOPE_INVALID/)
  })

  it('stores.*.allowKinds: all kinds by default, for example episodic, procedural, profile, semantic', async () => {
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, write: { mode: 'tool' } } } }, driver, memoryWorkspace())
    const outcomes = await callTools(agent, ['episodic', 'procedural', 'profile', 'semantic', 'custom-kind'].map((kind): ScriptedCall => ['memory_remember', { kind, content: kind }]))
    expect(outcomes.map((o) => o.status)).toEqual(Array(5).fill('ok'))
  })

  it('stores.*.read.tools.search and read.tools.read default to true', async () => {
    expect(await toolNames({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, read: {} } } })).toEqual(['memory_read', 'memory_search'])
    expect(await toolNames({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, read: { tools: {} } } } })).toEqual(['memory_read', 'memory_search'])
  })

  it('stores.*.write.mode defaults to "off"', async () => {
    expect(await toolNames({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, write: {} } } })).toEqual(['memory_read', 'memory_search'])
  })

  it('stores.*.write.policy defaults to "allow"', async () => {
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, write: { mode: 'tool' } } } }, driver, memoryWorkspace())
    expect((await callTools(agent, [['memory_remember', { kind: 'semantic', content: 'x' }]]))[0]?.status).toBe('ok')
  })

  it('stores.*.retention is accepted, and without hardDelete a delete stays soft (the seed reserves these settings)', async () => {
    const store = inMemoryMemoryStore()
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: { adapter: store, scope: { agent: 'a' }, write: { mode: 'tool' }, retention: { export: false, hardDelete: false } } } }, driver, memoryWorkspace())
    const [created] = await callTools(agent, [['memory_remember', { kind: 'semantic', content: 'kept' }]])
    const [del, read] = await callTools(agent, [['memory_delete', { id: ok(created).record.id }], ['memory_read', { id: ok(created).record.id }]])
    expect(ok(del).action).toBe('deleted')
    expect(errorCode(read)).toBe('MEMORY_RECORD_NOT_FOUND')
    const exported = await (await adapterOf(store)).export({ store: 'agent', scope: { agent: 'a' } })
    expect(exported.map((r) => [r.content, r.status])).toEqual([['kept', 'deleted']])
  })

  it('workspaceJsonlMemoryStore path defaults to "memory/memory.jsonl" and can be set', async () => {
    const workspace = fsWorkspace()
    const { driver } = scriptedRun([['memory_remember', { kind: 'semantic', content: 'Prefers tea' }], ['memory_remember', { store: 'notes', kind: 'semantic', content: 'Lives in Oslo' }]])
    await finish(runAgent(agentWith({ stores: {
      agent: toolWrites(),
      notes: toolWrites({ adapter: workspaceJsonlMemoryStore({ path: 'memory/notes.jsonl' }) }),
    } }, driver, workspace), { input: 'go' }))
    expect(jsonlLines(workspace).map((l) => l.content)).toEqual(['Prefers tea'])
    expect(jsonlLines(workspace, 'memory/notes.jsonl').map((l) => l.content)).toEqual(['Lives in Oslo'])
  })
})

// The JSON Schema the model sees is generated from the zod schema (one source of truth).
describe('seed: tool input schemas are self-explanatory', () => {
  it('every input field of every memory tool has a description', async () => {
    const { driver, seen } = scriptedRun([])
    await finish(runAgent(agentWith({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, write: { mode: 'tool' } } } }, driver, memoryWorkspace()), { input: 'hi' }))
    for (const [name, tool] of Object.entries(seen.contexts[0]!.tools)) {
      const properties = (tool.inputSchema as { properties: Record<string, { description?: string }> }).properties
      for (const [field, schema] of Object.entries(properties)) expect(schema.description, `${name}.${field}`).toBeTruthy()
    }
  })
})

// ---- Seed 000 (memory slots, /work/shared/seeds/000_0bf17b1616f748fb.txt), through memorySlot() and the store options it builds ----

const slotAgent = (stores: MemoryOptions['stores'], driver: AgentDefinition['driver']) => defineAgent({ name: 'support', driver, capabilities: [memory({ stores })] })
type SlotPrompt = ReturnType<typeof scriptedModel>['prompts'][number]
const systemText = (prompt: SlotPrompt) => prompt.filter((m) => m.role === 'system').map((m) => m.content).join('\n')

async function seedSlot(adapter: ReturnType<typeof inMemoryMemoryStore>, texts: string[], scope: MemoryOptions['stores'][string]['scope'] = { agent: 'support' }) {
  const created = await adapter.create({ store: 'notes', agent: 'support', writable: true })
  for (const text of texts) await created.append({ store: 'notes', scope: typeof scope === 'function' ? { agent: 'support' } : scope }, { kind: 'semantic', content: text }, { audit: { via: 'api' } })
}

describe('seed 000: Memory (slots)', () => {
  it('on the run\'s first model call the newest items go into the system prompt in a <memory name="..."> block that stays for the rest of the run', async () => {
    const adapter = inMemoryMemoryStore()
    await seedSlot(adapter, ['Likes tea.', 'Lives in Oslo.'])
    const model = scriptedModel([{ toolCalls: [{ toolName: 'recall_notes', input: {} }] }, { text: 'done' }])
    await finish(runAgent(slotAgent({ notes: memorySlot({ scope: 'global', adapter }) }, { model }), { input: 'hi' }))
    const block = '<memory name="notes">\n- Lives in Oslo.\n- Likes tea.\n</memory>'
    expect(systemText(model.prompts[0]!)).toContain(block)
    expect(systemText(model.prompts[1]!)).toContain(block)
  })

  it('the recalled block is not saved in the session transcript', async () => {
    const adapter = inMemoryMemoryStore()
    await seedSlot(adapter, ['Likes tea.'])
    const model = scriptedModel([{ text: 'one' }, { text: 'two' }])
    const agent = slotAgent({ notes: memorySlot({ scope: 'global', adapter }) }, { model })
    await finish(runAgent(agent, { input: 'first', threadId: 't1' }))
    await finish(runAgent(agent, { input: 'second', threadId: 't1' }))
    const nonSystem = model.prompts[1]!.filter((m) => m.role !== 'system')
    expect(JSON.stringify(nonSystem)).not.toContain('<memory')
  })

  it('remember_<name> takes { text } and recall_<name> takes { query?, limit? }, newest items first without a query', async () => {
    const outcomes = await callTools((driver) => slotAgent({ notes: memorySlot({ scope: 'global', adapter: inMemoryMemoryStore() }) }, driver), [
      ['remember_notes', { text: 'Likes green tea.' }],
      ['remember_notes', { text: 'Has a cat named Miso.' }],
      ['recall_notes', {}],
      ['recall_notes', { query: 'tea' }],
      ['recall_notes', { limit: 1 }],
      ['remember_notes', { content: 'x', kind: 'semantic' }],
    ])
    expect(ok(outcomes[0]).action).toBe('created')
    expect(ok(outcomes[2]).items.map((i: { text: string }) => i.text)).toEqual(['Has a cat named Miso.', 'Likes green tea.'])
    expect(ok(outcomes[3]).items.map((i: { text: string }) => i.text)).toEqual(['Likes green tea.'])
    expect(ok(outcomes[4]).items).toHaveLength(1)
    expect(errorCode(outcomes[5])).toBe('TOOL_INPUT_INVALID')
  })

  it('scope "global" is one memory for every run of the agent, "session" one per session (thread) id', async () => {
    const global = inMemoryMemoryStore()
    const session = inMemoryMemoryStore()
    const stores = { shared: memorySlot({ scope: 'global', adapter: global }), mine: memorySlot({ scope: 'session', adapter: session }) }
    await callTools((driver) => slotAgent(stores, driver), [['remember_shared', { text: 'Office in Berlin.' }], ['remember_mine', { text: 'Prefers email.' }]], { threadId: 's1' })
    const later = await callTools((driver) => slotAgent(stores, driver), [['recall_shared', {}], ['recall_mine', {}]], { threadId: 's2' })
    expect(ok(later[0]).items.map((i: { text: string }) => i.text)).toEqual(['Office in Berlin.'])
    expect(ok(later[1]).items).toEqual([])
    const same = await callTools((driver) => slotAgent(stores, driver), [['recall_mine', {}]], { threadId: 's1' })
    expect(ok(same[0]).items.map((i: { text: string }) => i.text)).toEqual(['Prefers email.'])
  })

  it('a scope function that returns undefined switches the slot off: nothing is recalled and its tools are not offered', async () => {
    const stores = { facts: memorySlot({ scope: ({ metadata }) => (typeof metadata.userId === 'string' ? { user: metadata.userId } : undefined), adapter: inMemoryMemoryStore() }) }
    expect(await toolNamesOf(stores, {})).toEqual([])
    expect(await toolNamesOf(stores, { userId: 'u-42' })).toEqual(['recall_facts', 'remember_facts'])
  })

  it('name: 1-55 characters of A-Za-z0-9_-; a longer slot name is an option error', () => {
    expect(() => memory({ stores: { ['n'.repeat(55)]: memorySlot({ scope: 'global', adapter: inMemoryMemoryStore() }) } })).not.toThrow()
    expect(() => memory({ stores: { ['n'.repeat(56)]: memorySlot({ scope: 'global', adapter: inMemoryMemoryStore() }) } })).toThrow(/1-55 characters/)
  })

  it('description: what the slot holds, added to the tool descriptions', async () => {
    const { driver, seen } = scriptedRun([])
    await finish(runAgent(slotAgent({ notes: memorySlot({ scope: 'global', adapter: inMemoryMemoryStore(), description: 'facts about the office' }) }, driver), { input: 'hi' }))
    const tools = seen.contexts[0]!.tools
    expect(tools.remember_notes!.description).toContain('facts about the office')
    expect(tools.recall_notes!.description).toContain('facts about the office')
  })

  it('a store description is added to every shared tool description of that store too', async () => {
    const { driver, seen } = scriptedRun([])
    await finish(runAgent(agentWith({ stores: { agent: toolWrites({ adapter: inMemoryMemoryStore(), description: 'facts about the office' }) } }, driver), { input: 'hi' }))
    const tools = seen.contexts[0]!.tools
    for (const name of ['memory_search', 'memory_read', 'memory_remember', 'memory_delete']) expect(tools[name]!.description, name).toContain('"agent" (facts about the office)')
  })

  it('recall.onSessionStart defaults to true; false recalls nothing into the prompt', async () => {
    const adapter = inMemoryMemoryStore()
    await seedSlot(adapter, ['Likes tea.'])
    const model = scriptedModel([{ text: 'a' }])
    await finish(runAgent(slotAgent({ notes: memorySlot({ scope: 'global', adapter, recall: { onSessionStart: false } }) }, { model }), { input: 'hi' }))
    expect(systemText(model.prompts[0]!)).not.toContain('<memory name="notes">')
  })

  it('recall.maxItems (default 10) is the most items recalled and the default limit of recall_<name>', async () => {
    const adapter = inMemoryMemoryStore()
    await seedSlot(adapter, Array.from({ length: 12 }, (_, i) => `Fact number ${i + 1}.`))
    const model = scriptedModel([{ toolCalls: [{ toolName: 'recall_notes', input: {} }] }, { text: 'done' }])
    await finish(runAgent(slotAgent({ notes: memorySlot({ scope: 'global', adapter }) }, { model }), { input: 'hi' }))
    const block = systemText(model.prompts[0]!)
    expect(block.match(/^- Fact number/gm)).toHaveLength(10)
    const outcomes = await callTools((driver) => slotAgent({ notes: memorySlot({ scope: 'global', adapter, recall: { maxItems: 3 } }) }, driver), [['recall_notes', {}]])
    expect(ok(outcomes[0]).items.map((i: { text: string }) => i.text)).toEqual(['Fact number 12.', 'Fact number 11.', 'Fact number 10.'])
  })

  it('recall.query "last-input" passes the run\'s last user message as the query, recalling relevant items rather than the newest', async () => {
    const adapter = inMemoryMemoryStore()
    await seedSlot(adapter, ['Likes green tea.', 'Has a cat.', 'Drives a red car.'])
    const model = scriptedModel([{ text: 'a' }])
    await finish(runAgent(slotAgent({ notes: memorySlot({ scope: 'global', adapter, recall: { query: 'last-input' } }) }, { model }), { input: 'Which tea should I buy?' }))
    expect(systemText(model.prompts[0]!)).toContain('<memory name="notes">\n- Likes green tea.\n</memory>')
  })

  it('expose.remember and expose.recall (both default true) offer the remember_<name> and recall_<name> tools', async () => {
    const adapter = inMemoryMemoryStore()
    expect(await toolNamesOf({ notes: memorySlot({ scope: 'global', adapter }) }, {})).toEqual(['recall_notes', 'remember_notes'])
    expect(await toolNamesOf({ notes: memorySlot({ scope: 'global', adapter, expose: { remember: false } }) }, {})).toEqual(['recall_notes'])
    expect(await toolNamesOf({ notes: memorySlot({ scope: 'global', adapter, expose: { recall: false } }) }, {})).toEqual(['remember_notes'])
  })

  it('a slot keeps at most maxItems items per scope key (default 1000); adding one more drops the oldest', async () => {
    expect(memorySlot({ scope: 'global', adapter: inMemoryMemoryStore() }).retention).toEqual({ maxItems: 1000 })
    const outcomes = await callTools((driver) => slotAgent({ notes: memorySlot({ scope: 'global', adapter: inMemoryMemoryStore(), maxItems: 2 }) }, driver), [
      ['remember_notes', { text: 'Lives in Oslo.' }], ['remember_notes', { text: 'Likes tea.' }], ['remember_notes', { text: 'Has a cat.' }], ['recall_notes', {}],
    ])
    expect(ok(outcomes[3]).items.map((i: { text: string }) => i.text)).toEqual(['Has a cat.', 'Likes tea.'])
  })

  it('a run continued after an approval pause recalls the block again and offers the slot tools again', async () => {
    const adapter = inMemoryMemoryStore()
    await seedSlot(adapter, ['Likes tea.'])
    const model = scriptedModel([{ toolCalls: [{ toolName: 'remember_notes', input: { text: 'Lives in Oslo.' } }] }, { text: 'Saved.' }])
    const agent = defineAgent({ name: 'support', driver: { model }, workspace: memoryWorkspace(), capabilities: [memory({ stores: { notes: memorySlot({ scope: 'global', adapter, write: { policy: 'require-approval' } }) } })] })
    const asked = await finish(runAgent(agent, { input: 'I moved to Oslo.' }))
    expect(asked.result.status).toBe('awaiting-approval')
    await finish(resolveApproval(agent, asked.result.approvals[0]!.id, { approved: true, approver: 'admin' }))
    const continued = model.calls.at(-1)!
    expect(systemText(model.prompts.at(-1)!)).toContain('<memory name="notes">\n- Lives in Oslo.\n- Likes tea.\n</memory>')
    expect(continued.tools!.map((tool) => tool.name).sort()).toEqual(['recall_notes', 'remember_notes'])
  })

  it('memorySlot() rejects unknown options and a missing adapter or scope with errors naming them', () => {
    expect(() => memorySlot({ scope: 'global', adapter: inMemoryMemoryStore(), provider: 1 } as never)).toThrow(/unknown option "provider"/)
    expect(() => memorySlot({ scope: 'global' } as never)).toThrow(expect.objectContaining({ code: 'MEMORY_ADAPTER_REQUIRED' }))
    expect(() => memorySlot({ adapter: inMemoryMemoryStore() } as never)).toThrow(expect.objectContaining({ code: 'MEMORY_SCOPE_REQUIRED' }))
  })
})

async function toolNamesOf(stores: MemoryOptions['stores'], metadata: Record<string, unknown>): Promise<string[]> {
  const { driver, seen } = scriptedRun([])
  await finish(runAgent(slotAgent(stores, driver), { input: 'hi', metadata }))
  return Object.keys(seen.contexts[0]?.tools ?? {}).sort()
}

describe('seed 000 / 002: openMemoryStore', () => {
  const userKeyed = () => defineAgent({ name: 'support', driver: { run: () => undefined }, capabilities: [memory({ stores: {
    agent: { adapter: inMemoryMemoryStore(), scope: (ctx) => ({ agent: ctx.agent, user: ctx.user!.id }) },
    tenant: { adapter: inMemoryMemoryStore(), scope: (ctx) => (typeof ctx.metadata.tenant === 'string' ? { tenant: ctx.metadata.tenant } : undefined) },
  } })] })

  it('openMemoryStore takes metadata, so a metadata-keyed scope can be opened from code', async () => {
    const opened = await openMemoryStore(userKeyed(), { store: 'tenant', metadata: { tenant: 'acme' } })
    expect(opened.target.scope).toEqual({ tenant: 'acme' })
    await expect(openMemoryStore(userKeyed(), { store: 'tenant' })).rejects.toMatchObject({ code: 'MEMORY_SCOPE_OFF' })
  })

  it('without a user, a user-keyed scope answers MEMORY_SCOPE_OFF, not a TypeError', async () => {
    await expect(openMemoryStore(userKeyed(), {})).rejects.toMatchObject({ code: 'MEMORY_SCOPE_OFF' })
    expect((await openMemoryStore(userKeyed(), { user: { id: 'alice' } })).target.scope).toEqual({ agent: 'support', user: 'alice' })
  })
})

// ---- Seed 003 (hosted memory, /work/shared/seeds/003_d9fe0e88be5cbab4.txt): record fields and the quality filter ----

describe('seed 003: memory structure and quality filter', () => {
  it('a semantic memory keeps rawExtract and recallTriggers next to keywords and topics, and memory_read returns them', async () => {
    const store = inMemoryMemoryStore()
    const agent = (driver: AgentDefinition['driver']) => agentWith({ stores: { agent: toolWrites({ adapter: store }) } }, driver)
    const [written] = await callTools(agent, [
      ['memory_remember', { kind: 'semantic', content: 'User prefers organic vegetables and shops at farmer\'s markets weekly', rawExtract: 'I love buying organic vegetables at the farmer\'s market every Saturday', keywords: ['organic', 'vegetables'], topics: ['food'], recallTriggers: ['vegetables', 'shopping habits', 'organic food'] }],
    ])
    const [read] = await callTools(agent, [['memory_read', { id: ok(written).record.id }]])
    expect(ok(read).record).toMatchObject({
      rawExtract: 'I love buying organic vegetables at the farmer\'s market every Saturday',
      keywords: ['organic', 'vegetables'], topics: ['food'], recallTriggers: ['vegetables', 'shopping habits', 'organic food'],
    })
  })

  it('recall triggers are searchable like tags: a query matching only a trigger finds the record', async () => {
    const store = inMemoryMemoryStore()
    const outcomes = await callTools((driver) => agentWith({ stores: { agent: toolWrites({ adapter: store }) } }, driver), [
      ['memory_remember', { kind: 'semantic', content: 'Buys organic vegetables every week', recallTriggers: ['grocery budget'] }],
      ['memory_search', { query: 'grocery budget' }],
      ['memory_search', { query: 'grocery budget', tags: ['x'] }],
    ])
    expect(ok(outcomes[1]).results.map((r: { content: string }) => r.content)).toEqual(['Buys organic vegetables every week'])
    expect(ok(outcomes[2]).results).toEqual([])
  })

  it('greetings and pleasantries ("Hello, I appreciate it") and generic traits ("User is friendly") are filtered out by default, with the reason in the tool error', async () => {
    const outcomes = await callTools((driver) => agentWith({ stores: { agent: toolWrites({ adapter: inMemoryMemoryStore() }) } }, driver), [
      ['memory_remember', { kind: 'semantic', content: 'Hello, I appreciate it' }],
      ['memory_remember', { kind: 'semantic', content: 'User is friendly' }],
      ['memory_remember', { kind: 'semantic', content: 'I\'m tired today' }],
      ['memory_remember', { kind: 'semantic', content: 'User is allergic to peanuts' }],
      ['memory_search', { query: 'user' }],
    ])
    expect(outcomes.slice(0, 3).map(errorCode)).toEqual(['MEMORY_WRITE_REJECTED', 'MEMORY_WRITE_REJECTED', 'MEMORY_WRITE_REJECTED'])
    expect(outcomes[0]!.status === 'error' && outcomes[0]!.error.message).toMatch(/greeting, thanks or filler/)
    expect(outcomes[1]!.status === 'error' && outcomes[1]!.error.message).toMatch(/generic trait or passing mood/)
    expect(ok(outcomes[4]).results.map((r: { content: string }) => r.content)).toEqual(['User is allergic to peanuts'])
  })

  it('the built-in filter also guards remember_<name>, switches off with write.filter false and is replaced by a write.filter function', async () => {
    const slot = await callTools((driver) => slotAgent({ notes: memorySlot({ scope: 'global', adapter: inMemoryMemoryStore() }) }, driver), [['remember_notes', { text: 'Thanks!' }]])
    expect(errorCode(slot[0])).toBe('MEMORY_WRITE_REJECTED')
    const off = await callTools((driver) => agentWith({ stores: { agent: toolWrites({ adapter: inMemoryMemoryStore(), write: { mode: 'tool', filter: false } }) } }, driver), [['memory_remember', { kind: 'semantic', content: 'Hello, I appreciate it' }]])
    expect(ok(off[0]).action).toBe('created')
    const replaced = await callTools((driver) => agentWith({ stores: { agent: toolWrites({ adapter: inMemoryMemoryStore(), write: { mode: 'tool', filter: (c) => (c.content.includes('card') ? { reject: 'no payment data' } : 'accept') } }) } }, driver), [
      ['memory_remember', { kind: 'semantic', content: 'User is friendly' }],
      ['memory_remember', { kind: 'semantic', content: 'My card is 4111' }],
    ])
    expect(ok(replaced[0]).action).toBe('created')
    expect(replaced[1]!.status === 'error' && replaced[1]!.error.message).toMatch(/no payment data/)
  })

  it('writes from code through the adapter are never filtered', async () => {
    const adapter = await inMemoryMemoryStore().create({ store: 'agent', agent: 'support', writable: true })
    const record = await adapter.append({ store: 'agent', scope: { agent: 'support' } }, { kind: 'semantic', content: 'Hello!' }, { audit: { via: 'api' } })
    expect(record.content).toBe('Hello!')
  })
})


describe('seed 003 fields in every log-backed store', () => {
  it('rawExtract and recallTriggers are kept by the JSONL, in-memory and SQLite stores, and triggers are searched', async () => {
    const { sqliteMemoryStore } = await import('../../src/capabilities/index.ts')
    const dir = mkdtempSync(join(tmpdir(), 'vam-seed-sql-'))
    for (const factory of [workspaceJsonlMemoryStore(), inMemoryMemoryStore(), sqliteMemoryStore({ file: join(dir, 'm.db') })]) {
      const adapter = await adapterOf(factory, fsWorkspace())
      const target = { store: 'agent', scope: { agent: 'support' } }
      const written = await adapter.append(target, { kind: 'semantic', content: 'Buys organic vegetables weekly', rawExtract: 'every Saturday I buy organic veg', recallTriggers: ['grocery budget'] }, { audit: { via: 'api' } })
      expect(await adapter.read(target, written.id), factory.kind).toMatchObject({ rawExtract: 'every Saturday I buy organic veg', recallTriggers: ['grocery budget'] })
      expect((await adapter.search(target, { query: 'grocery budget' })).map(hit => hit.record.id), factory.kind).toEqual([written.id])
    }
  })
})
