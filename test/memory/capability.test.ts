import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { z } from 'zod'
import { isAgentError } from '../../src/errors.ts'
import type { AgentTool, AgentUser, CapabilityContext, ToolExecutionContext, ToolPolicyDecision } from '../../src/agent/types.ts'
import { memory } from '../../src/memory/capability.ts'
import { MEMORY_LIMITS } from '../../src/memory/schemas.ts'
import { inMemoryMemoryStore } from '../../src/memory/stores/in-memory.ts'
import type { MemoryOptions, MemoryScope, MemoryStoreAdapter, MemoryStoreContext, MemoryStoreFactory, MemoryStoreOptions } from '../../src/memory/types.ts'

// ---- harness: resolve the capability with a hand-built context, call tools like the host does ----

interface Resolved {
  tools: Record<string, AgentTool>
  instructions: string[]
  /** Validates like the host, evaluates the policy, then executes. */
  call(name: string, input: unknown, extra?: Partial<ToolExecutionContext>): Promise<CallResult>
  policy(name: string, input: unknown): Promise<ToolPolicyDecision>
}

type CallResult =
  | { kind: 'ok'; output: any }
  | { kind: 'input-error'; issues: z.core.$ZodIssue[]; message: string }
  | { kind: 'error'; code: string; message: string; details?: Record<string, unknown> }

function execContext(name: string, user: AgentUser | undefined, extra: Partial<ToolExecutionContext> = {}): ToolExecutionContext {
  return { agent: 'support', runId: 'run_1', threadId: 'thread_1', toolName: name, toolCallId: 'call_1', metadata: {}, ...(user ? { user } : {}), ...extra }
}

async function resolveMemory(options: MemoryOptions, init: { user?: AgentUser; metadata?: Record<string, unknown>; run?: { runId: string; threadId: string } } = {}): Promise<Resolved> {
  const tools: Record<string, AgentTool> = {}
  const instructions: string[] = []
  const context: CapabilityContext = {
    agent: 'support',
    run: init.run ?? { runId: 'run_1', threadId: 'thread_1' },
    ...(init.user ? { user: init.user } : {}),
    metadata: init.metadata ?? {},
    tools: { add(name, tool) { tools[name] = tool } },
    instructions: { add(text) { instructions.push(text) } },
    prompt: { add() {} },
    messages: { transform() {} },
    onFinish() {},
  }
  await memory(options).resolve(context)
  const policy = async (name: string, input: unknown): Promise<ToolPolicyDecision> => {
    const tool = tools[name]!
    const p = tool.policy ?? 'allow'
    return typeof p === 'function' ? p({ tool: name, input, context: execContext(name, init.user) }) : p
  }
  return {
    tools,
    instructions,
    policy,
    async call(name, input, extra) {
      const tool = tools[name]
      if (!tool) throw new Error(`no tool ${name}`)
      const parsed = tool.inputSchema.safeParse(input)
      if (!parsed.success) return { kind: 'input-error', issues: parsed.error.issues, message: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') }
      try {
        return { kind: 'ok', output: await tool.execute(parsed.data, execContext(name, init.user, extra)) }
      } catch (error) {
        if (!isAgentError(error)) throw error
        return { kind: 'error', code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) }
      }
    },
  }
}

function catchError(fn: () => unknown): { code: string; message: string } {
  try {
    fn()
  } catch (error) {
    if (isAgentError(error)) return { code: error.code, message: error.message }
    throw error
  }
  throw new Error('expected an AgentError')
}

async function rejects(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise
  } catch (error) {
    if (isAgentError(error)) return { code: error.code, message: error.message }
    throw error
  }
  throw new Error('expected an AgentError')
}

/** The adapter behind an `inMemoryMemoryStore()` value, whether it is an adapter or a factory. */
async function adapterOf(store: MemoryStoreAdapter | MemoryStoreFactory, name = 'agent'): Promise<MemoryStoreAdapter> {
  if ('create' in store && typeof store.create === 'function') return store.create({ store: name, agent: 'support', writable: true })
  return store as MemoryStoreAdapter
}

const alice: AgentUser = { id: 'alice' }
const bob: AgentUser = { id: 'bob' }
const byUser = (ctx: { user?: AgentUser }): MemoryScope | undefined => (ctx.user ? { agent: 'support', user: ctx.user.id } : undefined)

function writableStore(extra: Partial<MemoryStoreOptions> = {}): MemoryStoreOptions {
  return { adapter: inMemoryMemoryStore(), scope: { agent: 'support' }, write: { mode: 'tool' }, ...extra }
}

// ---- option validation (definition time) ----

describe('memory() options are validated at definition time', () => {
  it('missing stores throws MEMORY_STORES_REQUIRED', () => {
    expect(catchError(() => memory({} as MemoryOptions)).code).toBe('MEMORY_STORES_REQUIRED')
  })

  it('a misspelt stores key throws MEMORY_STORES_REQUIRED naming the unknown key it got', () => {
    const error = catchError(() => memory({ store: { agent: writableStore() } } as unknown as MemoryOptions))
    expect(error.code).toBe('MEMORY_STORES_REQUIRED')
    expect(error.message).toContain('it got the unknown option "store" instead')
  })

  it('an empty stores map throws MEMORY_STORES_REQUIRED', () => {
    expect(catchError(() => memory({ stores: {} })).code).toBe('MEMORY_STORES_REQUIRED')
  })

  it('a store without adapter throws MEMORY_ADAPTER_REQUIRED naming the store', () => {
    const error = catchError(() => memory({ stores: { notes: { scope: { agent: 'a' } } as unknown as MemoryStoreOptions } }))
    expect(error.code).toBe('MEMORY_ADAPTER_REQUIRED')
    expect(error.message).toContain('stores.notes.adapter')
  })

  it('an adapter object missing export throws MEMORY_ADAPTER_REQUIRED naming the missing function', () => {
    const adapter = { search: async () => [], read: async () => undefined, append: async () => { throw new Error('x') }, delete: async () => undefined }
    const error = catchError(() => memory({ stores: { agent: { adapter: adapter as unknown as MemoryStoreAdapter, scope: { agent: 'a' } } } }))
    expect(error.code).toBe('MEMORY_ADAPTER_REQUIRED')
    expect(error.message).toContain('lacks export')
  })

  it('a store without scope throws MEMORY_SCOPE_REQUIRED naming the store', () => {
    const error = catchError(() => memory({ stores: { agent: { adapter: inMemoryMemoryStore() } as unknown as MemoryStoreOptions } }))
    expect(error.code).toBe('MEMORY_SCOPE_REQUIRED')
    expect(error.message).toContain('stores.agent.scope')
  })

  it('a static scope with no non-empty field throws MEMORY_SCOPE_REQUIRED', () => {
    expect(catchError(() => memory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: {} } } })).code).toBe('MEMORY_SCOPE_REQUIRED')
    expect(catchError(() => memory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { user: '  ' } } } })).code).toBe('MEMORY_SCOPE_REQUIRED')
  })

  it('a static scope with an unknown field throws MEMORY_SCOPE_INVALID naming the field', () => {
    const error = catchError(() => memory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a', org: 'x' } as MemoryScope } } }))
    expect(error.code).toBe('MEMORY_SCOPE_INVALID')
    expect(error.message).toContain('"org"')
  })

  it('a static scope with an empty field next to others throws MEMORY_SCOPE_INVALID naming it', () => {
    const error = catchError(() => memory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a', user: '' } } } }))
    expect(error.code).toBe('MEMORY_SCOPE_INVALID')
    expect(error.message).toContain('"user"')
  })

  it('a misspelled key such as wirte throws MEMORY_OPTIONS_INVALID naming it and its store', () => {
    const error = catchError(() => memory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, wirte: { mode: 'tool' } } as unknown as MemoryStoreOptions } }))
    expect(error.code).toBe('MEMORY_OPTIONS_INVALID')
    expect(error.message).toContain('"wirte"')
    expect(error.message).toContain('stores.agent')
  })

  it('a store name with a space throws MEMORY_OPTIONS_INVALID stating the naming rule and a name that follows it', () => {
    const error = catchError(() => memory({ stores: { 'bad name': writableStore() } }))
    expect(error.code).toBe('MEMORY_OPTIONS_INVALID')
    expect(error.message).toBe('MEMORY_OPTIONS_INVALID: invalid store name "bad name" at stores.bad name: a store name is 1-64 characters of letters, digits, "_" and "-" (^[a-zA-Z0-9_-]{1,64}$), because it names the store\'s tools and workspace keys. Fix: rename the store, for example to "bad_name"')
    expect(error.message).not.toContain('Invalid key in record')
  })

  it('an unknown top-level option throws MEMORY_OPTIONS_INVALID', () => {
    const error = catchError(() => memory({ stores: { agent: writableStore() }, recall: true } as unknown as MemoryOptions))
    expect(error.code).toBe('MEMORY_OPTIONS_INVALID')
    expect(error.message).toContain('"recall"')
  })

  it('read.search without tools is an unknown key, not silently ignored', () => {
    const error = catchError(() => memory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, read: { search: false } } as unknown as MemoryStoreOptions } }))
    expect(error.code).toBe('MEMORY_OPTIONS_INVALID')
    expect(error.message).toContain('stores.agent.read')
  })

  it('an invalid write.mode throws MEMORY_OPTIONS_INVALID with its key path', () => {
    const error = catchError(() => memory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, write: { mode: 'auto' } } as unknown as MemoryStoreOptions } }))
    expect(error.code).toBe('MEMORY_OPTIONS_INVALID')
    expect(error.message).toContain('stores.agent.write.mode')
  })

  it('an invalid write.policy throws MEMORY_OPTIONS_INVALID with its key path', () => {
    const error = catchError(() => memory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, write: { mode: 'tool', policy: 'ask' } } as unknown as MemoryStoreOptions } }))
    expect(error.code).toBe('MEMORY_OPTIONS_INVALID')
    expect(error.message).toContain('stores.agent.write.policy')
  })

  it('a store name outside ^[a-zA-Z0-9_-]{1,64}$ throws MEMORY_OPTIONS_INVALID', () => {
    const error = catchError(() => memory({ stores: { 'my store': writableStore() } }))
    expect(error.code).toBe('MEMORY_OPTIONS_INVALID')
    expect(error.message).toContain('store name')
  })

  it('allowKinds with an empty kind throws MEMORY_OPTIONS_INVALID', () => {
    const error = catchError(() => memory({ stores: { agent: writableStore({ allowKinds: ['semantic', ''] }) } }))
    expect(error.code).toBe('MEMORY_OPTIONS_INVALID')
    expect(error.message).toContain('stores.agent.allowKinds.1')
  })

  it('the capability carries the options it was created with, for tools that resolve its stores', () => {
    const options: MemoryOptions = { stores: { agent: writableStore() } }
    const capability = memory(options)
    expect(capability.id).toBe('memory')
    expect(capability.options).toBe(options)
  })

  it('retention is accepted, and an unknown retention key is an error', () => {
    expect(memory({ stores: { agent: writableStore({ retention: { export: true, hardDelete: false } }) } }).id).toBe('memory')
    const error = catchError(() => memory({ stores: { agent: writableStore({ retention: { ttl: 5 } as never }) } }))
    expect(error.code).toBe('MEMORY_OPTIONS_INVALID')
    expect(error.message).toContain('"ttl"')
  })
})

// ---- resolution ----

describe('memory() resolve', () => {
  it('calls a factory with store, agent, workspace, user and writable', async () => {
    const seen: MemoryStoreContext[] = []
    const inner = inMemoryMemoryStore()
    const factory: MemoryStoreFactory = { kind: 'probe', async create(context) { seen.push(context); return adapterOf(inner) } }
    await resolveMemory({ stores: { agent: { adapter: factory, scope: { agent: 'support' }, write: { mode: 'tool' } }, ro: { adapter: factory, scope: { agent: 'support' } } } }, { user: alice })
    expect(seen.map((c) => [c.store, c.agent, c.user?.id, c.writable])).toEqual([['agent', 'support', 'alice', true], ['ro', 'support', 'alice', false]])
  })

  it('calls a scope function with agent, run, user, metadata and store', async () => {
    const seen: unknown[] = []
    await resolveMemory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: (ctx) => { seen.push(ctx); return { agent: ctx.agent } } } } }, { user: alice, metadata: { tenant: 't1' }, run: { runId: 'r9', threadId: 't9' } })
    expect(seen).toEqual([{ agent: 'support', run: { runId: 'r9', threadId: 't9' }, user: alice, metadata: { tenant: 't1' }, store: 'agent' }])
  })

  it('a scope function returning undefined switches its store off: no tools, factory not called', async () => {
    let created = 0
    const factory: MemoryStoreFactory = { kind: 'probe', create: async () => { created += 1; return adapterOf(inMemoryMemoryStore()) } }
    const resolved = await resolveMemory({ stores: { agent: { adapter: factory, scope: byUser, write: { mode: 'tool' } } } })
    expect(Object.keys(resolved.tools)).toEqual([])
    expect(resolved.instructions).toEqual([])
    expect(created).toBe(0)
  })

  it('a store switched off cannot be named by store: MEMORY_STORE_UNKNOWN', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore(), personal: { adapter: inMemoryMemoryStore(), scope: byUser, write: { mode: 'tool' } } } })
    const result = await resolved.call('memory_remember', { store: 'personal', kind: 'semantic', content: 'x' })
    expect(result).toMatchObject({ kind: 'error', code: 'MEMORY_STORE_UNKNOWN', details: { available: ['agent'] } })
  })

  it('a scope function returning { agent, user: undefined } fails with MEMORY_SCOPE_INVALID naming user', async () => {
    const error = await rejects(resolveMemory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: (ctx) => ({ agent: 'support', user: ctx.user?.id }) } } }))
    expect(error.code).toBe('MEMORY_SCOPE_INVALID')
    expect(error.message).toContain('"user"')
  })

  it('a scope function returning { user: undefined } fails with MEMORY_SCOPE_REQUIRED', async () => {
    const error = await rejects(resolveMemory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: (ctx) => ({ user: ctx.user?.id }) } } }))
    expect(error.code).toBe('MEMORY_SCOPE_REQUIRED')
  })

  it('a scope function returning an unknown field fails with MEMORY_SCOPE_INVALID', async () => {
    const error = await rejects(resolveMemory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: () => ({ agent: 'a', team: 'x' }) as MemoryScope } } }))
    expect(error.code).toBe('MEMORY_SCOPE_INVALID')
  })

  it('a factory returning a non-adapter fails with MEMORY_ADAPTER_REQUIRED', async () => {
    const factory = { kind: 'broken', create: () => ({ search: () => [] }) } as unknown as MemoryStoreFactory
    const error = await rejects(resolveMemory({ stores: { agent: { adapter: factory, scope: { agent: 'a' } } } }))
    expect(error.code).toBe('MEMORY_ADAPTER_REQUIRED')
    expect(error.message).toContain('read, append, delete, export')
  })

  it('adds only memory_search and memory_read when write.mode is off', async () => {
    const resolved = await resolveMemory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' } } } })
    expect(Object.keys(resolved.tools).sort()).toEqual(['memory_read', 'memory_search'])
  })

  it('adds all four tools when a store sets write.mode tool', async () => {
    const resolved = await resolveMemory({ stores: { ro: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' } }, agent: writableStore() } })
    expect(Object.keys(resolved.tools).sort()).toEqual(['memory_delete', 'memory_read', 'memory_remember', 'memory_search'])
  })

  it('read.tools.search false and read.tools.read false remove those tools', async () => {
    const noSearch = await resolveMemory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, read: { tools: { search: false } } } } })
    expect(Object.keys(noSearch.tools)).toEqual(['memory_read'])
    const none = await resolveMemory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, read: { tools: { search: false, read: false } } } } })
    expect(Object.keys(none.tools)).toEqual([])
    expect(none.instructions).toEqual([])
  })

  it('adds one instruction listing the stores, their tools and allowed kinds', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore({ allowKinds: ['semantic', 'profile'] }), docs: { adapter: inMemoryMemoryStore(), scope: { project: 'p' } } } })
    expect(resolved.instructions).toHaveLength(1)
    const text = resolved.instructions[0]!
    expect(text).toContain('"agent": memory_search, memory_read, memory_remember (kinds semantic, profile), memory_delete')
    expect(text).toContain('"docs": memory_search, memory_read')
    expect(text).toContain('Omit `store` to use "agent"')
  })

  it('the JSON Schema of each tool comes from its zod schema, with limit optional for the model', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    const schema = z.toJSONSchema(resolved.tools.memory_search!.inputSchema, { io: 'input' }) as { required: string[]; properties: Record<string, { description?: string }> }
    expect(schema.required).toEqual(['query'])
    expect(Object.keys(schema.properties).sort()).toEqual(['after', 'before', 'keywords', 'kinds', 'limit', 'occurredAfter', 'occurredBefore', 'query', 'store', 'tags', 'topics'])
    for (const [name, property] of Object.entries(schema.properties)) expect(property.description, name).toBeTruthy()
  })
})

// ---- store selection ----

describe('store selection', () => {
  it('the only store is used when store is omitted', async () => {
    const resolved = await resolveMemory({ stores: { notes: writableStore() } })
    const result = await resolved.call('memory_remember', { kind: 'semantic', content: 'Alice likes tea' })
    expect(result).toMatchObject({ kind: 'ok', output: { action: 'created', store: 'notes' } })
  })

  it('the store named agent is used when store is omitted and there are several', async () => {
    const resolved = await resolveMemory({ stores: { notes: writableStore(), agent: writableStore() } })
    const result = await resolved.call('memory_remember', { kind: 'semantic', content: 'Alice likes tea' })
    expect(result).toMatchObject({ kind: 'ok', output: { store: 'agent' } })
  })

  it('several stores and none named agent: omitting store fails MEMORY_STORE_REQUIRED listing them', async () => {
    const resolved = await resolveMemory({ stores: { notes: writableStore(), facts: writableStore() } })
    const result = await resolved.call('memory_search', { query: 'tea' })
    expect(result).toMatchObject({ kind: 'error', code: 'MEMORY_STORE_REQUIRED', details: { available: ['notes', 'facts'] } })
    expect(result.kind === 'error' && result.message).toContain('"notes", "facts"')
  })

  it('the only store offering the operation is used even when others exist', async () => {
    const resolved = await resolveMemory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' } }, notes: writableStore() } })
    const result = await resolved.call('memory_remember', { kind: 'semantic', content: 'x' })
    expect(result).toMatchObject({ kind: 'ok', output: { store: 'notes' } })
  })

  it('an unknown store fails MEMORY_STORE_UNKNOWN listing the available stores', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    const result = await resolved.call('memory_read', { id: 'x', store: 'global' })
    expect(result).toMatchObject({ kind: 'error', code: 'MEMORY_STORE_UNKNOWN', details: { store: 'global', available: ['agent'] } })
  })

  it('memory_remember on a store with write.mode off fails MEMORY_OPERATION_NOT_ALLOWED', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore(), docs: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' } } } })
    const result = await resolved.call('memory_remember', { store: 'docs', kind: 'semantic', content: 'x' })
    expect(result).toMatchObject({ kind: 'error', code: 'MEMORY_OPERATION_NOT_ALLOWED', details: { store: 'docs', available: ['agent'] } })
  })

  it('memory_delete on a store with write.mode off fails MEMORY_OPERATION_NOT_ALLOWED', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore(), docs: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' } } } })
    expect(await resolved.call('memory_delete', { store: 'docs', id: 'x' })).toMatchObject({ kind: 'error', code: 'MEMORY_OPERATION_NOT_ALLOWED' })
  })

  it('memory_search on a store with read.tools.search false fails MEMORY_OPERATION_NOT_ALLOWED', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore(), hidden: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, read: { tools: { search: false } } } } })
    expect(await resolved.call('memory_search', { store: 'hidden', query: 'x' })).toMatchObject({ kind: 'error', code: 'MEMORY_OPERATION_NOT_ALLOWED' })
  })
})

// ---- policies ----

describe('write policies', () => {
  it('each store has its own write policy: the policy follows the selected store', async () => {
    const resolved = await resolveMemory({ stores: {
      agent: writableStore({ write: { mode: 'tool', policy: 'require-approval' } }),
      scratch: writableStore({ write: { mode: 'tool', policy: 'allow' } }),
      locked: writableStore({ write: { mode: 'tool', policy: 'deny' } }),
    } })
    expect(await resolved.policy('memory_remember', { kind: 'semantic', content: 'x' })).toBe('require-approval')
    expect(await resolved.policy('memory_remember', { kind: 'semantic', content: 'x', store: 'scratch' })).toBe('allow')
    expect(await resolved.policy('memory_delete', { id: 'x', store: 'locked' })).toBe('deny')
  })

  it('write.policy defaults to allow', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    expect(await resolved.policy('memory_remember', { kind: 'semantic', content: 'x' })).toBe('allow')
  })

  it('a write.policy function receives the call and decides', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore({ write: { mode: 'tool', policy: ({ tool }) => (tool === 'memory_delete' ? 'require-approval' : 'allow') } }) } })
    expect(await resolved.policy('memory_remember', { kind: 'semantic', content: 'x' })).toBe('allow')
    const saved = await resolved.call('memory_remember', { kind: 'semantic', content: 'x' })
    const id = (saved as { output: { record: { id: string } } }).output.record.id
    expect(await resolved.policy('memory_delete', { id })).toBe('require-approval')
  })

  it('read tools never require approval, whatever the write policy', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore({ write: { mode: 'tool', policy: 'require-approval' } }) } })
    expect(await resolved.policy('memory_search', { query: 'x' })).toBe('allow')
    expect(await resolved.policy('memory_read', { id: 'x' })).toBe('allow')
  })

  it('a store-selection error is raised by execute even when the policy runs first', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore({ write: { mode: 'tool', policy: 'require-approval' } }) } })
    const input = { kind: 'semantic', content: 'x', store: 'nope' }
    expect(await resolved.policy('memory_remember', input)).toBe('allow')
    expect(await resolved.call('memory_remember', input)).toMatchObject({ kind: 'error', code: 'MEMORY_STORE_UNKNOWN' })
  })
})

// ---- remember, read, delete, search ----

describe('memory_remember', () => {
  it('allowKinds rejects another kind with MEMORY_KIND_NOT_ALLOWED listing the allowed kinds', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore({ allowKinds: ['semantic', 'profile'] }) } })
    const result = await resolved.call('memory_remember', { kind: 'episodic', content: 'x' })
    expect(result).toMatchObject({ kind: 'error', code: 'MEMORY_KIND_NOT_ALLOWED', details: { allowKinds: ['semantic', 'profile'] } })
    expect(result.kind === 'error' && result.message).toContain('"semantic", "profile"')
    expect(await resolved.call('memory_remember', { kind: 'profile', content: 'x' })).toMatchObject({ kind: 'ok' })
  })

  it('an empty allowKinds list accepts no kind at all', async () => {
    const store = inMemoryMemoryStore()
    const resolved = await resolveMemory({ stores: { agent: { adapter: store, scope: { agent: 'a' }, allowKinds: [], write: { mode: 'tool' } } } })
    for (const kind of ['semantic', 'episodic', 'procedural', 'profile']) {
      expect(await resolved.call('memory_remember', { kind, content: 'x' })).toMatchObject({ kind: 'error', code: 'MEMORY_KIND_NOT_ALLOWED' })
    }
    expect(await (await adapterOf(store)).export({ store: 'agent', scope: { agent: 'a' } })).toEqual([])
  })

  it('omitted allowKinds accepts any kind, custom ones included', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    expect(await resolved.call('memory_remember', { kind: 'recipe', content: 'x' })).toMatchObject({ kind: 'ok', output: { record: { kind: 'recipe' } } })
  })

  it('provenance defaults to runId, threadId, source tool and toolName memory_remember', async () => {
    const store = inMemoryMemoryStore()
    const resolved = await resolveMemory({ stores: { agent: { adapter: store, scope: { agent: 'a' }, write: { mode: 'tool' } } } })
    const result = await resolved.call('memory_remember', { kind: 'semantic', content: 'x' }, { runId: 'run_7', threadId: 'thread_7' })
    const id = result.kind === 'ok' ? result.output.record.id : ''
    const record = await (await adapterOf(store)).read({ store: 'agent', scope: { agent: 'a' } }, id)
    expect(record?.provenance).toEqual({ runId: 'run_7', threadId: 'thread_7', source: 'tool', toolName: 'memory_remember' })
  })

  it('model-supplied provenance fields replace the defaults, others are kept', async () => {
    const store = inMemoryMemoryStore()
    const resolved = await resolveMemory({ stores: { agent: { adapter: store, scope: { agent: 'a' }, write: { mode: 'tool' } } } })
    const result = await resolved.call('memory_remember', { kind: 'semantic', content: 'x', provenance: { source: 'email', runId: 'fake', url: 'https://e.x' } })
    const id = result.kind === 'ok' ? result.output.record.id : ''
    const record = await (await adapterOf(store)).read({ store: 'agent', scope: { agent: 'a' } }, id)
    expect(record?.provenance).toEqual({ runId: 'fake', threadId: 'thread_1', source: 'email', toolName: 'memory_remember', url: 'https://e.x' })
  })

  it('the audit block is written by the host, with the approver, and the model cannot pass one', async () => {
    const store = inMemoryMemoryStore()
    const resolved = await resolveMemory({ stores: { agent: { adapter: store, scope: { agent: 'a' }, write: { mode: 'tool' } } } }, { user: alice })
    expect(await resolved.call('memory_remember', { kind: 'semantic', content: 'x', audit: { user: 'root' } })).toMatchObject({ kind: 'input-error' })
    const result = await resolved.call('memory_remember', { kind: 'semantic', content: 'x', provenance: { user: 'root', approver: 'root' } }, { approval: { id: 'ap_1', approver: 'carol' } })
    const id = result.kind === 'ok' ? result.output.record.id : ''
    const record = await (await adapterOf(store)).read({ store: 'agent', scope: { agent: 'a' } }, id)
    expect(record?.audit).toEqual({ via: 'tool', agent: 'support', runId: 'run_1', threadId: 'thread_1', user: 'alice', approver: 'carol' })
  })

  it('the scope cannot be passed by the model', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    const result = await resolved.call('memory_remember', { kind: 'semantic', content: 'x', scope: { user: 'bob' } })
    expect(result.kind).toBe('input-error')
    expect(result.kind === 'input-error' && result.message).toContain('scope')
  })

  it('supersedes marks same-scope records superseded', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    const first = await resolved.call('memory_remember', { kind: 'profile', content: 'Alice lives in Paris' })
    const oldId = first.kind === 'ok' ? first.output.record.id : ''
    const second = await resolved.call('memory_remember', { kind: 'profile', content: 'Alice lives in Rome', supersedes: [oldId] })
    expect(second).toMatchObject({ kind: 'ok', output: { record: { supersedes: [oldId] } } })
    const read = await resolved.call('memory_read', { id: oldId })
    expect(read).toMatchObject({ kind: 'ok', output: { record: { status: 'superseded', supersededBy: second.kind === 'ok' ? second.output.record.id : '' } } })
    const search = await resolved.call('memory_search', { query: 'Alice lives' })
    expect(search.kind === 'ok' && search.output.results.map((r: { content: string }) => r.content)).toEqual(['Alice lives in Rome'])
  })

  it('supersedes naming a record of another scope fails MEMORY_SUPERSEDE_NOT_FOUND and writes nothing', async () => {
    const store = inMemoryMemoryStore()
    const options: MemoryOptions = { stores: { agent: { adapter: store, scope: byUser, write: { mode: 'tool' } } } }
    const asAlice = await resolveMemory(options, { user: alice })
    const asBob = await resolveMemory(options, { user: bob })
    const alices = await asAlice.call('memory_remember', { kind: 'semantic', content: 'alice secret' })
    const aliceId = alices.kind === 'ok' ? alices.output.record.id : ''
    const result = await asBob.call('memory_remember', { kind: 'semantic', content: 'bob overrides', supersedes: [aliceId] })
    expect(result).toMatchObject({ kind: 'error', code: 'MEMORY_SUPERSEDE_NOT_FOUND' })
    const adapter = await adapterOf(store)
    expect(await adapter.export({ store: 'agent', scope: { agent: 'support', user: 'bob' } })).toEqual([])
    expect((await adapter.read({ store: 'agent', scope: { agent: 'support', user: 'alice' } }, aliceId))?.status).toBe('active')
  })

  it('returns a compact created record without scope or audit', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    const result = await resolved.call('memory_remember', { kind: 'semantic', content: 'x', title: 'T', tags: ['a'], pinned: true, confidence: 0.5 })
    expect(result.kind).toBe('ok')
    const output = result.kind === 'ok' ? result.output : undefined
    expect(output.action).toBe('created')
    expect(Object.keys(output.record).sort()).toEqual(['confidence', 'createdAt', 'id', 'kind', 'pinned', 'supersedes', 'tags', 'title', 'version'])
    expect(output.record).toMatchObject({ kind: 'semantic', title: 'T', tags: ['a'], pinned: true, confidence: 0.5, version: 1 })
  })
})

describe('memory_read and memory_delete', () => {
  const options = (): MemoryOptions => ({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: byUser, write: { mode: 'tool' } } } })

  it('memory_read of a record in another scope answers exactly like an unknown id', async () => {
    const opts = options()
    const asAlice = await resolveMemory(opts, { user: alice })
    const asBob = await resolveMemory(opts, { user: bob })
    const created = await asAlice.call('memory_remember', { kind: 'semantic', content: 'alice secret' })
    const id = created.kind === 'ok' ? created.output.record.id : ''
    const other = await asBob.call('memory_read', { id })
    const unknown = await asBob.call('memory_read', { id: 'mem_unknown' })
    expect(other).toMatchObject({ kind: 'error', code: 'MEMORY_RECORD_NOT_FOUND' })
    expect(other.kind === 'error' && other.message).toBe(unknown.kind === 'error' && unknown.message.replace('mem_unknown', id))
    expect(await asAlice.call('memory_read', { id })).toMatchObject({ kind: 'ok', output: { record: { id, content: 'alice secret' } } })
  })

  it('memory_delete of a record in another scope reports not found and leaves it active', async () => {
    const opts = options()
    const asAlice = await resolveMemory(opts, { user: alice })
    const asBob = await resolveMemory(opts, { user: bob })
    const created = await asAlice.call('memory_remember', { kind: 'semantic', content: 'alice secret' })
    const id = created.kind === 'ok' ? created.output.record.id : ''
    const other = await asBob.call('memory_delete', { id })
    const unknown = await asBob.call('memory_delete', { id: 'mem_unknown' })
    expect(other).toMatchObject({ kind: 'error', code: 'MEMORY_RECORD_NOT_FOUND' })
    expect(other.kind === 'error' && other.message).toBe(unknown.kind === 'error' && unknown.message.replace('mem_unknown', id))
    expect(await asAlice.call('memory_read', { id })).toMatchObject({ kind: 'ok', output: { record: { status: 'active' } } })
  })

  it('a deleted record is gone from read and search, and a second delete reports not found', async () => {
    const resolved = await resolveMemory(options(), { user: alice })
    const created = await resolved.call('memory_remember', { kind: 'semantic', content: 'temporary note' })
    const id = created.kind === 'ok' ? created.output.record.id : ''
    expect(await resolved.call('memory_delete', { id, reason: 'outdated' })).toEqual({ kind: 'ok', output: { action: 'deleted', store: 'agent', id, reason: 'outdated' } })
    expect(await resolved.call('memory_read', { id })).toMatchObject({ kind: 'error', code: 'MEMORY_RECORD_NOT_FOUND' })
    expect(await resolved.call('memory_search', { query: 'temporary' })).toEqual({ kind: 'ok', output: { store: 'agent', results: [] } })
    expect(await resolved.call('memory_delete', { id })).toMatchObject({ kind: 'error', code: 'MEMORY_RECORD_NOT_FOUND' })
  })

  it('memory_delete records the reason and the host audit on the record', async () => {
    const store = inMemoryMemoryStore()
    const resolved = await resolveMemory({ stores: { agent: { adapter: store, scope: { agent: 'a' }, write: { mode: 'tool' } } } }, { user: alice })
    const created = await resolved.call('memory_remember', { kind: 'semantic', content: 'x' })
    const id = created.kind === 'ok' ? created.output.record.id : ''
    await resolved.call('memory_delete', { id, reason: 'user asked' })
    const record = await (await adapterOf(store)).read({ store: 'agent', scope: { agent: 'a' } }, id)
    expect(record).toMatchObject({ status: 'deleted', deleteReason: 'user asked' })
  })
})

describe('memory_search', () => {
  it('returns { store, results } with id, kind, title, content, tags, score, createdAt, pinned', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    await resolved.call('memory_remember', { kind: 'semantic', content: 'Alice drinks green tea', title: 'Tea', tags: ['drinks'], pinned: true })
    const result = await resolved.call('memory_search', { query: 'tea' })
    expect(result.kind).toBe('ok')
    const output = result.kind === 'ok' ? result.output : undefined
    expect(output.store).toBe('agent')
    expect(output.results).toHaveLength(1)
    expect(Object.keys(output.results[0]).sort()).toEqual(['content', 'createdAt', 'id', 'kind', 'pinned', 'score', 'tags', 'title'])
    expect(output.results[0]).toMatchObject({ kind: 'semantic', title: 'Tea', content: 'Alice drinks green tea', tags: ['drinks'], pinned: true })
    expect(output.results[0].score).toBeGreaterThan(0)
  })

  it('returns 10 results by default and honours limit', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    for (let i = 0; i < 12; i += 1) await resolved.call('memory_remember', { kind: 'semantic', content: `fact number ${i} about tea` })
    const byDefault = await resolved.call('memory_search', { query: 'tea' })
    expect(byDefault.kind === 'ok' && byDefault.output.results).toHaveLength(10)
    const three = await resolved.call('memory_search', { query: 'tea', limit: 3 })
    expect(three.kind === 'ok' && three.output.results).toHaveLength(3)
  })

  it('limit 0 is an input error, not the default', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    const result = await resolved.call('memory_search', { query: 'tea', limit: 0 })
    expect(result).toMatchObject({ kind: 'input-error', message: 'limit: limit must be at least 1' })
    expect((await resolved.call('memory_search', { query: 'tea', limit: 101 })).kind).toBe('input-error')
    expect((await resolved.call('memory_search', { query: 'tea', limit: 2.5 })).kind).toBe('input-error')
  })

  it('an invalid or zone-less date is an input error, not an empty result', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    for (const after of ['yesterday', '2025-13-01T00:00:00Z', '2025-01-01T00:00:00']) {
      const result = await resolved.call('memory_search', { query: 'tea', after })
      expect(result.kind, after).toBe('input-error')
      expect(result.kind === 'input-error' && result.message).toContain('ISO 8601')
    }
    expect((await resolved.call('memory_search', { query: 'tea', after: '2025-01-01T00:00:00+02:00', before: '2026-01-01T00:00:00Z' })).kind).toBe('ok')
  })

  it('after later than before is an input error', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    expect(await resolved.call('memory_search', { query: 'tea', after: '2026-01-01T00:00:00Z', before: '2025-01-01T00:00:00Z' })).toMatchObject({ kind: 'input-error' })
  })

  it('an empty or blank query is an input error, not everything', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    expect((await resolved.call('memory_search', { query: '' })).kind).toBe('input-error')
    expect((await resolved.call('memory_search', { query: '   ' })).kind).toBe('input-error')
  })

  it('after and before filter by creation time', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    await resolved.call('memory_remember', { kind: 'semantic', content: 'tea now' })
    const future = await resolved.call('memory_search', { query: 'tea', after: '2999-01-01T00:00:00Z' })
    expect(future.kind === 'ok' && future.output.results).toEqual([])
    const past = await resolved.call('memory_search', { query: 'tea', before: '2999-01-01T00:00:00Z' })
    expect(past.kind === 'ok' && past.output.results).toHaveLength(1)
  })
})

// ---- size limits (fault class "Oversized input") ----

describe('size limits', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['content over 8,000 characters', { content: 'x'.repeat(MEMORY_LIMITS.contentChars + 1) }, 'longer than 8,000 characters'],
    ['title over 200 characters', { title: 't'.repeat(201) }, 'title is at most 200 characters'],
    ['more than 32 tags', { tags: Array.from({ length: 33 }, (_, i) => `t${i}`) }, 'at most 32 tags'],
    ['a tag over 64 characters', { tags: ['g'.repeat(65)] }, 'a tag is at most 64 characters'],
    ['metadata over 8 KB as JSON', { metadata: { blob: 'm'.repeat(8200) } }, 'metadata is larger than 8192 bytes'],
    ['provenance over 2 KB as JSON', { provenance: { note: 'p'.repeat(2100) } }, 'provenance is larger than 2048 bytes'],
    ['confidence above 1', { confidence: 1.5 }, 'confidence is between 0 and 1'],
  ]
  for (const [name, extra, message] of cases) {
    it(`memory_remember rejects ${name} with a clear input error`, async () => {
      const store = inMemoryMemoryStore()
      const resolved = await resolveMemory({ stores: { agent: { adapter: store, scope: { agent: 'a' }, write: { mode: 'tool' } } } })
      const result = await resolved.call('memory_remember', { kind: 'semantic', content: 'ok', ...extra })
      expect(result.kind).toBe('input-error')
      expect(result.kind === 'input-error' && result.message).toContain(message)
      expect(await (await adapterOf(store)).export({ store: 'agent', scope: { agent: 'a' } })).toEqual([])
    })
  }

  it('content of exactly 8,000 characters is accepted', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    expect((await resolved.call('memory_remember', { kind: 'semantic', content: 'x'.repeat(8000) })).kind).toBe('ok')
  })

  it('memory_delete rejects a reason over 500 characters', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    const result = await resolved.call('memory_delete', { id: 'x', reason: 'r'.repeat(501) })
    expect(result.kind === 'input-error' && result.message).toContain('reason is at most 500 characters')
  })
})

// ---- approval UX ----

describe('approval reason and fingerprint', () => {
  it('approvalReason of memory_remember names the store, kind and the first 120 characters', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore({ write: { mode: 'tool', policy: 'require-approval' } }) } })
    const content = `${'a'.repeat(119)}bc and more`
    const reason = await resolved.tools.memory_remember!.approvalReason!({ kind: 'semantic', content }, execContext('memory_remember', undefined))
    expect(reason).toBe(`Remember in store "agent" (kind semantic): "${'a'.repeat(119)}b…"`)
  })

  it('approvalReason of memory_delete names the record and its content', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    const created = await resolved.call('memory_remember', { kind: 'semantic', content: 'Alice likes tea' })
    const id = created.kind === 'ok' ? created.output.record.id : ''
    const reason = await resolved.tools.memory_delete!.approvalReason!({ id, reason: 'wrong' }, execContext('memory_delete', undefined))
    expect(reason).toBe(`Delete record "${id}" from store "agent" (semantic): "Alice likes tea". Reason: wrong`)
  })

  it('the delete fingerprint changes when the target record changes', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    const created = await resolved.call('memory_remember', { kind: 'semantic', content: 'v1' })
    const id = created.kind === 'ok' ? created.output.record.id : ''
    const fingerprint = () => resolved.tools.memory_delete!.approvalFingerprint!({ id }, execContext('memory_delete', undefined))
    const before = await fingerprint()
    expect(before).toBe(`agent/${id}@1:active`)
    await resolved.call('memory_remember', { kind: 'semantic', content: 'v2', supersedes: [id] })
    expect(await fingerprint()).toBe(`agent/${id}@2:superseded`)
  })

  it('remember fingerprints the superseded records only when supersedes is given', async () => {
    const resolved = await resolveMemory({ stores: { agent: writableStore() } })
    const tool = resolved.tools.memory_remember!
    expect(await tool.approvalFingerprint!({ kind: 'semantic', content: 'x' }, execContext('memory_remember', undefined))).toBeUndefined()
    expect(await tool.approvalFingerprint!({ kind: 'semantic', content: 'x', supersedes: ['mem_x'] }, execContext('memory_remember', undefined))).toBe('agent/mem_x@absent')
  })
})

// ---- scope isolation (property) ----

describe('scope isolation', () => {
  it('two users never see each other\'s records (property over random users and contents)', async () => {
    const users = fc.constantFrom('alice', 'bob', 'carol', 'u:1', 'u,1')
    await fc.assert(fc.asyncProperty(
      fc.array(fc.record({ user: users, word: fc.constantFrom('tea', 'coffee', 'juice'), note: fc.string({ minLength: 1, maxLength: 20 }) }), { minLength: 1, maxLength: 12 }),
      async (writes) => {
        const options: MemoryOptions = { stores: { agent: { adapter: inMemoryMemoryStore(), scope: byUser, write: { mode: 'tool' } } } }
        const ids = new Map<string, string[]>()
        for (const w of writes) {
          const resolved = await resolveMemory(options, { user: { id: w.user } })
          const result = await resolved.call('memory_remember', { kind: 'semantic', content: `${w.word} ${w.note} owner=${w.user}` })
          if (result.kind !== 'ok') throw new Error(JSON.stringify(result))
          ids.set(w.user, [...(ids.get(w.user) ?? []), result.output.record.id])
        }
        for (const user of ['alice', 'bob', 'carol', 'u:1', 'u,1']) {
          const resolved = await resolveMemory(options, { user: { id: user } })
          for (const word of ['tea', 'coffee', 'juice', 'owner']) {
            const found = await resolved.call('memory_search', { query: word, limit: 100 })
            if (found.kind !== 'ok') throw new Error(JSON.stringify(found))
            for (const hit of found.output.results) expect(hit.content.endsWith(`owner=${user}`)).toBe(true)
          }
          for (const [owner, owned] of ids) {
            for (const id of owned) {
              const read = await resolved.call('memory_read', { id })
              expect(read.kind === 'ok' ? 'found' : 'not-found').toBe(owner === user ? 'found' : 'not-found')
            }
          }
        }
      },
    ), { numRuns: 25 })
  })
})
