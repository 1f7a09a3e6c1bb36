/**
 * Memory semantics (hosted-memory document): kinds and episodes, duplicates, the quality filter, keywords and
 * topics with an enrich hook. Real stores (the JSONL store on the fs driver, the in-memory store),
 * the real host with a scripted model for what reaches the model.
 */
import { describe, expect, it } from 'vitest'
import { isAgentError } from '../../src/errors.ts'
import { runAgent } from '../../src/index.ts'
import type { AgentTool, AgentUser, CapabilityContext, ToolExecutionContext, ToolPolicyDecision } from '../../src/agent/types.ts'
import { memory } from '../../src/memory/capability.ts'
import { normalizeContent } from '../../src/memory/dedupe.ts'
import { MEMORY_LIMITS, parseDuration } from '../../src/memory/schemas.ts'
import { inMemoryMemoryStore } from '../../src/memory/stores/in-memory.ts'
import { workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import { verifyLog } from '../../src/memory/event-log.ts'
import type { MemoryOptions, MemoryStoreOptions } from '../../src/memory/types.ts'
import { fsWorkspace, logLines, modelAgent, tempDir, toolResultsSeen } from '../faults/helpers.ts'

type CallResult = { kind: 'ok'; output: any } | { kind: 'input-error'; message: string } | { kind: 'error'; code: string; message: string }

interface Resolved {
  call(name: string, input: unknown): Promise<CallResult>
  policy(name: string, input: unknown): Promise<ToolPolicyDecision>
}

function execContext(name: string, user: AgentUser | undefined): ToolExecutionContext {
  return { agent: 'support', runId: 'run_1', threadId: 'thread_1', toolName: name, toolCallId: 'call_1', metadata: {}, ...(user ? { user } : {}) }
}

/** Resolves memory() with a hand-built context and calls tools like the host (validate, then execute). */
async function resolveMemory(options: MemoryOptions, user?: AgentUser, workspace = createWorkspace({ dir: tempDir('vam-sem-') })): Promise<Resolved> {
  const tools: Record<string, AgentTool> = {}
  const context: CapabilityContext = {
    agent: 'support', run: { runId: 'run_1', threadId: 'thread_1' }, ...(user ? { user } : {}), metadata: {}, workspace,
    tools: { add(name, tool) { tools[name] = tool } }, instructions: { add() {} }, prompt: { add() {} }, messages: { transform() {} }, onFinish() {},
  } as CapabilityContext
  await memory(options).resolve(context)
  return {
    async policy(name, input) {
      const tool = tools[name]!
      const parsed = tool.inputSchema.parse(input)
      return typeof tool.policy === 'function' ? tool.policy({ tool: name, input: parsed, context: execContext(name, user) }) : tool.policy ?? 'allow'
    },
    async call(name, input) {
      const tool = tools[name]!
      const parsed = tool.inputSchema.safeParse(input)
      if (!parsed.success) return { kind: 'input-error', message: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') }
      try {
        return { kind: 'ok', output: await tool.execute(parsed.data, execContext(name, user)) }
      } catch (error) {
        if (!isAgentError(error)) throw error
        return { kind: 'error', code: error.code, message: error.message }
      }
    },
  }
}

const ok = (result: CallResult) => {
  if (result.kind !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(result)}`)
  return result.output
}

const perUser = (extra: Partial<MemoryStoreOptions> = {}): MemoryStoreOptions => ({
  adapter: workspaceJsonlMemoryStore(),
  scope: ({ user }) => (user ? { agent: 'support', user: user.id } : undefined),
  write: { mode: 'tool' },
  ...extra,
})

describe('duplicates', () => {
  it('the same fact remembered three times in different case and spacing gives one record (JSONL store on fs)', async () => {
    const dir = tempDir('vam-dup-')
    const tools = await resolveMemory({ stores: { agent: perUser() } }, { id: 'ann' }, createWorkspace({ dir }))
    const first = ok(await tools.call('memory_remember', { kind: 'semantic', content: 'Likes green tea' }))
    const second = ok(await tools.call('memory_remember', { kind: 'semantic', content: '  LIKES   green\tTEA ' }))
    const third = ok(await tools.call('memory_remember', { kind: 'semantic', content: 'likes\ngreen tea' }))
    expect([first.action, second.action, third.action]).toEqual(['created', 'duplicate', 'duplicate'])
    expect(second.record.id).toBe(first.record.id)
    expect(third.record.id).toBe(first.record.id)
    expect(second.note).toContain('nothing was saved')
    expect(logLines(dir).map((line) => line.content)).toEqual(['Likes green tea'])
    const found = ok(await tools.call('memory_search', { query: 'green tea' }))
    expect(found.results.map((r: { id: string }) => r.id)).toEqual([first.record.id])
  })

  it('two users\' identical facts stay two records', async () => {
    const dir = tempDir('vam-dup-')
    const adapter = workspaceJsonlMemoryStore()
    const ann = await resolveMemory({ stores: { agent: perUser({ adapter }) } }, { id: 'ann' }, createWorkspace({ dir }))
    const bob = await resolveMemory({ stores: { agent: perUser({ adapter }) } }, { id: 'bob' }, createWorkspace({ dir }))
    const a = ok(await ann.call('memory_remember', { kind: 'semantic', content: 'Lives in Oslo' }))
    const b = ok(await bob.call('memory_remember', { kind: 'semantic', content: 'lives in oslo' }))
    expect([a.action, b.action]).toEqual(['created', 'created'])
    expect(a.record.id).not.toBe(b.record.id)
    expect(logLines(dir).map((line) => [line.scope.user, line.content])).toEqual([['ann', 'Lives in Oslo'], ['bob', 'lives in oslo']])
  })

  it('the same content in another kind is a new record, and content remembered again after its delete is created again', async () => {
    const tools = await resolveMemory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, write: { mode: 'tool' } } } })
    const fact = ok(await tools.call('memory_remember', { kind: 'semantic', content: 'Prefers email' }))
    const profile = ok(await tools.call('memory_remember', { kind: 'profile', content: 'prefers EMAIL' }))
    expect(profile.action).toBe('created')
    ok(await tools.call('memory_delete', { id: fact.record.id }))
    const again = ok(await tools.call('memory_remember', { kind: 'semantic', content: 'Prefers email' }))
    expect(again.action).toBe('created')
    expect(again.record.id).not.toBe(fact.record.id)
  })

  it('superseding a record with its own content writes the new record and supersedes the old one', async () => {
    const tools = await resolveMemory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, write: { mode: 'tool' } } } })
    const old = ok(await tools.call('memory_remember', { kind: 'semantic', content: 'Has a cat' }))
    const replaced = ok(await tools.call('memory_remember', { kind: 'semantic', content: 'has a cat', supersedes: [old.record.id] }))
    expect(replaced.action).toBe('created')
    expect(ok(await tools.call('memory_read', { id: old.record.id })).record.status).toBe('superseded')
  })

  it('after a pinned remember that supersedes a record of the same content, remembering that content again is a duplicate of the pinned record (fs log)', async () => {
    const dir = tempDir('vam-dup-')
    const tools = await resolveMemory({ stores: { agent: perUser() } }, { id: 'ann' }, createWorkspace({ dir }))
    const first = ok(await tools.call('memory_remember', { kind: 'semantic', content: 'I like tea' }))
    expect(ok(await tools.call('memory_remember', { kind: 'semantic', content: 'I like tea' })).action).toBe('duplicate')
    const pinned = ok(await tools.call('memory_remember', { kind: 'semantic', content: 'I like tea', pinned: true, supersedes: [first.record.id] }))
    expect(pinned.action).toBe('created')
    const later = [ok(await tools.call('memory_remember', { kind: 'semantic', content: 'I like tea' })), ok(await tools.call('memory_remember', { kind: 'semantic', content: 'I like tea' }))]
    expect(later.map(output => [output.action, output.record.id])).toEqual([['duplicate', pinned.record.id], ['duplicate', pinned.record.id]])
    expect(logLines(dir).filter(line => line.type === 'remember')).toHaveLength(2)
    const found = ok(await tools.call('memory_search', { query: 'tea' }))
    expect(found.results.map((r: { id: string }) => r.id)).toEqual([pinned.record.id])
  })

  it('50 parallel identical remembers into one scope give one record (fs log), and the chain verifies', async () => {
    const dir = tempDir('vam-dup-')
    const tools = await resolveMemory({ stores: { agent: perUser() } }, { id: 'ann' }, createWorkspace({ dir }))
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => tools.call('memory_remember', { kind: 'semantic', content: i % 2 ? 'Works at ACME' : 'works  at acme' })))
    const outputs = results.map(ok)
    expect(outputs.filter((o) => o.action === 'created')).toHaveLength(1)
    expect(new Set(outputs.map((o) => o.record.id)).size).toBe(1)
    expect(logLines(dir)).toHaveLength(1)
    expect((await verifyLog(createWorkspace({ dir }), 'memory/memory.jsonl')).ok).toBe(true)
  })

  it('a direct adapter append keeps duplicates unless it passes duplicates: "skip", and then reports the existing record', async () => {
    const adapter = await inMemoryMemoryStore().create({ store: 'agent', agent: 'a', writable: true })
    const target = { store: 'agent', scope: { agent: 'a' } }
    const first = await adapter.append(target, { kind: 'semantic', content: 'Straße' }, { audit: { via: 'api' } })
    const kept = await adapter.append(target, { kind: 'semantic', content: 'STRASSE' }, { audit: { via: 'api' } })
    expect(kept.id).not.toBe(first.id)
    const seen: string[] = []
    const skipped = await adapter.append(target, { kind: 'semantic', content: 'strasse' }, { audit: { via: 'api' }, duplicates: 'skip', onDuplicate: (r) => seen.push(r.id) })
    expect(skipped.id).toBe(first.id)
    expect(seen).toEqual([first.id])
    expect(await adapter.export(target)).toHaveLength(2)
  })

  it('content is compared after NFKC, case folding and collapsing white space and invisible format characters', () => {
    expect(normalizeContent('ＬＩＫＥＳ\u00a0Tea')).toBe('likes tea')
    expect(normalizeContent('Grüße')).toBe(normalizeContent('GRÜSSE'))
    expect(normalizeContent('green\u200btea')).toBe('green tea')
    expect(normalizeContent(' \u200b\t')).toBe('')
  })
})

describe('quality filter', () => {
  it('a write.filter rejection reaches the model as MEMORY_WRITE_REJECTED with the reason, and nothing is written', async () => {
    const dir = tempDir('vam-filter-')
    const seen: Array<{ content: string; store: string; user?: string }> = []
    const tools = await resolveMemory({ stores: { agent: perUser({ write: { mode: 'tool', filter: (candidate, context) => {
      seen.push({ content: candidate.content, store: context.store, user: context.user?.id })
      return /^(hi|hello|thanks)\b/i.test(candidate.content) ? { reject: 'greetings are not worth remembering' } : 'accept'
    } } }) } }, { id: 'ann' }, createWorkspace({ dir }))
    const rejected = await tools.call('memory_remember', { kind: 'semantic', content: 'Hello there!' })
    expect(rejected).toMatchObject({ kind: 'error', code: 'MEMORY_WRITE_REJECTED' })
    expect((rejected as { message: string }).message).toContain('greetings are not worth remembering')
    expect(ok(await tools.call('memory_remember', { kind: 'semantic', content: 'Allergic to nuts' })).action).toBe('created')
    expect(seen).toEqual([{ content: 'Hello there!', store: 'agent', user: 'ann' }, { content: 'Allergic to nuts', store: 'agent', user: 'ann' }])
    expect(logLines(dir).map((line) => line.content)).toEqual(['Allergic to nuts'])
  })

  it('the filter runs before approval: a rejected write is never put to the user, an accepted one is', async () => {
    const tools = await resolveMemory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, write: { mode: 'tool', policy: 'require-approval', filter: (c) => (c.content.includes('mood') ? { reject: 'moods are temporary' } : undefined) } } } })
    expect(await tools.policy('memory_remember', { kind: 'semantic', content: 'in a good mood' })).toBe('allow')
    expect(await tools.call('memory_remember', { kind: 'semantic', content: 'in a good mood' })).toMatchObject({ code: 'MEMORY_WRITE_REJECTED' })
    expect(await tools.policy('memory_remember', { kind: 'semantic', content: 'Lives in Oslo' })).toBe('require-approval')
  })

  it('built-in checks: invisible-only content is MEMORY_CONTENT_EMPTY, content over write.maxContentLength is MEMORY_CONTENT_TOO_LONG, a throwing filter is MEMORY_WRITE_FILTER_FAILED', async () => {
    const tools = await resolveMemory({ stores: {
      agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, write: { mode: 'tool', maxContentLength: 20 } },
      broken: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, write: { mode: 'tool', filter: () => { throw new Error('classifier down') } } },
    } })
    expect(await tools.call('memory_remember', { kind: 'semantic', content: '\u200b\u200b' })).toMatchObject({ code: 'MEMORY_CONTENT_EMPTY' })
    const long = await tools.call('memory_remember', { kind: 'semantic', content: 'x'.repeat(21) })
    expect(long).toMatchObject({ code: 'MEMORY_CONTENT_TOO_LONG' })
    expect((long as { message: string }).message).toContain('at most 20')
    expect(await tools.call('memory_remember', { kind: 'semantic', content: 'x'.repeat(20) })).toMatchObject({ kind: 'ok' })
    expect(await tools.call('memory_remember', { kind: 'semantic', content: '   ' })).toMatchObject({ kind: 'input-error' })
    const failed = await tools.call('memory_remember', { store: 'broken', kind: 'semantic', content: 'A fact' })
    expect(failed).toMatchObject({ code: 'MEMORY_WRITE_FILTER_FAILED' })
    expect((failed as { message: string }).message).toContain('classifier down')
  })

  it('with a scripted model, the rejection comes back as a tool error the model reads, and the run goes on', async () => {
    const workspace = fsWorkspace()
    const { agent, model } = modelAgent(workspace, [
      { toolCalls: [{ toolName: 'memory_remember', input: { kind: 'semantic', content: 'thanks!' } }] },
      { text: 'Nothing worth saving.' },
    ], { agent: perUser({ write: { mode: 'tool', filter: (c) => (c.content.startsWith('thanks') ? { reject: 'pleasantries are not facts' } : 'accept') } }) })
    const result = await runAgent(agent, { input: 'thanks!', user: { id: 'ann' } }).result
    expect(result.status).toBe('completed')
    const [seen] = toolResultsSeen(model, 1)
    expect(JSON.stringify(seen!.output)).toContain('MEMORY_WRITE_REJECTED')
    expect(JSON.stringify(seen!.output)).toContain('pleasantries are not facts')
    expect(logLines(workspace.dir)).toEqual([])
  })
})

describe('kinds, episodes, keywords and topics', () => {
  const episode = {
    observation: 'User could not log in; three failed attempts',
    thoughts: 'Lockout after repeated failures',
    action: 'Sent a password reset link',
    result: 'Logged in again; lockouts need a reset',
  }

  it('an episodic record carries its episode: validated, stored, searchable by its text, read back after a replay from disk', async () => {
    const dir = tempDir('vam-episode-')
    const tools = await resolveMemory({ stores: { agent: perUser() } }, { id: 'ann' }, createWorkspace({ dir }))
    const created = ok(await tools.call('memory_remember', { kind: 'episodic', content: 'Resolved an account lockout', episode }))
    const found = ok(await tools.call('memory_search', { query: 'password reset' }))
    expect(found.results.map((r: { id: string }) => r.id)).toEqual([created.record.id])
    expect(found.results[0].episode).toEqual(episode)
    // A new workspace object over the same folder replays the log from disk.
    const replayed = await resolveMemory({ stores: { agent: perUser() } }, { id: 'ann' }, createWorkspace({ dir }))
    expect(ok(await replayed.call('memory_read', { id: created.record.id })).record.episode).toEqual(episode)
    expect(ok(await replayed.call('memory_search', { query: 'lockouts', kinds: ['episodic'] })).results).toHaveLength(1)
  })

  it('episode input errors: only for kind episodic, observation required, each field at most 2,000 characters, no unknown fields', async () => {
    const tools = await resolveMemory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, write: { mode: 'tool' } } } })
    const semantic = await tools.call('memory_remember', { kind: 'semantic', content: 'x', episode })
    expect(semantic).toMatchObject({ kind: 'input-error' })
    expect((semantic as { message: string }).message).toContain('only for kind "episodic"')
    expect(await tools.call('memory_remember', { kind: 'episodic', content: 'x', episode: { thoughts: 'why' } })).toMatchObject({ kind: 'input-error' })
    const long = await tools.call('memory_remember', { kind: 'episodic', content: 'x', episode: { observation: 'o'.repeat(MEMORY_LIMITS.episodeFieldChars + 1) } })
    expect((long as { message: string }).message).toContain('at most 2,000 characters')
    expect(await tools.call('memory_remember', { kind: 'episodic', content: 'x', episode: { observation: 'o', mood: 'sad' } })).toMatchObject({ kind: 'input-error' })
  })

  it('custom kinds are accepted unless allowKinds lists others', async () => {
    const tools = await resolveMemory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, write: { mode: 'tool' } } } })
    expect(ok(await tools.call('memory_remember', { kind: 'recipe', content: 'Pancakes: eggs, flour, milk' })).record.kind).toBe('recipe')
  })

  it('keywords and topics are stored, searchable by their words and filterable (keywords all-of, topics any-of)', async () => {
    const tools = await resolveMemory({ stores: { agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, write: { mode: 'tool' } } } })
    const veg = ok(await tools.call('memory_remember', { kind: 'semantic', content: 'Shops at the market on Saturdays', keywords: ['organic', 'vegetables'], topics: ['food', 'shopping'] }))
    const car = ok(await tools.call('memory_remember', { kind: 'semantic', content: 'Drives to work', keywords: ['organic'], topics: ['transport'] }))
    expect(veg.record.keywords).toEqual(['organic', 'vegetables'])
    expect(ok(await tools.call('memory_search', { query: 'vegetables' })).results.map((r: { id: string }) => r.id)).toEqual([veg.record.id])
    const ids = async (input: object) => ok(await tools.call('memory_search', { query: 'organic', ...input })).results.map((r: { id: string }) => r.id).sort()
    expect(await ids({})).toEqual([veg.record.id, car.record.id].sort())
    expect(await ids({ keywords: ['ORGANIC', 'vegetables'] })).toEqual([veg.record.id])
    expect(await ids({ topics: ['transport', 'sports'] })).toEqual([car.record.id])
    expect(await ids({ topics: [] })).toEqual([])
  })

  it('write.enrich fills keywords and topics before the write, merged with the model\'s; a failing enrich saves the record and says so', async () => {
    const seen: string[] = []
    const tools = await resolveMemory({ stores: {
      agent: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, write: { mode: 'tool', enrich: async (c) => {
        seen.push(c.content)
        return { keywords: ['tea', 'Green', ''], topics: ['food'] }
      } } },
      flaky: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, write: { mode: 'tool', enrich: () => { throw new Error('quota exceeded') } } },
    } })
    const created = ok(await tools.call('memory_remember', { kind: 'semantic', content: 'Drinks green tea', keywords: ['green'] }))
    expect(seen).toEqual(['Drinks green tea'])
    expect(created.record.keywords).toEqual(['green', 'tea'])
    expect(created.record.topics).toEqual(['food'])
    expect(ok(await tools.call('memory_search', { query: 'tea', topics: ['food'] })).results).toHaveLength(1)
    const flaky = ok(await tools.call('memory_remember', { store: 'flaky', kind: 'semantic', content: 'A fact' }))
    expect(flaky.action).toBe('created')
    expect(flaky.warnings[0]).toContain('quota exceeded')
    expect(ok(await tools.call('memory_read', { store: 'flaky', id: flaky.record.id })).record.content).toBe('A fact')
  })

  it('options: write.filter, write.enrich, write.maxContentLength and retention are checked strictly', () => {
    const adapter = inMemoryMemoryStore()
    expect(() => memory({ stores: { agent: { adapter, scope: { agent: 'a' }, write: { mode: 'tool', filter: 'strict' as never } } } })).toThrow(/write\.filter/)
    expect(() => memory({ stores: { agent: { adapter, scope: { agent: 'a' }, write: { mode: 'tool', maxContentLength: MEMORY_LIMITS.contentChars + 1 } } } })).toThrow(/maxContentLength/)
    expect(() => memory({ stores: { agent: { adapter, scope: { agent: 'a' }, retention: { maxItems: 0 } } } })).toThrow(/maxItems/)
    expect(() => memory({ stores: { agent: { adapter, scope: { agent: 'a' }, retention: { maxAge: '3 weeks' } } } })).toThrow(/maxAge/)
    expect(() => memory({ stores: { agent: { adapter, scope: { agent: 'a' }, retention: { maxAgee: 1 } as never } } })).toThrow(/maxAgee/)
    expect([parseDuration('90d'), parseDuration('12h'), parseDuration('1500ms'), parseDuration(0), parseDuration('1y')]).toEqual([7_776_000_000, 43_200_000, 1500, undefined, undefined])
  })
})
