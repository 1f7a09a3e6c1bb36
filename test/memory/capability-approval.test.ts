/**
 * memory() write approvals end to end: real host (runAgent, resolveApproval), a scripted AI SDK
 * model or a custom-run driver, and the workspace JSONL store on the unstorage fs driver.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createWorkspace, defineAgent, resolveApproval, runAgent } from '../../src/index.ts'
import type { AgentDefinition, AgentRun, AgentRunEvent, AgentRunResult, CustomRunContext, ToolCallOutcome } from '../../src/index.ts'
import { memory, workspaceJsonlMemoryStore } from '../../src/capabilities/index.ts'
import type { MemoryOptions } from '../../src/capabilities/index.ts'
import { scriptedModel } from '../../src/testing/index.ts'
import type { Workspace } from '../../src/workspace/types.ts'

function fsWorkspace(dir = mkdtempSync(join(tmpdir(), 'vam-approval-'))): Workspace & { dir: string } {
  return createWorkspace({ dir }) as Workspace & { dir: string }
}

function logText(workspace: { dir: string }, path = 'memory/memory.jsonl'): string {
  const file = join(workspace.dir, path)
  return existsSync(file) ? readFileSync(file, 'utf8') : ''
}

function lines(workspace: { dir: string }): Array<Record<string, any>> {
  return logText(workspace).split('\n').filter(Boolean).map((line) => JSON.parse(line))
}

async function finish(run: AgentRun): Promise<{ events: AgentRunEvent[]; result: AgentRunResult }> {
  const events: AgentRunEvent[] = []
  for await (const event of run) events.push(event)
  return { events, result: await run.result }
}

const gated = (policy: 'require-approval' | 'allow' = 'require-approval'): MemoryOptions['stores'][string] => ({
  adapter: workspaceJsonlMemoryStore(), scope: ({ user }) => (user ? { agent: 'support', user: user.id } : undefined), write: { mode: 'tool', policy },
})

function modelAgent(workspace: Workspace, steps: Parameters<typeof scriptedModel>[0], stores: MemoryOptions['stores'] = { agent: gated() }): AgentDefinition {
  return defineAgent({ name: 'support', driver: { model: scriptedModel(steps) }, workspace, capabilities: [memory({ stores })] })
}

function customAgent(workspace: Workspace, calls: Array<[string, Record<string, unknown>]>, outcomes: ToolCallOutcome[] = [], stores: MemoryOptions['stores'] = { agent: gated() }): AgentDefinition {
  return defineAgent({
    name: 'support', workspace, capabilities: [memory({ stores })],
    driver: {
      async run(ctx: CustomRunContext) {
        if (ctx.input === undefined) { if (ctx.resumed) outcomes.push(ctx.resumed.outcome); return }
        for (const [name, input] of calls) outcomes.push(await ctx.tools[name]!.call(input))
      },
    },
  })
}

describe('memory write approval with the JSONL store', () => {
  it('require-approval -> awaiting-approval -> approve: the JSONL line has scope, provenance and the approver in its audit', async () => {
    const workspace = fsWorkspace()
    const agent = modelAgent(workspace, [
      { toolCalls: [{ toolName: 'memory_remember', input: { kind: 'profile', content: 'Alice prefers phone calls', tags: ['contact'] } }] },
      { text: 'Saved.' },
    ])
    const first = await finish(runAgent(agent, { input: 'remember I prefer calls', user: { id: 'alice' } }))
    expect(first.result.status).toBe('awaiting-approval')
    const approval = first.result.approvals[0]!
    expect(approval).toMatchObject({ toolName: 'memory_remember', reason: 'Remember in store "agent" (kind profile): "Alice prefers phone calls"' })
    expect(logText(workspace)).toBe('')

    const second = await finish(resolveApproval(agent, approval.id, { approved: true, approver: 'supervisor', reason: 'looks right' }))
    expect(second.result.status).toBe('completed')
    const result = second.events.find((e) => e.type === 'tool-result')
    expect(result).toMatchObject({ toolName: 'memory_remember', output: { action: 'created', store: 'agent', record: { kind: 'profile' } } })
    const [line, ...rest] = lines(workspace)
    expect(rest).toEqual([])
    expect(line).toMatchObject({
      type: 'remember', store: 'agent', scope: { agent: 'support', user: 'alice' }, content: 'Alice prefers phone calls', tags: ['contact'],
      provenance: { runId: second.result.runId, threadId: first.result.threadId, source: 'tool', toolName: 'memory_remember' },
      audit: { via: 'tool', agent: 'support', user: 'alice', approver: 'supervisor', threadId: first.result.threadId },
    })
  })

  it('require-approval -> deny: the file is unchanged and the model is told', async () => {
    const workspace = fsWorkspace()
    const seed = customAgent(workspace, [['memory_remember', { kind: 'semantic', content: 'existing' }]], [], { agent: gated('allow') })
    await finish(runAgent(seed, { input: 'go', user: { id: 'alice' } }))
    const before = logText(workspace)
    expect(before).not.toBe('')
    const agent = modelAgent(workspace, [
      { toolCalls: [{ toolName: 'memory_remember', input: { kind: 'semantic', content: 'unwanted' } }] },
      { text: 'Understood, not saved.' },
    ])
    const first = await finish(runAgent(agent, { input: 'remember this', user: { id: 'alice' } }))
    const second = await finish(resolveApproval(agent, first.result.approvals[0]!.id, { approved: false, approver: 'alice', reason: 'no' }))
    expect(second.result.status).toBe('completed')
    expect(second.events.some((e) => e.type === 'tool-result' && e.toolName === 'memory_remember')).toBe(false)
    expect(logText(workspace)).toBe(before)
  })

  it('approving a delete after its target changed fails with APPROVAL_CONFLICT and writes nothing', async () => {
    const workspace = fsWorkspace()
    const writer = (calls: Array<[string, Record<string, unknown>]>, outcomes: ToolCallOutcome[] = []) => customAgent(workspace, calls, outcomes, { agent: gated('allow') })
    const created: ToolCallOutcome[] = []
    await finish(runAgent(writer([['memory_remember', { kind: 'semantic', content: 'v1' }]], created), { input: 'go', user: { id: 'alice' } }))
    const id = created[0]?.status === 'ok' ? (created[0].output as { record: { id: string } }).record.id : ''

    const outcomes: ToolCallOutcome[] = []
    const deleter = customAgent(workspace, [['memory_delete', { id, reason: 'old' }]], outcomes)
    const requested = await finish(runAgent(deleter, { input: 'forget it', user: { id: 'alice' } }))
    expect(requested.result.status).toBe('awaiting-approval')
    expect(requested.result.approvals[0]!.reason).toBe(`Delete record "${id}" from store "agent" (semantic): "v1". Reason: old`)

    // Meanwhile the record is superseded: the approval must not act on the new state.
    await finish(runAgent(writer([['memory_remember', { kind: 'semantic', content: 'v2', supersedes: [id] }]]), { input: 'go', user: { id: 'alice' } }))
    const before = logText(workspace)
    await finish(resolveApproval(deleter, requested.result.approvals[0]!.id, { approved: true, approver: 'alice' }))
    expect(outcomes.at(-1)).toMatchObject({ status: 'error', error: { code: 'APPROVAL_CONFLICT' } })
    expect(logText(workspace)).toBe(before)
  })

  it('an approved delete with an unchanged target appends one tombstone recording the approver', async () => {
    const workspace = fsWorkspace()
    const created: ToolCallOutcome[] = []
    await finish(runAgent(customAgent(workspace, [['memory_remember', { kind: 'semantic', content: 'v1' }]], created, { agent: gated('allow') }), { input: 'go', user: { id: 'alice' } }))
    const id = created[0]?.status === 'ok' ? (created[0].output as { record: { id: string } }).record.id : ''
    const outcomes: ToolCallOutcome[] = []
    const deleter = customAgent(workspace, [['memory_delete', { id }]], outcomes)
    const requested = await finish(runAgent(deleter, { input: 'forget', user: { id: 'alice' } }))
    await finish(resolveApproval(deleter, requested.result.approvals[0]!.id, { approved: true, approver: 'bob-the-admin' }))
    expect(outcomes.at(-1)).toMatchObject({ status: 'ok', output: { action: 'deleted', id } })
    expect(lines(workspace).map((l) => [l.type, l.audit.approver])).toEqual([['remember', undefined], ['delete', 'bob-the-admin']])
  })

  it('one store requires approval while another allows: only the gated write waits', async () => {
    const workspace = fsWorkspace()
    const outcomes: ToolCallOutcome[] = []
    const stores = { agent: gated('require-approval'), scratch: { ...gated('allow'), adapter: workspaceJsonlMemoryStore({ path: 'memory/scratch.jsonl' }) } }
    const agent = customAgent(workspace, [
      ['memory_remember', { kind: 'semantic', content: 'gated' }],
      ['memory_remember', { store: 'scratch', kind: 'semantic', content: 'free' }],
    ], outcomes, stores)
    const { result } = await finish(runAgent(agent, { input: 'go', user: { id: 'alice' } }))
    expect(outcomes.map((o) => o.status)).toEqual(['approval-required', 'ok'])
    expect(result.status).toBe('awaiting-approval')
    expect(logText(workspace)).toBe('')
    expect(logText(workspace, 'memory/scratch.jsonl')).toContain('"free"')
  })

  it('a read and a gated write in one model step: the write is denied, the read result arrives, nothing is written', async () => {
    const workspace = fsWorkspace()
    const agent = modelAgent(workspace, [
      { toolCalls: [{ toolName: 'memory_search', input: { query: 'plan' } }, { toolName: 'memory_remember', input: { kind: 'semantic', content: 'plan is Pro' } }] },
      { text: 'OK, not saved.' },
    ])
    const first = await finish(runAgent(agent, { input: 'what plan? also remember Pro', user: { id: 'alice' } }))
    expect(first.events.find((e) => e.type === 'tool-result')).toMatchObject({ toolName: 'memory_search', output: { store: 'agent', results: [] } })
    expect(first.result.status).toBe('awaiting-approval')
    const second = await finish(resolveApproval(agent, first.result.approvals[0]!.id, { approved: false }))
    expect(second.result.status).toBe('completed')
    expect(logText(workspace)).toBe('')
  })

  it('a model mistake on a gated store (unknown store) is a tool error, not an approval request', async () => {
    const workspace = fsWorkspace()
    const agent = modelAgent(workspace, [
      { toolCalls: [{ toolName: 'memory_remember', input: { store: 'global', kind: 'semantic', content: 'x' } }] },
      { text: 'That store does not exist.' },
    ])
    const { events, result } = await finish(runAgent(agent, { input: 'save globally', user: { id: 'alice' } }))
    expect(result.status).toBe('completed')
    expect(events.find((e) => e.type === 'tool-error')).toMatchObject({ toolName: 'memory_remember', error: { code: 'MEMORY_STORE_UNKNOWN' } })
    expect(events.some((e) => e.type === 'approval-request')).toBe(false)
  })

  it('a gated remember into a scope whose log has a line edited by hand is a tool error (MEMORY_LOG_CORRUPT), not an approval request, and the file is unchanged', async () => {
    const workspace = fsWorkspace()
    for (const content of ['Alice prefers phone calls', 'Alice lives in Lyon']) {
      await finish(runAgent(customAgent(workspace, [['memory_remember', { kind: 'profile', content }]], [], { agent: gated('allow') }), { input: 'save', user: { id: 'alice' } }))
    }
    const file = join(workspace.dir, 'memory/memory.jsonl')
    writeFileSync(file, readFileSync(file, 'utf8').replace('phone calls', 'text messages'))
    const before = readFileSync(file, 'utf8')
    const agent = modelAgent(workspace, [
      { toolCalls: [{ toolName: 'memory_remember', input: { kind: 'profile', content: 'Alice has a dog' } }] },
      { text: 'The memory log is damaged.' },
    ])
    const { events, result } = await finish(runAgent(agent, { input: 'remember my dog', user: { id: 'alice' } }))
    expect(result.status).toBe('completed')
    expect(events.some((e) => e.type === 'approval-request')).toBe(false)
    expect(events.find((e) => e.type === 'tool-error')).toMatchObject({ toolName: 'memory_remember', error: { code: 'MEMORY_LOG_CORRUPT' } })
    expect(readFileSync(file, 'utf8')).toBe(before)
  })

  it('50 parallel remembers into one scope give 50 records and 50 lines', async () => {
    const workspace = fsWorkspace()
    const agent = defineAgent({
      name: 'support', workspace, capabilities: [memory({ stores: { agent: gated('allow') } })],
      driver: {
        async run(ctx: CustomRunContext) {
          const outcomes = await Promise.all(Array.from({ length: 50 }, (_, i) => ctx.tools.memory_remember!.call({ kind: 'semantic', content: `fact ${i}` })))
          ctx.write(outcomes.filter((o) => o.status === 'ok').length.toString())
        },
      },
    })
    const { result } = await finish(runAgent(agent, { input: 'go', user: { id: 'alice' } }))
    expect(result.text).toBe('50')
    expect(new Set(lines(workspace).map((l) => l.content)).size).toBe(50)
    expect(lines(workspace).map((l) => l.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1))
  })
})
