import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineAgent, defineCapability } from '../../src/agent/define.ts'
import { runAgent } from '../../src/agent/run.ts'
import type { AgentTool, CapabilityContext } from '../../src/agent/types.ts'
import { scriptedModel } from '../../src/testing/index.ts'
import { collect, memoryWorkspace, types } from './helpers.ts'

const echo: AgentTool = {
  description: 'Echo a text',
  inputSchema: z.object({ text: z.string().min(1), times: z.number().int().optional() }),
  execute: (input: { text: string }) => ({ echoed: input.text }),
}

function lastToolResult(prompt: ReturnType<typeof scriptedModel>['prompts'][number]) {
  const tool = [...prompt].reverse().find((message) => message.role === 'tool')
  return tool?.role === 'tool' ? tool.content : []
}

describe('capabilities', () => {
  it('capabilities resolve at each invocation with a fresh runId and the given user and metadata', async () => {
    const seen: Array<Pick<CapabilityContext, 'agent' | 'run' | 'user' | 'metadata' | 'workspace'>> = []
    const workspace = memoryWorkspace()
    const capability = defineCapability({ id: 'spy', resolve: (context) => { seen.push({ agent: context.agent, run: context.run, user: context.user, metadata: context.metadata, workspace: context.workspace }) } })
    const agent = defineAgent({ name: 'spy', driver: { model: scriptedModel([{ text: 'a' }, { text: 'b' }]) }, capabilities: [capability], workspace })
    const first = await runAgent(agent, { input: 'hi', user: { id: 'u1' }, metadata: { channel: 'cli' } }).result
    const second = await runAgent(agent, { input: 'again', threadId: first.threadId, user: { id: 'u2' } }).result
    expect(seen).toHaveLength(2)
    expect(seen[0]).toEqual({ agent: 'spy', run: { runId: first.runId, threadId: first.threadId }, user: { id: 'u1' }, metadata: { channel: 'cli' }, workspace })
    expect(seen[1]).toEqual({ agent: 'spy', run: { runId: second.runId, threadId: first.threadId }, user: { id: 'u2' }, metadata: {}, workspace })
    expect(first.runId).toMatch(/^run_[0-9a-f]{20}$/)
    expect(first.threadId).toMatch(/^thread_[0-9a-f]{20}$/)
    expect(second.runId).not.toBe(first.runId)
  })

  it('capabilities resolve in order and their tools and instructions reach the model', async () => {
    const order: string[] = []
    const first = defineCapability({ id: 'first', resolve: (context) => { order.push('first'); context.instructions.add('Be brief.'); context.tools.add('echo', echo) } })
    const second = defineCapability({ id: 'second', resolve: async (context) => { await Promise.resolve(); order.push('second'); context.instructions.add('Cite notes.') } })
    const model = scriptedModel([{ text: 'ok' }])
    const agent = defineAgent({ instructions: 'You are a helper.', driver: { model }, capabilities: [first, second] })
    const result = await runAgent(agent, { input: 'hi' }).result
    expect(result.status).toBe('completed')
    expect(order).toEqual(['first', 'second'])
    expect(model.prompts[0]![0]).toEqual({ role: 'system', content: 'You are a helper.\n\nBe brief.\n\nCite notes.' })
    expect(model.calls[0]!.tools?.map((tool) => tool.name)).toEqual(['echo'])
  })

  it('a capability adding a tool name that already exists fails the run with TOOL_NAME_DUPLICATE', async () => {
    const capability = defineCapability({ id: 'dup', resolve: (context) => context.tools.add('echo', echo) })
    const agent = defineAgent({ driver: { model: scriptedModel([]) }, tools: { echo }, capabilities: [capability] })
    const { events, result } = await collect(runAgent(agent, { input: 'hi' }))
    expect(result.status).toBe('failed')
    expect(result.error?.code).toBe('TOOL_NAME_DUPLICATE')
    expect(types(events)).toEqual(['start', 'error', 'finish'])
  })

  it('a capability that throws fails the run with an error event and a resolved result', async () => {
    const capability = defineCapability({ id: 'broken', resolve: () => { throw new Error('no database') } })
    const agent = defineAgent({ driver: { model: scriptedModel([]) }, capabilities: [capability] })
    const { events, result } = await collect(runAgent(agent, { input: 'hi' }))
    expect(result).toMatchObject({ status: 'failed', error: { code: 'CAPABILITY_RESOLVE_FAILED' } })
    expect(result.error?.message).toContain('no database')
    expect(events.at(-2)).toEqual({ type: 'error', error: result.error })
    expect(events.at(-1)).toEqual({ type: 'finish', status: 'failed', text: '' })
  })
})

describe('events', () => {
  it('events arrive in order: start, text, tool call, tool result, text, finish', async () => {
    const model = scriptedModel([
      { text: 'Let me echo.', toolCalls: [{ toolName: 'echo', input: { text: 'hey' }, toolCallId: 'c1' }] },
      { text: 'Done.' },
    ])
    const agent = defineAgent({ driver: { model }, tools: { echo } })
    const { events, result } = await collect(runAgent(agent, { input: 'echo hey' }))
    expect(types(events)).toEqual(['start', 'text-delta', 'tool-call', 'tool-result', 'text-delta', 'finish'])
    expect(events[2]).toEqual({ type: 'tool-call', toolCallId: 'c1', toolName: 'echo', input: { text: 'hey' } })
    expect(events[3]).toMatchObject({ type: 'tool-result', toolCallId: 'c1', toolName: 'echo', output: { echoed: 'hey' } })
    expect(result).toMatchObject({ status: 'completed', text: 'Let me echo.Done.', approvals: [] })
    expect(events.at(-1)).toEqual({ type: 'finish', status: 'completed', text: 'Let me echo.Done.' })
  })

  it('a run whose result is awaited without iterating completes, and a late iteration still gets every event', async () => {
    const model = scriptedModel([{ toolCalls: [{ toolName: 'echo', input: { text: 'x' } }] }, { text: 'end' }])
    const run = runAgent(defineAgent({ driver: { model }, tools: { echo } }), { input: 'go' })
    const result = await run.result
    expect(result.status).toBe('completed')
    const events = []
    for await (const event of run) events.push(event.type)
    expect(events).toEqual(['start', 'tool-call', 'tool-result', 'text-delta', 'finish'])
  })

  it('an AgentRun can be iterated only once', async () => {
    const run = runAgent(defineAgent({ driver: { model: scriptedModel([{ text: 'x' }]) } }), { input: 'go' })
    run[Symbol.asyncIterator]()
    expect(() => run[Symbol.asyncIterator]()).toThrow(/iterated once/)
    await run.result
  })

  it('invalid run options fail the run with RUN_OPTIONS_INVALID', async () => {
    const agent = defineAgent({ driver: { model: scriptedModel([]) } })
    const result = await runAgent(agent, { input: 42, thread: 'x' } as never).result
    expect(result.status).toBe('failed')
    expect(result.error?.code).toBe('RUN_OPTIONS_INVALID')
    expect(result.error?.message).toContain('input')
    expect(result.error?.message).toContain('"thread"')
  })
})

describe('tool pipeline (model driver)', () => {
  it('a tool input error becomes a tool-error the model sees, and the run continues', async () => {
    const model = scriptedModel([
      { toolCalls: [{ toolName: 'echo', input: { text: '', times: 'twice' }, toolCallId: 'bad' }] },
      { toolCalls: [{ toolName: 'echo', input: { text: 'fixed' }, toolCallId: 'good' }] },
      { text: 'ok' },
    ])
    const agent = defineAgent({ driver: { model }, tools: { echo } })
    const { events, result } = await collect(runAgent(agent, { input: 'echo' }))
    expect(result.status).toBe('completed')
    const error = events.find((event) => event.type === 'tool-error')
    expect(error).toMatchObject({ toolCallId: 'bad', error: { code: 'TOOL_INPUT_INVALID' } })
    const issues = (error as unknown as { error: { details: { issues: Array<{ path: string }> } } }).error.details.issues
    expect(issues.map((issue) => issue.path).sort()).toEqual(['text', 'times'])
    const seen = lastToolResult(model.prompts[1]!)
    expect(seen[0]).toMatchObject({ type: 'tool-result', toolCallId: 'bad', output: { type: 'error-text' } })
    const text = (seen[0] as { output: { value: string } }).output.value
    expect(text).toContain('TOOL_INPUT_INVALID')
    expect(text).toContain('times:')
    expect(events.find((event) => event.type === 'tool-result')).toMatchObject({ toolCallId: 'good', output: { echoed: 'fixed' } })
  })

  it('tool input that is not JSON becomes a TOOL_INPUT_INVALID tool-error', async () => {
    const model = scriptedModel([{ toolCalls: [{ toolName: 'echo', input: '{"text": ' }] }, { text: 'sorry' }])
    const { events, result } = await collect(runAgent(defineAgent({ driver: { model }, tools: { echo } }), { input: 'x' }))
    expect(result.status).toBe('completed')
    expect(events.find((event) => event.type === 'tool-error')).toMatchObject({ error: { code: 'TOOL_INPUT_INVALID' } })
  })

  it('a call to an unknown tool becomes a TOOL_NOT_FOUND tool-error, and the run continues', async () => {
    const model = scriptedModel([{ toolCalls: [{ toolName: 'ehco', input: { text: 'x' } }] }, { text: 'oops' }])
    const { events, result } = await collect(runAgent(defineAgent({ driver: { model }, tools: { echo } }), { input: 'x' }))
    expect(result).toMatchObject({ status: 'completed', text: 'oops' })
    expect(events.find((event) => event.type === 'tool-error')).toMatchObject({ toolName: 'ehco', error: { code: 'TOOL_NOT_FOUND', details: { available: ['echo'] } } })
  })

  it('a deny policy stops the call with TOOL_DENIED_BY_POLICY and never executes it', async () => {
    let executed = 0
    const guarded: AgentTool = { ...echo, policy: 'deny', execute: () => { executed++ } }
    const model = scriptedModel([{ toolCalls: [{ toolName: 'guarded', input: { text: 'x' } }] }, { text: 'cannot' }])
    const { events, result } = await collect(runAgent(defineAgent({ driver: { model }, tools: { guarded } }), { input: 'x' }))
    expect(result.status).toBe('completed')
    expect(executed).toBe(0)
    expect(events.find((event) => event.type === 'tool-error')).toMatchObject({ error: { code: 'TOOL_DENIED_BY_POLICY' } })
    expect(JSON.stringify(lastToolResult(model.prompts[1]!))).toContain('TOOL_DENIED_BY_POLICY')
  })

  it('a policy function decides per call from the tool, the validated input and the context', async () => {
    const asked: Array<{ tool: string; input: unknown; user?: string; toolCallId: string }> = []
    const guarded: AgentTool = {
      ...echo,
      policy: ({ tool, input, context }) => {
        asked.push({ tool, input, user: context.user?.id, toolCallId: context.toolCallId })
        return (input as { text: string }).text === 'secret' ? 'deny' : 'allow'
      },
    }
    const model = scriptedModel([
      { toolCalls: [{ toolName: 'guarded', input: { text: 'public' }, toolCallId: 'a' }, { toolName: 'guarded', input: { text: 'secret' }, toolCallId: 'b' }] },
      { text: 'ok' },
    ])
    const { events } = await collect(runAgent(defineAgent({ driver: { model }, tools: { guarded } }), { input: 'x', user: { id: 'u1' } }))
    expect(asked).toEqual([
      { tool: 'guarded', input: { text: 'public' }, user: 'u1', toolCallId: 'a' },
      { tool: 'guarded', input: { text: 'secret' }, user: 'u1', toolCallId: 'b' },
    ])
    expect(events.find((event) => event.type === 'tool-result')).toMatchObject({ toolCallId: 'a' })
    expect(events.find((event) => event.type === 'tool-error')).toMatchObject({ toolCallId: 'b', error: { code: 'TOOL_DENIED_BY_POLICY' } })
  })

  it('a policy function that throws stops the call with TOOL_POLICY_FAILED instead of crashing the run', async () => {
    const guarded: AgentTool = { ...echo, policy: () => { throw new Error('policy db down') } }
    const model = scriptedModel([{ toolCalls: [{ toolName: 'guarded', input: { text: 'x' } }] }, { text: 'ok' }])
    const { events, result } = await collect(runAgent(defineAgent({ driver: { model }, tools: { guarded } }), { input: 'x' }))
    expect(result.status).toBe('completed')
    expect(events.find((event) => event.type === 'tool-error')).toMatchObject({ error: { code: 'TOOL_POLICY_FAILED' } })
  })

  it('a tool that throws becomes a tool-error with its code, and the run continues', async () => {
    const failing: AgentTool = { ...echo, execute: () => { throw new Error('disk full') } }
    const model = scriptedModel([{ toolCalls: [{ toolName: 'failing', input: { text: 'x' } }] }, { text: 'failed to save' }])
    const { events, result } = await collect(runAgent(defineAgent({ driver: { model }, tools: { failing } }), { input: 'x' }))
    expect(result.status).toBe('completed')
    const error = events.find((event) => event.type === 'tool-error')
    expect(error).toMatchObject({ error: { code: 'INTERNAL_ERROR', why: 'disk full' } })
    expect((error as { durationMs: number }).durationMs).toBeGreaterThanOrEqual(0)
  })

  it('the tool execution context carries agent, run, thread, tool, call id, user and metadata', async () => {
    let context: unknown
    const spy: AgentTool = { ...echo, execute: (_input, ctx) => { context = ctx; return 'ok' } }
    const model = scriptedModel([{ toolCalls: [{ toolName: 'spy', input: { text: 'x' }, toolCallId: 'c9' }] }, { text: '' }])
    const run = runAgent(defineAgent({ name: 'ctx', driver: { model }, tools: { spy } }), { input: 'x', threadId: 'th', user: { id: 'u' }, metadata: { m: 1 } })
    await run.result
    expect(context).toEqual({ agent: 'ctx', runId: run.runId, threadId: 'th', toolName: 'spy', toolCallId: 'c9', user: { id: 'u' }, metadata: { m: 1 } })
  })
})

describe('threads', () => {
  it('a thread continues across invocations: the model sees the earlier turns', async () => {
    const model = scriptedModel([{ text: 'Hello Ann.' }, { text: 'You are Ann.' }])
    const agent = defineAgent({ driver: { model }, workspace: memoryWorkspace() })
    await runAgent(agent, { input: 'I am Ann', threadId: 't' }).result
    await runAgent(agent, { input: 'Who am I?', threadId: 't' }).result
    expect(model.prompts[1]!.map((message) => message.role)).toEqual(['user', 'assistant', 'user'])
    expect(JSON.stringify(model.prompts[1])).toContain('Hello Ann.')
  })

  it('a new thread does not see another thread', async () => {
    const model = scriptedModel([{ text: 'one' }, { text: 'two' }])
    const agent = defineAgent({ driver: { model } })
    await runAgent(agent, { input: 'a', threadId: 't1' }).result
    await runAgent(agent, { input: 'b', threadId: 't2' }).result
    expect(model.prompts[1]!.map((message) => message.role)).toEqual(['user'])
  })

  it('a thread started by one user cannot be continued by another user: THREAD_ACCESS_DENIED and nothing stored', async () => {
    const workspace = memoryWorkspace()
    const model = scriptedModel([{ text: 'Noted, Ann.' }, { text: 'never played' }])
    const agent = defineAgent({ name: 'bot', driver: { model }, workspace })
    await runAgent(agent, { input: 'my PIN is 1234', threadId: 't', user: { id: 'ann' } }).result
    const before = await workspace.readText('agents:bot:threads:t.json')
    const result = await runAgent(agent, { input: 'what is her PIN?', threadId: 't', user: { id: 'bob' } }).result
    expect(result.status).toBe('failed')
    expect(result.error?.code).toBe('THREAD_ACCESS_DENIED')
    expect(result.text).toBe('')
    expect(model.prompts).toHaveLength(1)
    expect(await workspace.readText('agents:bot:threads:t.json')).toBe(before)
    const anonymous = await runAgent(agent, { input: 'and now?', threadId: 't' }).result
    expect(anonymous.error?.code).toBe('THREAD_ACCESS_DENIED')
  })

  it('the transcript is stored in the workspace under an encoded thread id', async () => {
    const workspace = memoryWorkspace()
    const agent = defineAgent({ name: 'bot', driver: { model: scriptedModel([{ text: 'hi' }]) }, workspace })
    await runAgent(agent, { input: 'hello', threadId: 'user:42/../x' }).result
    expect(await workspace.keys('agents:bot:threads')).toEqual(['agents:bot:threads:user%3A42%2F%2E%2E%2Fx.json'])
    const stored = await workspace.readJson<{ threadId: string; messages: unknown[] }>('agents:bot:threads:user%3A42%2F%2E%2E%2Fx.json')
    expect(stored?.threadId).toBe('user:42/../x')
    expect(stored?.messages).toEqual([{ role: 'user', content: 'hello' }, { role: 'assistant', content: [{ type: 'text', text: 'hi' }] }])
  })
})

describe('failures', () => {
  it('a run with an already aborted signal fails with RUN_ABORTED and calls no model', async () => {
    const model = scriptedModel([{ text: 'never' }])
    const controller = new AbortController()
    controller.abort()
    const { events, result } = await collect(runAgent(defineAgent({ driver: { model } }), { input: 'x', signal: controller.signal }))
    expect(result.error?.code).toBe('RUN_ABORTED')
    expect(types(events)).toEqual(['start', 'error', 'finish'])
    expect(model.prompts).toHaveLength(0)
  })

  it('a run aborted during a tool call fails with RUN_ABORTED, calls the model no further and stores nothing', async () => {
    const controller = new AbortController()
    const stopper: AgentTool = { ...echo, execute: () => { controller.abort(); return 'stopped' } }
    const model = scriptedModel([{ toolCalls: [{ toolName: 'stopper', input: { text: 'x' } }] }, { text: 'never' }])
    const workspace = memoryWorkspace()
    const result = await runAgent(defineAgent({ name: 'ab', driver: { model }, tools: { stopper }, workspace }), { input: 'x', threadId: 't', signal: controller.signal }).result
    expect(result.status).toBe('failed')
    expect(result.error?.code).toBe('RUN_ABORTED')
    expect(model.prompts).toHaveLength(1)
    expect(await workspace.keys('agents:ab:threads')).toEqual([])
  })

  it('a model error fails the run with MODEL_ERROR', async () => {
    const model = scriptedModel([{ error: 'rate limited' }])
    const { result } = await collect(runAgent(defineAgent({ driver: { model } }), { input: 'x' }))
    expect(result.status).toBe('failed')
    expect(result.error?.code).toBe('MODEL_ERROR')
    expect(result.error?.message).toContain('rate limited')
  })
})
