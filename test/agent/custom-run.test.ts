import { afterEach, describe, expect, it } from 'vitest'
import { defineAgent } from '../../src/agent/define.ts'
import { listApprovals, resolveApproval } from '../../src/agent/approvals.ts'
import { runAgent } from '../../src/agent/run.ts'
import type { CustomRunContext, ToolCallOutcome } from '../../src/agent/types.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import { collect, memoryWorkspace, notesTools, tempDir, types } from './helpers.ts'

/** A driver that runs the calls given in the input as JSON lines: `{"tool": "...", "input": {...}}`. */
function scriptDriver(log: CustomRunContext[] = [], outcomes: ToolCallOutcome[] = []) {
  return {
    log,
    outcomes,
    async run(context: CustomRunContext) {
      log.push(context)
      if (context.resumed) {
        context.write(`resumed ${context.resumed.outcome.status}`)
        return
      }
      for (const line of (context.input ?? '').split('\n').filter(Boolean)) {
        const { tool, input } = JSON.parse(line) as { tool: string; input: unknown }
        const outcome = await context.tools[tool]!.call(input)
        outcomes.push(outcome)
        context.write(`${tool}:${outcome.status};`)
      }
    },
  }
}

const call = (tool: string, input: unknown) => JSON.stringify({ tool, input })

function setup(workspace = memoryWorkspace()) {
  const notes = notesTools()
  const driver = scriptDriver()
  const agent = defineAgent({ name: 'custom', instructions: 'Be careful.', driver: { run: driver.run }, tools: notes.tools, workspace })
  return { ...notes, driver, agent, workspace }
}

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!()
})

describe('custom-run driver', () => {
  it('driver.run receives the policy-wrapped tools with JSON Schema, instructions, ids and write()', async () => {
    const { agent, driver } = setup()
    const { events, result } = await collect(runAgent(agent, { input: call('read_note', { id: 'n1' }), threadId: 't', user: { id: 'u' }, metadata: { a: 1 } }))
    const context = driver.log[0]!
    expect(context).toMatchObject({ agent: 'custom', runId: result.runId, threadId: 't', user: { id: 'u' }, metadata: { a: 1 }, instructions: 'Be careful.', messages: [] })
    expect(context.resumed).toBeUndefined()
    expect(context.tools.read_note).toMatchObject({ name: 'read_note', description: 'Read a note by id', inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } })
    expect(driver.outcomes[0]).toMatchObject({ status: 'ok', output: { id: 'n1', text: 'first note' } })
    expect(types(events)).toEqual(['start', 'tool-call', 'tool-result', 'text-delta', 'finish'])
    expect(result).toMatchObject({ status: 'completed', text: 'read_note:ok;' })
  })

  it('a call with invalid input returns a TOOL_INPUT_INVALID error outcome and the run continues', async () => {
    const { agent, driver } = setup()
    const { events, result } = await collect(runAgent(agent, { input: `${call('read_note', { id: 5 })}\n${call('read_note', { id: 'n1' })}` }))
    expect(driver.outcomes[0]).toMatchObject({ status: 'error', error: { code: 'TOOL_INPUT_INVALID', details: { issues: [{ path: 'id' }] } } })
    expect(driver.outcomes[1]!.status).toBe('ok')
    expect(events.find((event) => event.type === 'tool-error')).toMatchObject({ error: { code: 'TOOL_INPUT_INVALID' } })
    expect(result.status).toBe('completed')
  })

  it('a call denied by policy returns TOOL_DENIED_BY_POLICY and does not execute', async () => {
    const notes = notesTools('deny')
    const driver = scriptDriver()
    const agent = defineAgent({ driver: { run: driver.run }, tools: notes.tools })
    await runAgent(agent, { input: call('write_note', { id: 'n1', text: 'x' }) }).result
    expect(driver.outcomes[0]).toMatchObject({ status: 'error', error: { code: 'TOOL_DENIED_BY_POLICY' } })
    expect(notes.executed).toEqual([])
  })

  it('a gated call returns approval-required, later calls still run, and the run ends awaiting approval', async () => {
    const { agent, driver, executed } = setup()
    const { events, result } = await collect(runAgent(agent, { input: `${call('write_note', { id: 'n1', text: 'new' })}\n${call('read_note', { id: 'n1' })}`, threadId: 't' }))
    expect(driver.outcomes.map((outcome) => outcome.status)).toEqual(['approval-required', 'ok'])
    expect(executed.map((entry) => entry.tool)).toEqual(['read_note'])
    expect(result.status).toBe('awaiting-approval')
    expect(result.approvals).toHaveLength(1)
    expect(result.approvals[0]).toMatchObject({ toolName: 'write_note', input: { id: 'n1', text: 'new' }, status: 'pending', threadId: 't' })
    expect(types(events)).toEqual(['start', 'tool-call', 'approval-request', 'text-delta', 'tool-call', 'tool-result', 'text-delta', 'finish'])
  })

  it('an approval runs the call once on the host, then driver.run continues with input undefined and the outcome', async () => {
    const { agent, driver, executed, notes } = setup()
    const first = await runAgent(agent, { input: call('write_note', { id: 'n1', text: 'new' }), threadId: 't' }).result
    const id = first.approvals[0]!.id
    const { events, result } = await collect(resolveApproval(agent, id, { approved: true, approver: 'lead' }))
    expect(result).toMatchObject({ status: 'completed', text: 'resumed ok', threadId: 't' })
    expect(types(events)).toEqual(['start', 'approval-decision', 'tool-result', 'text-delta', 'finish'])
    expect(executed).toEqual([{ tool: 'write_note', input: { id: 'n1', text: 'new' }, approval: { id, approver: 'lead' } }])
    expect(notes.get('n1')).toBe('new')
    const resumed = driver.log[1]!
    expect(resumed.input).toBeUndefined()
    expect(resumed.resumed).toMatchObject({ approval: { id, status: 'approved' }, outcome: { status: 'ok', output: { saved: 'n1' } } })
    const again = await resolveApproval(agent, id, { approved: true }).result
    expect(again.error?.code).toBe('APPROVAL_ALREADY_RESOLVED')
    expect(executed).toHaveLength(1)
  })

  it('a denial runs nothing and driver.run continues with a denied outcome', async () => {
    const { agent, driver, executed } = setup()
    const first = await runAgent(agent, { input: call('write_note', { id: 'n1', text: 'new' }) }).result
    const result = await resolveApproval(agent, first.approvals[0]!.id, { approved: false, reason: 'no thanks' }).result
    expect(result).toMatchObject({ status: 'completed', text: 'resumed denied' })
    expect(executed).toEqual([])
    expect(driver.log[1]!.resumed?.outcome).toEqual({ status: 'denied', toolCallId: first.approvals[0]!.toolCallId, reason: 'no thanks' })
  })

  it('an approval of the custom-run driver survives a restart', async () => {
    const { dir, cleanup } = await tempDir()
    cleanups.push(cleanup)
    const before = setup(createWorkspace({ dir }))
    const first = await runAgent(before.agent, { input: call('write_note', { id: 'n1', text: 'new' }) }).result
    const after = setup(createWorkspace({ dir }))
    const result = await resolveApproval(after.agent, first.approvals[0]!.id, { approved: true }).result
    expect(result.status).toBe('completed')
    expect(before.executed).toEqual([])
    expect(after.executed).toHaveLength(1)
  })

  it('unknown ids, other threads and fingerprint conflicts are answered for the custom-run driver too', async () => {
    const { agent, executed, notes } = setup()
    expect((await resolveApproval(agent, 'apr_nope', { approved: true }).result).error?.code).toBe('APPROVAL_NOT_FOUND')
    const first = await runAgent(agent, { input: call('write_note', { id: 'n1', text: 'new' }), threadId: 't1' }).result
    const id = first.approvals[0]!.id
    expect((await resolveApproval(agent, id, { approved: true, threadId: 't2' }).result).error?.code).toBe('APPROVAL_THREAD_MISMATCH')
    notes.set('n1', 'changed')
    const { events, result } = await collect(resolveApproval(agent, id, { approved: true, threadId: 't1' }))
    expect(events.find((event) => event.type === 'tool-error')).toMatchObject({ error: { code: 'APPROVAL_CONFLICT' } })
    expect(result.text).toBe('resumed error')
    expect(executed).toEqual([])
  })

  it('a new user message supersedes pending approvals of the custom-run driver', async () => {
    const { agent, executed } = setup()
    const first = await runAgent(agent, { input: call('write_note', { id: 'n1', text: 'new' }), threadId: 't' }).result
    const { events } = await collect(runAgent(agent, { input: call('read_note', { id: 'n1' }), threadId: 't' }))
    expect(events[1]).toMatchObject({ type: 'approval-decision', approvalId: first.approvals[0]!.id, approved: false, reason: 'superseded by a new user message' })
    expect((await listApprovals(agent))[0]!.status).toBe('denied')
    expect(executed.map((entry) => entry.tool)).toEqual(['read_note'])
  })

  it('the user input and the written text are stored in the thread transcript', async () => {
    const { agent, driver } = setup()
    await runAgent(agent, { input: call('read_note', { id: 'n1' }), threadId: 't' }).result
    await runAgent(agent, { input: '', threadId: 't' }).result
    expect(driver.log[1]!.messages).toEqual([
      { role: 'user', content: call('read_note', { id: 'n1' }) },
      { role: 'assistant', content: 'read_note:ok;' },
    ])
  })

  it('a driver that throws fails the run with DRIVER_FAILED', async () => {
    const agent = defineAgent({ driver: { run: () => { throw new Error('bad parser') } } })
    const { events, result } = await collect(runAgent(agent, { input: 'x' }))
    expect(result).toMatchObject({ status: 'failed', error: { code: 'DRIVER_FAILED' } })
    expect(result.error?.message).toContain('bad parser')
    expect(types(events)).toEqual(['start', 'error', 'finish'])
  })

  it('a custom run aborted through its signal fails with RUN_ABORTED', async () => {
    const controller = new AbortController()
    const agent = defineAgent({ driver: { run: (context) => { controller.abort(); context.signal?.throwIfAborted() } } })
    const result = await runAgent(agent, { input: 'x', signal: controller.signal }).result
    expect(result.error?.code).toBe('RUN_ABORTED')
  })
})
