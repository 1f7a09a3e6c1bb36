import { afterEach, describe, expect, it } from 'vitest'
import { defineAgent } from '../../src/agent/define.ts'
import { listApprovals, resolveApproval } from '../../src/agent/approvals.ts'
import { runAgent } from '../../src/agent/run.ts'
import type { AgentTool, ApprovalRequest } from '../../src/agent/types.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import { scriptedModel, type ScriptedStepInput } from '../../src/testing/index.ts'
import { collect, memoryWorkspace, notesTools, tempDir, types } from './helpers.ts'

const writeStep: ScriptedStepInput = { text: 'Saving.', toolCalls: [{ toolName: 'write_note', input: { id: 'n1', text: 'second' }, toolCallId: 'w1' }] }

function toolResultsSeen(prompt: ReturnType<typeof scriptedModel>['prompts'][number]) {
  return prompt.flatMap((message) => message.role === 'tool' ? message.content : [])
}

function setup(steps: ScriptedStepInput[], options: { workspace?: ReturnType<typeof memoryWorkspace> } = {}) {
  const notes = notesTools()
  const model = scriptedModel(steps)
  const agent = defineAgent({ name: 'notes', driver: { model }, tools: notes.tools, workspace: options.workspace ?? memoryWorkspace() })
  return { ...notes, model, agent }
}

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!()
})

describe('approvals with the model driver', () => {
  it('a require-approval call stops the run awaiting approval with a persisted request', async () => {
    const workspace = memoryWorkspace()
    const { agent, executed } = setup([writeStep], { workspace })
    const { events, result } = await collect(runAgent(agent, { input: 'save', threadId: 't1', user: { id: 'ann' } }))
    expect(result.status).toBe('awaiting-approval')
    expect(types(events)).toEqual(['start', 'text-delta', 'tool-call', 'approval-request', 'finish'])
    const approval = result.approvals[0]!
    expect(approval).toMatchObject({ agent: 'notes', runId: result.runId, threadId: 't1', user: { id: 'ann' }, toolName: 'write_note', toolCallId: 'w1', input: { id: 'n1', text: 'second' }, reason: 'overwrite note n1', status: 'pending', fingerprint: 'first note' })
    expect(approval.id).toMatch(/^apr_[0-9a-f]{20}$/)
    expect(await workspace.readJson(`agents:notes:approvals:${approval.id}.json`)).toEqual({ ...approval, integrity: expect.stringMatching(/^hmac-sha256:[0-9a-f]{64}$/) })
    expect(executed).toEqual([])
  })

  it('an approved call runs exactly once with the stored input and the approver, and the model continues', async () => {
    const { agent, executed, notes, model } = setup([writeStep, { text: 'Saved.' }])
    const first = await runAgent(agent, { input: 'save', threadId: 't1' }).result
    const { events, result } = await collect(resolveApproval(agent, first.approvals[0]!.id, { approved: true, approver: 'lead', reason: 'looks right' }))
    expect(result).toMatchObject({ status: 'completed', text: 'Saved.', threadId: 't1' })
    expect(types(events)).toEqual(['start', 'approval-decision', 'tool-result', 'text-delta', 'finish'])
    expect(events[1]).toEqual({ type: 'approval-decision', approvalId: first.approvals[0]!.id, toolCallId: 'w1', approved: true, approver: 'lead', reason: 'looks right' })
    expect(executed).toEqual([{ tool: 'write_note', input: { id: 'n1', text: 'second' }, approval: { id: first.approvals[0]!.id, approver: 'lead', reason: 'looks right' } }])
    expect(notes.get('n1')).toBe('second')
    expect(toolResultsSeen(model.prompts[1]!)).toEqual([{ type: 'tool-result', toolCallId: 'w1', toolName: 'write_note', output: { type: 'json', value: { saved: 'n1' } } }])
    const [stored] = await listApprovals(agent)
    expect(stored).toMatchObject({ status: 'approved', decision: { approved: true, approver: 'lead', reason: 'looks right' } })
    expect(Date.parse(stored!.decision!.decidedAt)).not.toBeNaN()
  })

  it('the decision continues the requesting run: same run id, user and metadata reach capabilities and the tool', async () => {
    const seen: Array<{ runId: string; user?: string; metadata: Record<string, unknown> }> = []
    const notes = notesTools()
    const agent = defineAgent({
      name: 'notes',
      driver: { model: scriptedModel([writeStep, { text: 'Saved.' }]) },
      tools: { read_note: notes.tools.read_note },
      workspace: memoryWorkspace(),
      capabilities: [{
        id: 'tenant-notes',
        resolve(context) {
          seen.push({ runId: context.run.runId, ...(context.user ? { user: context.user.id } : {}), metadata: context.metadata })
          context.tools.add('write_note', notes.tools.write_note)
        },
      }],
    })
    const first = await runAgent(agent, { input: 'save', threadId: 't1', user: { id: 'ann' }, metadata: { tenant: 'acme' } }).result
    const resumed = resolveApproval(agent, first.approvals[0]!.id, { approved: true, approver: 'lead' })
    const result = await resumed.result
    expect(result).toMatchObject({ status: 'completed', runId: first.runId, threadId: 't1' })
    expect(resumed.runId).toBe(first.runId)
    expect(seen).toEqual([
      { runId: first.runId, user: 'ann', metadata: { tenant: 'acme' } },
      { runId: first.runId, user: 'ann', metadata: { tenant: 'acme' } },
    ])
    expect(notes.executed).toHaveLength(1)
  })

  it('an approval does not override a policy that denies by the time it is given (new definition after a restart)', async () => {
    const workspace = memoryWorkspace()
    const before = setup([writeStep], { workspace })
    const first = await runAgent(before.agent, { input: 'save', threadId: 't1' }).result
    const denying = notesTools('deny')
    const after = defineAgent({ name: 'notes', driver: { model: scriptedModel([{ text: 'Not allowed.' }]) }, tools: denying.tools, workspace })
    const { events, result } = await collect(resolveApproval(after, first.approvals[0]!.id, { approved: true, approver: 'lead' }))
    expect(result.status).toBe('completed')
    expect(events.find((event) => event.type === 'tool-error')).toMatchObject({ toolName: 'write_note', error: { code: 'TOOL_DENIED_BY_POLICY' } })
    expect(denying.executed).toEqual([])
    expect(denying.notes.get('n1')).toBe('first note')
  })

  it('resolveApproval with a misspelled option fails with APPROVAL_OPTIONS_INVALID and decides nothing', async () => {
    const { agent, executed } = setup([writeStep, { text: 'never' }])
    const first = await runAgent(agent, { input: 'save', threadId: 't1' }).result
    const result = await resolveApproval(agent, first.approvals[0]!.id, { approved: true, aprover: 'lead' } as never).result
    expect(result.status).toBe('failed')
    expect(result.error?.code).toBe('APPROVAL_OPTIONS_INVALID')
    expect(result.error?.message).toContain('aprover')
    expect(executed).toEqual([])
    expect((await listApprovals(agent))[0]?.status).toBe('pending')
  })

  it('a denied call runs nothing and the model receives a denied result with the reason', async () => {
    const { agent, executed, notes, model } = setup([writeStep, { text: 'Not saved.' }])
    const first = await runAgent(agent, { input: 'save', threadId: 't1' }).result
    const result = await resolveApproval(agent, first.approvals[0]!.id, { approved: false, reason: 'wrong note', approver: 'lead' }).result
    expect(result).toMatchObject({ status: 'completed', text: 'Not saved.' })
    expect(executed).toEqual([])
    expect(notes.get('n1')).toBe('first note')
    expect(toolResultsSeen(model.prompts[1]!)).toEqual([{ type: 'tool-result', toolCallId: 'w1', toolName: 'write_note', output: { type: 'execution-denied', reason: 'wrong note' } }])
    expect((await listApprovals(agent))[0]).toMatchObject({ status: 'denied', decision: { approved: false, reason: 'wrong note', approver: 'lead' } })
  })

  it('an approval survives a restart: a new workspace over the same folder and a new definition resolve it', async () => {
    const { dir, cleanup } = await tempDir()
    cleanups.push(cleanup)
    const before = setup([writeStep], { workspace: createWorkspace({ dir }) })
    const first = await runAgent(before.agent, { input: 'save', threadId: 't1' }).result
    expect(first.status).toBe('awaiting-approval')

    const after = setup([{ text: 'Saved after restart.' }], { workspace: createWorkspace({ dir }) })
    const result = await resolveApproval(after.agent, first.approvals[0]!.id, { approved: true, approver: 'lead' }).result
    expect(result).toMatchObject({ status: 'completed', text: 'Saved after restart.', threadId: 't1' })
    expect(before.executed).toEqual([])
    expect(after.executed).toHaveLength(1)
    expect(after.notes.get('n1')).toBe('second')
    // The restarted model saw the whole thread, including the original request.
    expect(after.model.prompts[0]!.map((message) => message.role)).toEqual(['user', 'assistant', 'tool'])
  })

  it('a second resolution says APPROVAL_ALREADY_RESOLVED and the tool ran once', async () => {
    const { agent, executed } = setup([writeStep, { text: 'Saved.' }])
    const first = await runAgent(agent, { input: 'save', threadId: 't1' }).result
    const id = first.approvals[0]!.id
    await resolveApproval(agent, id, { approved: true }).result
    const again = await resolveApproval(agent, id, { approved: false }).result
    expect(again.status).toBe('failed')
    expect(again.error).toMatchObject({ code: 'APPROVAL_ALREADY_RESOLVED', details: { status: 'approved' } })
    expect(executed).toHaveLength(1)
    expect((await listApprovals(agent))[0]!.status).toBe('approved')
  })

  it('two concurrent resolutions of one approval run the tool once', async () => {
    const { agent, executed } = setup([writeStep, { text: 'Saved.' }, { text: 'unused' }])
    const first = await runAgent(agent, { input: 'save', threadId: 't1' }).result
    const id = first.approvals[0]!.id
    const results = await Promise.all([resolveApproval(agent, id, { approved: true }).result, resolveApproval(agent, id, { approved: true }).result])
    expect(results.map((result) => result.status).sort()).toEqual(['completed', 'failed'])
    expect(results.find((result) => result.status === 'failed')?.error?.code).toBe('APPROVAL_ALREADY_RESOLVED')
    expect(executed).toHaveLength(1)
  })

  it('an unknown approval id fails with APPROVAL_NOT_FOUND and runs nothing', async () => {
    const { agent, model } = setup([])
    const { events, result } = await collect(resolveApproval(agent, 'apr_missing', { approved: true }))
    expect(result).toMatchObject({ status: 'failed', error: { code: 'APPROVAL_NOT_FOUND' } })
    expect(types(events)).toEqual(['start', 'error', 'finish'])
    expect(model.prompts).toHaveLength(0)
  })

  it('an approval id with key separators is looked up encoded and not found', async () => {
    const { agent } = setup([])
    const result = await resolveApproval(agent, '../threads:t1', { approved: true }).result
    expect(result.error?.code).toBe('APPROVAL_NOT_FOUND')
  })

  it('an approval resolved from another thread fails with APPROVAL_THREAD_MISMATCH and stays pending', async () => {
    const { agent, executed } = setup([writeStep])
    const first = await runAgent(agent, { input: 'save', threadId: 't1' }).result
    const result = await resolveApproval(agent, first.approvals[0]!.id, { approved: true, threadId: 't2' }).result
    expect(result.error?.code).toBe('APPROVAL_THREAD_MISMATCH')
    expect(executed).toEqual([])
    expect((await listApprovals(agent))[0]!.status).toBe('pending')
  })

  it('an approval resolved for another user answers exactly as an unknown id', async () => {
    const { agent } = setup([writeStep])
    const first = await runAgent(agent, { input: 'save', threadId: 't1', user: { id: 'ann' } }).result
    const id = first.approvals[0]!.id
    const other = await resolveApproval(agent, id, { approved: true, user: { id: 'bob' } }).result
    const unknown = await resolveApproval(agent, 'apr_00000000000000000000', { approved: true, user: { id: 'bob' } }).result
    expect(other.error?.code).toBe('APPROVAL_NOT_FOUND')
    expect(other.error?.why.replace(id, 'ID')).toBe(unknown.error?.why.replace('apr_00000000000000000000', 'ID'))
    expect((await listApprovals(agent))[0]!.status).toBe('pending')
  })

  it('a new user message instead of an answer denies the pending call, tells the model and writes nothing', async () => {
    const { agent, executed, notes, model } = setup([writeStep, { text: 'OK, I will not save.' }])
    const first = await runAgent(agent, { input: 'save', threadId: 't1' }).result
    const id = first.approvals[0]!.id
    const { events, result } = await collect(runAgent(agent, { input: 'never mind', threadId: 't1' }))
    expect(result).toMatchObject({ status: 'completed', text: 'OK, I will not save.' })
    expect(events[1]).toEqual({ type: 'approval-decision', approvalId: id, toolCallId: 'w1', approved: false, reason: 'superseded by a new user message' })
    expect(executed).toEqual([])
    expect(notes.get('n1')).toBe('first note')
    const prompt = model.prompts[1]!
    expect(prompt.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'user'])
    expect(toolResultsSeen(prompt)).toEqual([{ type: 'tool-result', toolCallId: 'w1', toolName: 'write_note', output: { type: 'execution-denied', reason: 'superseded by a new user message' } }])
    expect((await listApprovals(agent))[0]).toMatchObject({ status: 'denied', decision: { reason: 'superseded by a new user message' } })
    const late = await resolveApproval(agent, id, { approved: true }).result
    expect(late.error?.code).toBe('APPROVAL_ALREADY_RESOLVED')
    expect(executed).toEqual([])
  })

  it('in one step a read and a denied gated write: the read result arrives, the denied call gets a result, nothing is written', async () => {
    const { agent, executed, notes, model } = setup([
      { toolCalls: [{ toolName: 'read_note', input: { id: 'n1' }, toolCallId: 'r1' }, { toolName: 'write_note', input: { id: 'n1', text: 'x' }, toolCallId: 'w1' }] },
      { text: 'I read it and did not write.' },
    ])
    const { events, result } = await collect(runAgent(agent, { input: 'read then write', threadId: 't1' }))
    expect(result.status).toBe('awaiting-approval')
    expect(events.find((event) => event.type === 'tool-result')).toMatchObject({ toolCallId: 'r1', output: { id: 'n1', text: 'first note' } })
    const after = await resolveApproval(agent, result.approvals[0]!.id, { approved: false, reason: 'no' }).result
    expect(after).toMatchObject({ status: 'completed', text: 'I read it and did not write.' })
    expect(executed.map((entry) => entry.tool)).toEqual(['read_note'])
    expect(notes.get('n1')).toBe('first note')
    expect(toolResultsSeen(model.prompts[1]!)).toEqual([
      { type: 'tool-result', toolCallId: 'r1', toolName: 'read_note', output: { type: 'json', value: { id: 'n1', text: 'first note' } } },
      { type: 'tool-result', toolCallId: 'w1', toolName: 'write_note', output: { type: 'execution-denied', reason: 'no' } },
    ])
  })

  it('an approval given after the target changed fails with APPROVAL_CONFLICT and runs nothing', async () => {
    const { agent, executed, notes, model } = setup([writeStep, { text: 'It changed.' }])
    const first = await runAgent(agent, { input: 'save', threadId: 't1' }).result
    notes.set('n1', 'edited by someone else')
    const { events, result } = await collect(resolveApproval(agent, first.approvals[0]!.id, { approved: true }))
    expect(result.status).toBe('completed')
    expect(events.find((event) => event.type === 'tool-error')).toMatchObject({ toolCallId: 'w1', error: { code: 'APPROVAL_CONFLICT' } })
    expect(executed).toEqual([])
    expect(notes.get('n1')).toBe('edited by someone else')
    expect(JSON.stringify(toolResultsSeen(model.prompts[1]!))).toContain('APPROVAL_CONFLICT')
  })

  it('with two gated calls in one step the model continues only after both are answered', async () => {
    const { agent, executed, model } = setup([
      { toolCalls: [{ toolName: 'write_note', input: { id: 'a', text: '1' }, toolCallId: 'wa' }, { toolName: 'write_note', input: { id: 'b', text: '2' }, toolCallId: 'wb' }] },
      { text: 'Both answered.' },
    ])
    const first = await runAgent(agent, { input: 'two', threadId: 't1' }).result
    expect(first.approvals).toHaveLength(2)
    const [a, b] = first.approvals as [ApprovalRequest, ApprovalRequest]
    const partial = await resolveApproval(agent, a.id, { approved: true }).result
    expect(partial.status).toBe('awaiting-approval')
    expect(partial.approvals.map((approval) => approval.id)).toEqual([b.id])
    expect(model.prompts).toHaveLength(1)
    const done = await resolveApproval(agent, b.id, { approved: false }).result
    expect(done).toMatchObject({ status: 'completed', text: 'Both answered.' })
    expect(executed.map((entry) => entry.input)).toEqual([{ id: 'a', text: '1' }])
    expect(toolResultsSeen(model.prompts[1]!).map((part) => [part.type === 'tool-result' ? part.toolCallId : '', part.type === 'tool-result' ? part.output.type : ''])).toEqual([['wa', 'json'], ['wb', 'execution-denied']])
  })

  it('listApprovals filters by thread and status', async () => {
    const { agent } = setup([writeStep, writeStep])
    const one = await runAgent(agent, { input: 'a', threadId: 't1' }).result
    const two = await runAgent(agent, { input: 'b', threadId: 't2' }).result
    expect((await listApprovals(agent)).map((approval) => approval.id).sort()).toEqual([one.approvals[0]!.id, two.approvals[0]!.id].sort())
    expect((await listApprovals(agent, { threadId: 't2' })).map((approval) => approval.id)).toEqual([two.approvals[0]!.id])
    expect(await listApprovals(agent, { status: 'approved' })).toEqual([])
  })

  it('without a workspace approvals still work within the process', async () => {
    const notes = notesTools()
    const agent = defineAgent({ driver: { model: scriptedModel([writeStep, { text: 'Saved.' }]) }, tools: notes.tools })
    const first = await runAgent(agent, { input: 'save' }).result
    const result = await resolveApproval(agent, first.approvals[0]!.id, { approved: true }).result
    expect(result.status).toBe('completed')
    expect(notes.executed).toHaveLength(1)
  })

  it('a policy function can require approval for some inputs only', async () => {
    const notes = notesTools(({ input }) => (input as { id: string }).id === 'n1' ? 'require-approval' : 'allow')
    const model = scriptedModel([{ toolCalls: [{ toolName: 'write_note', input: { id: 'n2', text: 'new' } }, { toolName: 'write_note', input: { id: 'n1', text: 'x' } }] }])
    const result = await runAgent(defineAgent({ driver: { model }, tools: notes.tools }), { input: 'x' }).result
    expect(result.status).toBe('awaiting-approval')
    expect(result.approvals.map((approval) => approval.input)).toEqual([{ id: 'n1', text: 'x' }])
    expect(notes.executed.map((entry) => entry.input)).toEqual([{ id: 'n2', text: 'new' }])
  })

  it('an invalid input to a gated tool is reported as TOOL_INPUT_INVALID without asking for approval', async () => {
    const { agent } = setup([{ toolCalls: [{ toolName: 'write_note', input: { id: 'n1', text: '' } }] }, { text: 'fixing' }])
    const { events, result } = await collect(runAgent(agent, { input: 'x' }))
    expect(result.status).toBe('completed')
    expect(types(events)).not.toContain('approval-request')
    expect(events.find((event) => event.type === 'tool-error')).toMatchObject({ error: { code: 'TOOL_INPUT_INVALID' } })
  })
})

describe('approval pipeline details', () => {
  it('the default approval reason is "<tool> requires approval"', async () => {
    const gated: AgentTool = { description: 'x', inputSchema: notesTools().tools.read_note.inputSchema, policy: 'require-approval', execute: () => 'ok' }
    const result = await runAgent(defineAgent({ driver: { model: scriptedModel([{ toolCalls: [{ toolName: 'gated', input: { id: '1' } }] }]) }, tools: { gated } }), { input: 'x' }).result
    expect(result.approvals[0]!.reason).toBe('gated requires approval')
    expect(result.approvals[0]).not.toHaveProperty('fingerprint')
  })
})
