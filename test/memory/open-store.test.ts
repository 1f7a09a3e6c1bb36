import { describe, expect, it } from 'vitest'
import { defineAgent } from '../../src/agent/define.ts'
import { runAgent } from '../../src/agent/run.ts'
import { inMemoryMemoryStore, memory, openMemoryStore } from '../../src/capabilities/index.ts'
import { scriptedModel } from '../../src/testing/index.ts'

function teamAgent(model = scriptedModel([{ text: 'ok' }])) {
  return defineAgent({
    name: 'support',
    driver: { model },
    capabilities: [memory({
      stores: {
        agent: { adapter: inMemoryMemoryStore(), scope: ({ user }) => (user ? { agent: 'support', user: user.id } : undefined), write: { mode: 'tool' } },
        team: { adapter: inMemoryMemoryStore(), scope: { agent: 'support', tenant: 'acme' } },
      },
    })],
  })
}

describe('openMemoryStore', () => {
  it('a read-only store filled from code is found by the model through memory_search', async () => {
    const model = scriptedModel([{ toolCalls: [{ toolName: 'memory_search', input: { store: 'team', query: 'refund' } }] }, { text: 'done' }])
    const agent = teamAgent(model)
    const { adapter, target } = await openMemoryStore(agent, { user: { id: 'ann' }, store: 'team' })
    expect(target).toEqual({ store: 'team', scope: { agent: 'support', tenant: 'acme' } })
    const saved = await adapter.append(target, { kind: 'procedural', content: 'Refunds over 100 EUR need a manager.' }, { audit: { via: 'api' } })
    const events = []
    for await (const event of runAgent(agent, { input: 'refund rules?', user: { id: 'bo' } })) events.push(event)
    const result = events.find(event => event.type === 'tool-result')
    expect(result).toMatchObject({ toolName: 'memory_search', output: { store: 'team', results: [{ id: saved.id, content: 'Refunds over 100 EUR need a manager.' }] } })
  })

  it('without a store name it opens the store named agent, in the user\'s scope', async () => {
    const { store, target } = await openMemoryStore(teamAgent(), { user: { id: 'ann' } })
    expect(store).toBe('agent')
    expect(target.scope).toEqual({ agent: 'support', user: 'ann' })
  })

  it('an unknown store name fails with MEMORY_STORE_UNKNOWN listing the stores', async () => {
    await expect(openMemoryStore(teamAgent(), { user: { id: 'ann' }, store: 'nope' })).rejects.toMatchObject({ code: 'MEMORY_STORE_UNKNOWN', details: { available: ['agent', 'team'] } })
  })

  it('an agent without memory() fails with MEMORY_NOT_CONFIGURED', async () => {
    const agent = defineAgent({ driver: { model: scriptedModel([]) } })
    await expect(openMemoryStore(agent, { user: { id: 'ann' } })).rejects.toMatchObject({ code: 'MEMORY_NOT_CONFIGURED' })
  })

  it('the { default: agent } a CommonJS app gets from importing a TypeScript agent opens the agent\'s store', async () => {
    const { store, target } = await openMemoryStore({ default: teamAgent() }, { user: { id: 'ann' } })
    expect(store).toBe('agent')
    expect(target.scope).toEqual({ agent: 'support', user: 'ann' })
  })

  it('undefined, {} or a module without an agent fails with AGENT_DEFINITION_REQUIRED saying what it got and to pass the default export', async () => {
    for (const [value, got] of [[undefined, 'undefined'], [{}, 'an empty object'], [{ agent: teamAgent() }, 'an object with keys "agent"']] as const) {
      const error = await openMemoryStore(value as never, { user: { id: 'ann' } }).then(() => undefined, (thrown: unknown) => thrown)
      expect(error).toMatchObject({ code: 'AGENT_DEFINITION_REQUIRED', why: `openMemoryStore() needs the agent definition defineAgent() returned as its first argument, and got ${got}` })
      expect((error as { fix: string }).fix).toContain("the module's default export (import agent from './server/agents/<name>.ts', or mod.default")
    }
    const nested = await openMemoryStore({ default: { name: 'x' } } as never, {}).then(() => undefined, (thrown: unknown) => thrown)
    expect(nested).toMatchObject({ code: 'AGENT_DEFINITION_REQUIRED', why: 'openMemoryStore() needs the agent definition defineAgent() returned as its first argument, and got an object with keys "default" whose "default" is no agent definition either' })
  })
})
