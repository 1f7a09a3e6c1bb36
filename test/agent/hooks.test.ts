import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineAgent } from '../../src/agent/define.ts'
import { runAgent } from '../../src/agent/run.ts'
import type { AgentCapability, CapabilityContext, ModelCallContext, RunFinish } from '../../src/agent/types.ts'
import { scriptedModel } from '../../src/testing/index.ts'
import { memoryWorkspace } from './helpers.ts'

type Prompt = ReturnType<typeof scriptedModel>['prompts'][number]
const systemOf = (prompt: Prompt) => prompt.filter((message) => message.role === 'system').map((message) => message.content).join('\n')

function capability(resolve: (context: CapabilityContext) => void): AgentCapability {
  return { id: 'probe', resolve }
}

const counter = {
  description: 'Count',
  inputSchema: z.object({}),
  execute: () => ({ counted: true }),
}

describe('capability hooks around model calls', () => {
  it('a prompt provider adds system text to every model call, and the text is not saved in the transcript', async () => {
    const calls: ModelCallContext[] = []
    const model = scriptedModel([{ toolCalls: [{ toolName: 'count', input: {} }] }, { text: 'done' }])
    const workspace = memoryWorkspace()
    const agent = defineAgent({
      name: 'bot', instructions: 'Be brief.', driver: { model }, workspace, tools: { count: counter },
      capabilities: [capability((context) => context.prompt.add((call) => {
        calls.push(call)
        return `<memory store="agent">step ${call.step}</memory>`
      }))],
    })
    const result = await runAgent(agent, { input: 'hello', threadId: 't' }).result
    expect(result.status).toBe('completed')
    expect(systemOf(model.prompts[0]!)).toBe('Be brief.\n\n<memory store="agent">step 0</memory>')
    expect(systemOf(model.prompts[1]!)).toBe('Be brief.\n\n<memory store="agent">step 1</memory>')
    expect(calls.map((call) => [call.step, call.input])).toEqual([[0, 'hello'], [1, 'hello']])
    // The second call sees the tool round trip of the first, so a provider can reflect it.
    expect(calls[1]!.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool'])
    expect(await workspace.readText('agents:bot:threads:t.json')).not.toContain('<memory')
  })

  it('a message transform changes what the model sees, not the stored transcript', async () => {
    const model = scriptedModel([{ text: 'one' }, { text: 'two' }])
    const workspace = memoryWorkspace()
    const agent = defineAgent({
      name: 'bot', driver: { model }, workspace,
      capabilities: [capability((context) => context.messages.transform((messages) => messages.slice(-1)))],
    })
    await runAgent(agent, { input: 'first', threadId: 't' }).result
    await runAgent(agent, { input: 'second', threadId: 't' }).result
    expect(model.prompts[1]!.filter((message) => message.role !== 'system')).toEqual([{ role: 'user', content: [{ type: 'text', text: 'second' }] }])
    const stored = await workspace.readJson<{ messages: unknown[] }>('agents:bot:threads:t.json')
    expect(stored!.messages).toHaveLength(4)
  })

  it('finish hooks receive the messages the invocation added and the whole transcript', async () => {
    const finishes: RunFinish[] = []
    const agent = defineAgent({
      name: 'bot', driver: { model: scriptedModel([{ text: 'hi' }, { text: 'again' }]) }, workspace: memoryWorkspace(),
      capabilities: [capability((context) => context.onFinish((finish) => { finishes.push(finish) }))],
    })
    await runAgent(agent, { input: 'a', threadId: 't' }).result
    await runAgent(agent, { input: 'b', threadId: 't' }).result
    expect(finishes.map((finish) => finish.status)).toEqual(['completed', 'completed'])
    expect(finishes[1]!.messages).toEqual([{ role: 'user', content: 'b' }, { role: 'assistant', content: [{ type: 'text', text: 'again' }] }])
    expect(finishes[1]!.transcript).toHaveLength(4)
  })

  it('a finish hook that throws fails the run with CAPABILITY_FINISH_FAILED and the transcript stays stored', async () => {
    const workspace = memoryWorkspace()
    const agent = defineAgent({
      name: 'bot', driver: { model: scriptedModel([{ text: 'hi' }]) }, workspace,
      capabilities: [capability((context) => context.onFinish(() => { throw new Error('disk full') }))],
    })
    const result = await runAgent(agent, { input: 'a', threadId: 't' }).result
    expect(result.status).toBe('failed')
    expect(result.error?.code).toBe('CAPABILITY_FINISH_FAILED')
    expect(result.error?.message).toContain('disk full')
    expect((await workspace.readJson<{ messages: unknown[] }>('agents:bot:threads:t.json'))!.messages).toHaveLength(2)
  })

  it('a custom-run driver sees prompt providers in its instructions and transformed messages', async () => {
    let seen: { instructions: string; messages: unknown[] } | undefined
    const agent = defineAgent({
      name: 'bot', instructions: 'Base.', workspace: memoryWorkspace(),
      driver: { run(context) { seen = { instructions: context.instructions, messages: context.messages } } },
      capabilities: [capability((context) => {
        context.prompt.add((call) => `recalled for ${call.input}`)
        context.messages.transform(() => [])
      })],
    })
    await runAgent(agent, { input: 'tea', threadId: 't' }).result
    await runAgent(agent, { input: 'coffee', threadId: 't' }).result
    expect(seen).toEqual({ instructions: 'Base.\n\nrecalled for coffee', messages: [] })
  })

  it('a prompt provider that throws fails the run with CAPABILITY_PROMPT_FAILED', async () => {
    const agent = defineAgent({
      name: 'bot', driver: { run() {} }, workspace: memoryWorkspace(),
      capabilities: [capability((context) => context.prompt.add(() => { throw new Error('index offline') }))],
    })
    const result = await runAgent(agent, { input: 'x' }).result
    expect(result.error?.code).toBe('CAPABILITY_PROMPT_FAILED')
  })

  it('hooks added after resolve() finished are refused with CAPABILITY_LATE_ADD', async () => {
    let later: CapabilityContext | undefined
    const agent = defineAgent({ name: 'bot', driver: { run() {} }, capabilities: [capability((context) => { later = context })] })
    await runAgent(agent, { input: 'x' }).result
    expect(() => later!.prompt.add(() => 'late')).toThrow(/CAPABILITY_LATE_ADD/)
    expect(() => later!.messages.transform((messages) => messages)).toThrow(/CAPABILITY_LATE_ADD/)
    expect(() => later!.onFinish(() => {})).toThrow(/CAPABILITY_LATE_ADD/)
  })
})
