import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineAgent, defineCapability } from '../../src/agent/define.ts'
import type { AgentDefinitionInput } from '../../src/agent/types.ts'
import { scriptedModel } from '../../src/testing/index.ts'

const model = scriptedModel([])
const echo = { description: 'Echo', inputSchema: z.object({ text: z.string() }), execute: (input: { text: string }) => input.text }

function thrown(fn: () => unknown): { code?: string; message: string; details?: Record<string, unknown> } {
  try {
    fn()
  }
  catch (error) {
    return error as { code?: string; message: string; details?: Record<string, unknown> }
  }
  throw new Error('expected a throw')
}

describe('defineAgent', () => {
  it('defineAgent rejects an unknown key such as capabilites and names it', () => {
    const error = thrown(() => defineAgent({ driver: { model }, capabilites: [] } as unknown as AgentDefinitionInput))
    expect(error.code).toBe('AGENT_OPTIONS_INVALID')
    expect(error.message).toContain('"capabilites"')
  })

  it('defineAgent rejects a missing driver', () => {
    const error = thrown(() => defineAgent({ name: 'a' } as unknown as AgentDefinitionInput))
    expect(error.code).toBe('AGENT_OPTIONS_INVALID')
    expect(error.message).toContain('driver')
  })

  it('defineAgent rejects a driver that is neither { model } nor { run }', () => {
    const error = thrown(() => defineAgent({ driver: { modle: model } } as unknown as AgentDefinitionInput))
    expect(error.code).toBe('AGENT_OPTIONS_INVALID')
    expect(error.message).toContain('must have `model` (model-backed) or `run`')
  })

  it('defineAgent rejects an unknown model driver option such as maxStep', () => {
    const error = thrown(() => defineAgent({ driver: { model, maxStep: 3 } } as unknown as AgentDefinitionInput))
    expect(error.code).toBe('AGENT_OPTIONS_INVALID')
    expect(error.message).toContain('driver: unknown key(s) "maxStep"')
  })

  it('defineAgent rejects a custom-run driver with extra keys', () => {
    const error = thrown(() => defineAgent({ driver: { run() {}, model } } as unknown as AgentDefinitionInput))
    expect(error.code).toBe('AGENT_OPTIONS_INVALID')
    expect(error.message).toContain('"model"')
  })

  it('defineAgent rejects an agent name outside ^[a-zA-Z0-9_-]{1,64}$', () => {
    expect(thrown(() => defineAgent({ name: 'my agent', driver: { model } })).code).toBe('AGENT_OPTIONS_INVALID')
    expect(thrown(() => defineAgent({ name: 'a'.repeat(65), driver: { model } })).code).toBe('AGENT_OPTIONS_INVALID')
  })

  it('defineAgent rejects a tool name outside ^[a-zA-Z0-9_-]{1,64}$', () => {
    const error = thrown(() => defineAgent({ driver: { model }, tools: { 'save note': echo } }))
    expect(error.code).toBe('TOOL_NAME_INVALID')
    expect(error.message).toContain('"save note"')
  })

  it('defineAgent rejects a tool with an unknown key such as polcy', () => {
    const error = thrown(() => defineAgent({ driver: { model }, tools: { echo: { ...echo, polcy: 'deny' } as never } }))
    expect(error.code).toBe('TOOL_OPTIONS_INVALID')
    expect(error.message).toContain('tools.echo: unknown key(s) "polcy"')
  })

  it('defineAgent rejects a tool whose inputSchema is not a zod schema', () => {
    const error = thrown(() => defineAgent({ driver: { model }, tools: { echo: { ...echo, inputSchema: { type: 'object' } } as never } }))
    expect(error.code).toBe('TOOL_OPTIONS_INVALID')
    expect(error.message).toContain('tools.echo.inputSchema: must be a zod schema')
  })

  it('defineAgent defaults the name to agent and returns a frozen plain definition', () => {
    const agent = defineAgent({ driver: { model }, tools: { echo } })
    expect(agent).toMatchObject({ kind: 'agent', name: 'agent', instructions: '', workspace: undefined, capabilities: [] })
    expect(Object.keys(agent.tools)).toEqual(['echo'])
    expect(Object.isFrozen(agent)).toBe(true)
    expect(Object.isFrozen(agent.tools)).toBe(true)
    expect(Object.isFrozen(agent.capabilities)).toBe(true)
  })

  it('defineAgent accepts a custom-run driver', () => {
    const run = () => {}
    expect(defineAgent({ name: 'custom', driver: { run } }).driver).toEqual({ run })
  })
})

describe('defineCapability', () => {
  it('defineCapability returns a frozen { id, resolve }', () => {
    const resolve = () => {}
    const capability = defineCapability({ id: 'notes', resolve })
    expect(capability).toEqual({ id: 'notes', resolve })
    expect(Object.isFrozen(capability)).toBe(true)
  })

  it('defineCapability rejects unknown keys, an empty id and a missing resolve', () => {
    expect(thrown(() => defineCapability({ id: 'x', resolve() {}, reslove: 1 } as never)).message).toContain('"reslove"')
    expect(thrown(() => defineCapability({ id: '', resolve() {} })).code).toBe('CAPABILITY_OPTIONS_INVALID')
    expect(thrown(() => defineCapability({ id: 'x' } as never)).message).toContain('resolve')
  })
})

describe('defineAgent with several memory() capabilities', () => {
  it('two memory() capabilities with shared tools are refused with AGENT_OPTIONS_INVALID naming both and the fix of one memory() with both stores', async () => {
    const { inMemoryMemoryStore, memory } = await import('../../src/capabilities/index.ts')
    const notes = memory({ stores: { notes: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' } } } })
    const facts = memory({ stores: { facts: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' } } } })
    const error = thrown(() => defineAgent({ driver: { model }, capabilities: [notes, facts] }))
    expect(error.code).toBe('AGENT_OPTIONS_INVALID')
    expect(error.message).toContain('capabilities[0] and capabilities[1] are both memory() capabilities with the tools memory_search, memory_remember, ... (shared by their stores): every run would fail with TOOL_NAME_DUPLICATE')
    expect(error.message).toContain('Fix: put every store in one memory({ stores: { notes: { ... }, facts: { ... } } })')
  })

  it('two memory() capabilities whose tools cannot clash (stores with tools: named, other names) are accepted, and a run resolves both', async () => {
    const { inMemoryMemoryStore, memory } = await import('../../src/capabilities/index.ts')
    const { runAgent } = await import('../../src/agent/run.ts')
    const shared = memory({ stores: { notes: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' } } } })
    const named = memory({ stores: { facts: { adapter: inMemoryMemoryStore(), scope: { agent: 'a' }, tools: 'named' } } })
    const agent = defineAgent({ driver: { run() {} }, capabilities: [shared, named] })
    const events = []
    for await (const event of runAgent(agent, { input: 'hi' })) events.push(event)
    expect(events.find(event => event.type === 'error')).toBeUndefined()
  })
})
