/**
 * Fault-class attacks (see /work/shared/fault-classes.md) on the foundation: the agent host, the
 * memory() capability and the workspace JSONL store, through the public API with real parts.
 */
import { describe, expect, it } from 'vitest'
import { defineAgent, listApprovals, resolveApproval, runAgent } from '../../src/index.ts'
import type { AgentRunEvent, CustomRunContext, ToolCallOutcome } from '../../src/index.ts'
import { memory, workspaceJsonlMemoryStore } from '../../src/capabilities/index.ts'
import type { MemoryRecord } from '../../src/capabilities/index.ts'
import { verifyLog } from '../../src/memory/event-log.ts'
import { scriptedModel } from '../../src/testing/index.ts'
import type { Workspace } from '../../src/workspace/types.ts'
import { alice, bob, finish, fsWorkspace, logLines, modelAgent, ofType, tempDir, toolResultsSeen, userStore } from './helpers.ts'

const KEY = 'memory:memory.jsonl'
const aliceTarget = { store: 'agent', scope: { agent: 'support', user: 'alice' } }
const apiAudit = { audit: { via: 'api' } }

async function adapterOver(workspace: Workspace) {
  return workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace, writable: true })
}

/** A workspace whose appends to the memory log wait for `release()` after calling `onAppend`. */
function gatedWorkspace(inner: Workspace, onAppend: () => void) {
  let release!: () => void
  const gate = new Promise<void>((done) => { release = done })
  const workspace: Workspace = {
    ...inner,
    async append(key, text) {
      if (key === KEY) {
        onAppend()
        await gate
      }
      return inner.append(key, text)
    },
  }
  return { workspace, release }
}

// ---------------------------------------------------------------------------------------------
// All or nothing
// ---------------------------------------------------------------------------------------------

describe('all or nothing', () => {
  it('a run aborted while memory_remember is appending reports the saved record: the line exists exactly when a created tool-result was emitted', async () => {
    const dir = tempDir()
    const controller = new AbortController()
    const { workspace, release } = gatedWorkspace(fsWorkspace(dir), () => {
      controller.abort()
      setTimeout(() => release(), 30)
    })
    const { agent } = modelAgent(workspace, [
      { toolCalls: [{ toolName: 'memory_remember', input: { kind: 'semantic', content: 'Alice likes tea' } }] },
      { text: 'saved' },
    ])
    const { events, result } = await finish(runAgent(agent, { input: 'remember tea', user: alice, signal: controller.signal }))
    // Let any write still in flight land before looking at the file.
    await new Promise((done) => setTimeout(done, 100))
    const lines = logLines(dir)
    const created = ofType(events, 'tool-result').filter((event) => event.toolName === 'memory_remember')
    expect(result.status).toBe('failed')
    expect(result.error?.code).toBe('RUN_ABORTED')
    // Either a complete event and a success result, or nothing and no success.
    expect({ lines: lines.length, created: created.length }).toEqual(lines.length === 0 ? { lines: 0, created: 0 } : { lines: 1, created: 1 })
    if (lines.length === 1) expect((created[0]!.output as any).record.id).toBe(lines[0]!.recordId)
    // The run's outcome is final: nothing is written after the run reported its result.
    expect(events.at(-1)).toMatchObject({ type: 'finish', status: 'failed' })
  })

  it('a run aborted by the write policy just before memory_remember executes: a line exists exactly when a created tool-result was emitted', async () => {
    const dir = tempDir()
    const controller = new AbortController()
    const { agent } = modelAgent(fsWorkspace(dir), [
      { toolCalls: [{ toolName: 'memory_remember', input: { kind: 'semantic', content: 'Alice likes coffee' } }] },
      { text: 'saved' },
    ], { agent: userStore('allow', { write: { mode: 'tool', policy: () => { controller.abort(); return 'allow' } } }) })
    const { events, result } = await finish(runAgent(agent, { input: 'remember coffee', user: alice, signal: controller.signal }))
    await new Promise((done) => setTimeout(done, 50))
    const lines = logLines(dir)
    const created = ofType(events, 'tool-result')
    expect(result.error?.code).toBe('RUN_ABORTED')
    expect({ lines: lines.length, created: created.length }).toEqual(lines.length === 0 ? { lines: 0, created: 0 } : { lines: 1, created: 1 })
  })

  it('a custom-run driver aborted while its memory_remember is appending gets the saved outcome, and the tool-result is emitted', async () => {
    const dir = tempDir()
    const controller = new AbortController()
    const { workspace, release } = gatedWorkspace(fsWorkspace(dir), () => {
      controller.abort()
      setTimeout(() => release(), 20)
    })
    const outcomes: ToolCallOutcome[] = []
    const agent = defineAgent({
      name: 'support', workspace, capabilities: [memory({ stores: { agent: userStore() } })],
      driver: { async run(ctx: CustomRunContext) { outcomes.push(await ctx.tools.memory_remember!.call({ kind: 'semantic', content: 'Alice likes tea' })) } },
    })
    const { events, result } = await finish(runAgent(agent, { input: 'go', user: alice, signal: controller.signal }))
    const lines = logLines(dir)
    expect(result.error?.code).toBe('RUN_ABORTED')
    expect(lines).toHaveLength(1)
    expect(outcomes).toEqual([expect.objectContaining({ status: 'ok', output: expect.objectContaining({ record: expect.objectContaining({ id: lines[0]!.recordId }) }) })])
    expect(ofType(events, 'tool-result').map((event) => (event.output as any).record.id)).toEqual([lines[0]!.recordId])
  })

  it('a remember whose supersedes list holds one deleted id writes nothing and leaves the live id active', async () => {
    const dir = tempDir()
    const workspace = fsWorkspace(dir)
    const adapter = await adapterOver(workspace)
    const live = await adapter.append(aliceTarget, { kind: 'semantic', content: 'lives in Paris' }, apiAudit)
    const gone = await adapter.append(aliceTarget, { kind: 'semantic', content: 'lives in Rome' }, apiAudit)
    await adapter.delete(aliceTarget, gone.id, apiAudit)
    const before = logLines(dir).length
    const { agent } = modelAgent(workspace, [
      { toolCalls: [{ toolName: 'memory_remember', input: { kind: 'semantic', content: 'lives in Oslo', supersedes: [live.id, gone.id] } }] },
      { text: 'done' },
    ])
    const { events } = await finish(runAgent(agent, { input: 'I moved', user: alice }))
    expect(ofType(events, 'tool-error')[0]?.error).toMatchObject({ code: 'MEMORY_SUPERSEDE_NOT_FOUND', details: { ids: [gone.id] } })
    expect(logLines(dir)).toHaveLength(before)
    expect((await adapter.read(aliceTarget, live.id))?.status).toBe('active')
  })
})

// ---------------------------------------------------------------------------------------------
// Lost writes and races on one record
// ---------------------------------------------------------------------------------------------

describe('lost writes and races', () => {
  it('ten parallel remembers that all supersede one record: exactly one succeeds, the others write nothing', async () => {
    const dir = tempDir()
    const workspace = fsWorkspace(dir)
    const adapter = await adapterOver(workspace)
    const old = await adapter.append(aliceTarget, { kind: 'semantic', content: 'favourite colour: red' }, apiAudit)
    const calls = Array.from({ length: 10 }, (_, i) => ({ toolName: 'memory_remember', input: { kind: 'semantic', content: `favourite colour: shade ${i}`, supersedes: [old.id] } }))
    const { agent } = modelAgent(workspace, [{ toolCalls: calls }, { text: 'ok' }])
    const { events } = await finish(runAgent(agent, { input: 'colours', user: alice }))
    const ok = ofType(events, 'tool-result')
    const errors = ofType(events, 'tool-error')
    expect(ok).toHaveLength(1)
    expect(errors.map((event) => event.error.code)).toEqual(Array(9).fill('MEMORY_SUPERSEDE_NOT_FOUND'))
    const winner = (ok[0]!.output as any).record.id
    expect(await adapter.read(aliceTarget, old.id)).toMatchObject({ status: 'superseded', supersededBy: winner })
    // 1 original + 1 remember + 1 supersede line, nothing else.
    expect(logLines(dir).map((line) => line.type)).toEqual(['remember', 'remember', 'supersede'])
    expect(await verifyLog(fsWorkspace(dir), KEY)).toMatchObject({ ok: true, lines: 3 })
  })

  it('ten parallel deletes of one record through the tool: one tombstone, nine not-found errors', async () => {
    const dir = tempDir()
    const workspace = fsWorkspace(dir)
    const adapter = await adapterOver(workspace)
    const record = await adapter.append(aliceTarget, { kind: 'semantic', content: 'to forget' }, apiAudit)
    const calls = Array.from({ length: 10 }, () => ({ toolName: 'memory_delete', input: { id: record.id } }))
    const { agent } = modelAgent(workspace, [{ toolCalls: calls }, { text: 'ok' }])
    const { events } = await finish(runAgent(agent, { input: 'forget', user: alice }))
    expect(ofType(events, 'tool-result')).toHaveLength(1)
    expect(ofType(events, 'tool-error').map((event) => event.error.code)).toEqual(Array(9).fill('MEMORY_RECORD_NOT_FOUND'))
    expect(logLines(dir).map((line) => line.type)).toEqual(['remember', 'delete'])
  })

  it('50 remembers in one model step through the tools give 50 records, seq 1..50 without gaps, and a verifying chain', async () => {
    const dir = tempDir()
    const workspace = fsWorkspace(dir)
    const calls = Array.from({ length: 50 }, (_, i) => ({ toolName: 'memory_remember', input: { kind: 'episodic', content: `event number ${i}` } }))
    const { agent } = modelAgent(workspace, [{ toolCalls: calls }, { text: 'ok' }], { agent: userStore() })
    const { events, result } = await finish(runAgent(agent, { input: 'log all', user: alice }))
    expect(result.status).toBe('completed')
    expect(ofType(events, 'tool-result')).toHaveLength(50)
    const lines = logLines(dir)
    expect(lines.map((line) => line.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1))
    expect(new Set(lines.map((line) => line.content)).size).toBe(50)
    expect(await verifyLog(fsWorkspace(dir), KEY)).toEqual({ ok: true, lines: 50 })
    const adapter = await adapterOver(fsWorkspace(dir))
    expect(await adapter.export(aliceTarget)).toHaveLength(50)
  })
})

// ---------------------------------------------------------------------------------------------
// Approvals
// ---------------------------------------------------------------------------------------------

describe('approvals', () => {
  it('a pending remember survives a restart, and two racing resolutions from two fresh processes-worth of objects write exactly one record', async () => {
    const dir = tempDir()
    const first = modelAgent(fsWorkspace(dir), [{ toolCalls: [{ toolName: 'memory_remember', input: { kind: 'semantic', content: 'Alice is allergic to nuts' } }] }], { agent: userStore('require-approval') })
    const asked = await finish(runAgent(first.agent, { input: 'remember allergy', user: alice }))
    expect(asked.result.status).toBe('awaiting-approval')
    const approvalId = asked.result.approvals[0]!.id
    // "Restart": new workspace objects over the same folder, new definitions.
    const a = modelAgent(fsWorkspace(dir), [{ text: 'saved (a)' }], { agent: userStore('require-approval') })
    const b = modelAgent(fsWorkspace(dir), [{ text: 'saved (b)' }], { agent: userStore('require-approval') })
    const [ra, rb] = await Promise.all([
      finish(resolveApproval(a.agent, approvalId, { approved: true, approver: 'carol', reason: 'ok by me' })),
      finish(resolveApproval(b.agent, approvalId, { approved: true, approver: 'dave', reason: 'fine' })),
    ])
    const statuses = [ra.result.status, rb.result.status].sort()
    expect(statuses).toEqual(['completed', 'failed'])
    const loser = ra.result.status === 'failed' ? ra : rb
    expect(loser.result.error?.code).toBe('APPROVAL_ALREADY_RESOLVED')
    const lines = logLines(dir)
    expect(lines).toHaveLength(1)
    const winnerApprover = ra.result.status === 'completed' ? 'carol' : 'dave'
    expect(lines[0]!.audit).toMatchObject({ via: 'tool', user: 'alice', approver: winnerApprover })
    expect(a.model.prompts.length + b.model.prompts.length).toBe(1)
  })

  it('the approver and the reason of the decision are both recorded with the approved write: the approver in the line\'s audit, the reason in its approvalReason member (erasable)', async () => {
    const dir = tempDir()
    const { agent } = modelAgent(fsWorkspace(dir), [
      { toolCalls: [{ toolName: 'memory_remember', input: { kind: 'profile', content: 'prefers email' } }] },
      { text: 'saved' },
    ], { agent: userStore('require-approval') })
    const asked = await finish(runAgent(agent, { input: 'remember', user: alice }))
    await finish(resolveApproval(agent, asked.result.approvals[0]!.id, { approved: true, approver: 'carol', reason: 'confirmed by phone' }))
    const [line] = logLines(dir)
    expect(line!.audit.approver).toBe('carol')
    expect(line!.approvalReason).toBe('confirmed by phone')
    expect(line!.audit.approvalReason).toBeUndefined()
  })

  it('a new user message instead of an answer denies the pending remember, the model is told, and a late approval of it writes nothing', async () => {
    const dir = tempDir()
    const model = scriptedModel([
      { toolCalls: [{ toolName: 'memory_remember', input: { kind: 'semantic', content: 'likes jazz' } }] },
      { text: 'ok, not saved' },
      { text: 'should never be asked' },
    ])
    const agent = defineAgent({ name: 'support', driver: { model }, workspace: fsWorkspace(dir), capabilities: [memory({ stores: { agent: userStore('require-approval') } })] })
    const asked = await finish(runAgent(agent, { input: 'remember jazz', user: alice }))
    const approvalId = asked.result.approvals[0]!.id
    const next = await finish(runAgent(agent, { input: 'actually, what time is it?', user: alice, threadId: asked.result.threadId }))
    expect(next.result.status).toBe('completed')
    const seen = toolResultsSeen(model, 1)
    expect(seen).toEqual([expect.objectContaining({ toolName: 'memory_remember', output: expect.objectContaining({ type: 'execution-denied', reason: 'superseded by a new user message' }) })])
    const late = await finish(resolveApproval(agent, approvalId, { approved: true, approver: 'carol' }))
    expect(late.result.error?.code).toBe('APPROVAL_ALREADY_RESOLVED')
    expect(logLines(dir)).toEqual([])
    expect(model.prompts).toHaveLength(2)
  })

  it('an approval racing with a new user message on the same thread never runs a call the model was told was not run', async () => {
    const dir = tempDir()
    let originalRun = ''
    let releaseScope!: () => void
    const scopeGate = new Promise<void>((done) => { releaseScope = done })
    let decisionSeen!: () => void
    const decisionStored = new Promise<void>((done) => { decisionSeen = done })
    const store = userStore('require-approval', {
      // The continuation of the approved run resolves its scope slowly (a slow scope lookup).
      scope: async ({ user, run }) => {
        if (originalRun && run.runId === originalRun) {
          decisionSeen()
          await scopeGate
        }
        return user ? { agent: 'support', user: user.id } : undefined
      },
    })
    const model = scriptedModel([
      { toolCalls: [{ toolName: 'memory_remember', input: { kind: 'semantic', content: 'likes opera' } }] },
      { text: 'fine, not saved' },
      { text: 'saved' },
    ])
    const agent = defineAgent({ name: 'support', driver: { model }, workspace: fsWorkspace(dir), capabilities: [memory({ stores: { agent: store } })] })
    const asked = await finish(runAgent(agent, { input: 'remember opera', user: alice }))
    originalRun = asked.result.runId
    const approving = finish(resolveApproval(agent, asked.result.approvals[0]!.id, { approved: true, approver: 'carol' }))
    await decisionStored
    const message = await finish(runAgent(agent, { input: 'never mind, something else', user: alice, threadId: asked.result.threadId }))
    releaseScope()
    const approved = await approving
    const toldNotRun = toolResultsSeen(model, 1).some((result) => result.output?.type === 'execution-denied')
    const written = logLines(dir).length
    expect(message.result.status).toBe('completed')
    // One story only: either the model was told it was not run and nothing is written, or it ran
    // and the model was not told otherwise.
    expect({ toldNotRun, written }).toEqual(toldNotRun ? { toldNotRun: true, written: 0 } : { toldNotRun: false, written: 1 })
    if (toldNotRun) expect(approved.result.status).toBe('failed')
  })

  it('a gated remember of a kind the store does not accept is a tool error at once, not an approval request the user cannot usefully answer', async () => {
    const dir = tempDir()
    const { agent } = modelAgent(fsWorkspace(dir), [
      { toolCalls: [{ toolName: 'memory_remember', input: { kind: 'episodic', content: 'met at the fair' } }] },
      { text: 'cannot save that' },
    ], { agent: userStore('require-approval', { allowKinds: [] }) })
    const { events, result } = await finish(runAgent(agent, { input: 'remember', user: alice }))
    expect(result.status).toBe('completed')
    expect(ofType(events, 'approval-request')).toEqual([])
    expect(ofType(events, 'tool-error')[0]?.error.code).toBe('MEMORY_KIND_NOT_ALLOWED')
    expect(await listApprovals(agent)).toEqual([])
    expect(logLines(dir)).toEqual([])
  })

  it.each([
    ['a delete of an id that is not a record of the scope', { toolName: 'memory_delete', input: { id: 'mem_unknown' } }, 'MEMORY_RECORD_NOT_FOUND'],
    ['a remember superseding an id that is not a record of the scope', { toolName: 'memory_remember', input: { kind: 'semantic', content: 'x', supersedes: ['mem_unknown'] } }, 'MEMORY_SUPERSEDE_NOT_FOUND'],
  ])('a gated %s is a tool error at once, not an approval request', async (_name, call, code) => {
    const dir = tempDir()
    const { agent } = modelAgent(fsWorkspace(dir), [{ toolCalls: [call] }, { text: 'cannot' }], { agent: userStore('require-approval') })
    const { events, result } = await finish(runAgent(agent, { input: 'go', user: alice }))
    expect(result.status).toBe('completed')
    expect(ofType(events, 'approval-request')).toEqual([])
    expect(ofType(events, 'tool-error')[0]?.error.code).toBe(code)
    expect(logLines(dir)).toEqual([])
  })

  it('a gated delete of another user\'s record is answered like an unknown id, before any approval', async () => {
    const dir = tempDir()
    const workspace = fsWorkspace(dir)
    const bobs = await (await adapterOver(workspace)).append({ store: 'agent', scope: { agent: 'support', user: 'bob' } }, { kind: 'semantic', content: 'bob secret' }, apiAudit)
    const { agent } = modelAgent(workspace, [{ toolCalls: [{ toolName: 'memory_delete', input: { id: bobs.id } }] }, { text: 'no' }], { agent: userStore('require-approval') })
    const { events } = await finish(runAgent(agent, { input: 'go', user: alice }))
    expect(ofType(events, 'approval-request')).toEqual([])
    expect(ofType(events, 'tool-error')[0]?.error.code).toBe('MEMORY_RECORD_NOT_FOUND')
    expect(logLines(dir)).toHaveLength(1)
  })

  it('approving a remember whose superseded record was deleted meanwhile fails with APPROVAL_CONFLICT and writes nothing', async () => {
    const dir = tempDir()
    const workspace = fsWorkspace(dir)
    const adapter = await adapterOver(workspace)
    const old = await adapter.append(aliceTarget, { kind: 'semantic', content: 'lives in Paris' }, apiAudit)
    const { agent, model } = modelAgent(workspace, [
      { toolCalls: [{ toolName: 'memory_remember', input: { kind: 'semantic', content: 'lives in Lyon', supersedes: [old.id] } }] },
      { text: 'conflict noted' },
    ], { agent: userStore('require-approval') })
    const asked = await finish(runAgent(agent, { input: 'I moved', user: alice }))
    await adapter.delete(aliceTarget, old.id, apiAudit)
    const lines = logLines(dir).length
    const decided = await finish(resolveApproval(agent, asked.result.approvals[0]!.id, { approved: true, approver: 'carol' }))
    expect(ofType(decided.events, 'tool-error')[0]?.error.code).toBe('APPROVAL_CONFLICT')
    expect(logLines(dir)).toHaveLength(lines)
    expect(toolResultsSeen(model, 1)[0]?.output).toMatchObject({ type: 'error-text' })
  })
})

// ---------------------------------------------------------------------------------------------
// Model mistakes never crash a run
// ---------------------------------------------------------------------------------------------

describe('model mistakes never crash a run', () => {
  const cases: Array<[string, { toolName: string; input: unknown }, string]> = [
    ['malformed JSON input', { toolName: 'memory_remember', input: '{"kind":"semantic","content":' }, 'TOOL_INPUT_INVALID'],
    ['a JSON array instead of an object', { toolName: 'memory_remember', input: '[1,2,3]' }, 'TOOL_INPUT_INVALID'],
    ['JSON null', { toolName: 'memory_search', input: 'null' }, 'TOOL_INPUT_INVALID'],
    ['a tool named like an Object.prototype member (constructor)', { toolName: 'constructor', input: {} }, 'TOOL_NOT_FOUND'],
    ['a tool named __proto__', { toolName: '__proto__', input: {} }, 'TOOL_NOT_FOUND'],
    ['a tool named toString', { toolName: 'toString', input: {} }, 'TOOL_NOT_FOUND'],
    ['an unknown memory tool', { toolName: 'memory_update', input: { id: 'x' } }, 'TOOL_NOT_FOUND'],
    ['pinned as a string', { toolName: 'memory_remember', input: { kind: 'semantic', content: 'x', pinned: 'true' } }, 'TOOL_INPUT_INVALID'],
    ['confidence overflowing to Infinity', { toolName: 'memory_remember', input: '{"kind":"semantic","content":"x","confidence":1e999}' }, 'TOOL_INPUT_INVALID'],
    ['tags as a string', { toolName: 'memory_remember', input: { kind: 'semantic', content: 'x', tags: 'a,b' } }, 'TOOL_INPUT_INVALID'],
    ['an audit block', { toolName: 'memory_remember', input: { kind: 'semantic', content: 'x', audit: { via: 'api', approver: 'admin' } } }, 'TOOL_INPUT_INVALID'],
    ['a scope', { toolName: 'memory_remember', input: { kind: 'semantic', content: 'x', scope: { agent: 'support' } } }, 'TOOL_INPUT_INVALID'],
    ['a record id, version and createdAt', { toolName: 'memory_remember', input: { kind: 'semantic', content: 'x', id: 'mem_1', version: 9, createdAt: '2001-01-01T00:00:00Z' } }, 'TOOL_INPUT_INVALID'],
    ['a 200 KB content', { toolName: 'memory_remember', input: { kind: 'semantic', content: 'z'.repeat(200_000) } }, 'TOOL_INPUT_INVALID'],
    ['metadata nested 4,000 levels deep (within the byte limit)', { toolName: 'memory_remember', input: `{"kind":"semantic","content":"x","metadata":{"deep":${'['.repeat(4000)}${']'.repeat(4000)}}}` }, 'TOOL_INPUT_INVALID'],
    ['a search limit given as a string', { toolName: 'memory_search', input: { query: 'x', limit: '5' } }, 'TOOL_INPUT_INVALID'],
    ['a 5,000-character search query', { toolName: 'memory_search', input: { query: 'q'.repeat(5000) } }, 'TOOL_INPUT_INVALID'],
  ]
  for (const [name, call, code] of cases) {
    it(`${name} gives the model a ${code} tool error, the run completes, and nothing is written`, async () => {
      const dir = tempDir()
      const { agent, model } = modelAgent(fsWorkspace(dir), [{ toolCalls: [call] }, { text: 'recovered' }])
      const { events, result } = await finish(runAgent(agent, { input: 'go', user: alice }))
      expect(result).toMatchObject({ status: 'completed', text: 'recovered' })
      expect(ofType(events, 'tool-error').map((event) => event.error.code)).toEqual([code])
      expect(model.prompts).toHaveLength(2)
      // The model gets an error result for the call (the SDK words some of them itself).
      expect(toolResultsSeen(model, 1)).toEqual([expect.objectContaining({ toolName: call.toolName, output: expect.objectContaining({ type: 'error-text', value: expect.any(String) }) })])
      expect(logLines(dir)).toEqual([])
    })
  }

  it('after a call to a tool named "constructor" the thread stays valid: the next message continues it', async () => {
    const dir = tempDir()
    const { agent, model } = modelAgent(fsWorkspace(dir), [
      { toolCalls: [{ toolName: 'constructor', input: {} }] },
      { text: 'sorry' },
      { text: 'hello again' },
    ])
    const first = await finish(runAgent(agent, { input: 'go', user: alice }))
    const second = await finish(runAgent(agent, { input: 'again', user: alice, threadId: first.result.threadId }))
    expect(second.result).toMatchObject({ status: 'completed', text: 'hello again' })
    expect(toolResultsSeen(model, 2).map((result) => result.toolName)).toEqual(['constructor'])
  })

  it('a model that mixes one bad call with good ones gets every good result and one error', async () => {
    const dir = tempDir()
    const { agent } = modelAgent(fsWorkspace(dir), [
      { toolCalls: [
        { toolName: 'memory_remember', input: { kind: 'semantic', content: 'one' } },
        { toolName: 'memory_remember', input: '{"content": broken' },
        { toolName: 'memory_remember', input: { kind: 'semantic', content: 'two' } },
      ] },
      { text: 'ok' },
    ])
    const { events, result } = await finish(runAgent(agent, { input: 'go', user: alice }))
    expect(result.status).toBe('completed')
    expect(ofType(events, 'tool-result')).toHaveLength(2)
    expect(ofType(events, 'tool-error')).toHaveLength(1)
    expect(logLines(dir).map((line) => line.content).sort()).toEqual(['one', 'two'])
  })

  it('a custom-run driver passing non-object inputs gets error outcomes, never a throw', async () => {
    const dir = tempDir()
    const outcomes: ToolCallOutcome[] = []
    const agent = defineAgent({
      name: 'support', workspace: fsWorkspace(dir), capabilities: [memory({ stores: { agent: userStore() } })],
      driver: {
        async run(ctx: CustomRunContext) {
          for (const input of [null, undefined, 'content', 42, [], { kind: 'semantic' }, { content: 'x', kind: 'semantic', store: { name: 'agent' } }]) {
            outcomes.push(await ctx.tools.memory_remember!.call(input))
          }
        },
      },
    })
    const { result } = await finish(runAgent(agent, { input: 'go', user: alice }))
    expect(result.status).toBe('completed')
    expect(outcomes.map((outcome) => outcome.status === 'error' && outcome.error.code)).toEqual(Array(7).fill('TOOL_INPUT_INVALID'))
    expect(logLines(dir)).toEqual([])
  })
})

// ---------------------------------------------------------------------------------------------
// Scope dropped or defaulted, cross-user effects
// ---------------------------------------------------------------------------------------------

describe('scope dropped or defaulted', () => {
  // Runs without a user, so that `user?.id` is undefined.
  const scopeCases: Array<[string, (ctx: any) => any, string]> = [
    ['returns { user: undefined }', ({ user }) => ({ user: user?.id }), 'MEMORY_SCOPE_REQUIRED'],
    ['returns { agent, user: undefined }', ({ user }) => ({ agent: 'support', user: user?.id }), 'MEMORY_SCOPE_INVALID'],
    ['returns { agent, user: null }', () => ({ agent: 'support', user: null }), 'MEMORY_SCOPE_INVALID'],
    ['returns {}', () => ({}), 'MEMORY_SCOPE_REQUIRED'],
    ['returns a string', () => 'support', 'MEMORY_SCOPE_INVALID'],
    ['returns a scope with a typo field (usr)', ({ user }) => ({ agent: 'support', usr: user?.id ?? 'x' }), 'MEMORY_SCOPE_INVALID'],
    ['throws', () => { throw new Error('directory down') }, 'MEMORY_SCOPE_FUNCTION_FAILED'],
    ['rejects', async () => { throw new Error('directory down') }, 'MEMORY_SCOPE_FUNCTION_FAILED'],
  ]
  for (const [name, scope, code] of scopeCases) {
    it(`a scope function that ${name} fails the run with ${code} before the model runs, and nothing is written`, async () => {
      const dir = tempDir()
      const { agent, model } = modelAgent(fsWorkspace(dir), [
        { toolCalls: [{ toolName: 'memory_remember', input: { kind: 'semantic', content: 'global?' } }] },
        { text: 'done' },
      ], { agent: { adapter: workspaceJsonlMemoryStore(), scope, write: { mode: 'tool' } } })
      const { result } = await finish(runAgent(agent, { input: 'remember' }))
      expect(result.status).toBe('failed')
      expect(result.error?.code).toBe(code)
      expect(model.prompts).toHaveLength(0)
      expect(logLines(dir)).toEqual([])
    })
  }

  it('the memory_search description matches the store\'s search mode: one phrase for substring, words or a question for ranked', async () => {
    const describe = async (extra: Parameters<typeof userStore>[1]) => {
      const { agent, model } = modelAgent(fsWorkspace(tempDir()), [{ text: 'ok' }], { agent: userStore('allow', extra) })
      await finish(runAgent(agent, { input: 'hi', user: alice }))
      return (model.calls[0]!.tools!.find((tool) => tool.name === 'memory_search') as { description?: string }).description
    }
    const substring = await describe({ search: { mode: 'substring' } })
    expect(substring).toContain('as one phrase')
    expect(substring).toContain('not a whole question')
    const ranked = await describe({})
    expect(ranked).toContain('by relevance')
    expect(ranked).toContain('the words or the question')
  })

  it('a scope function that fails on a missing user names the store and says the invocation has no user', async () => {
    const { agent } = modelAgent(fsWorkspace(tempDir()), [{ text: 'never' }], { agent: { adapter: workspaceJsonlMemoryStore(), scope: ({ user }) => ({ agent: 'support', user: user!.id }) } })
    const { result } = await finish(runAgent(agent, { input: 'hi' }))
    expect(result.error?.code).toBe('MEMORY_SCOPE_FUNCTION_FAILED')
    expect(result.error?.message).toContain('memory store "agent" threw')
    expect(result.error?.fix).toContain('this invocation has no `user`')
  })

  it('a run without a user on a per-user store gets no memory tools at all (store off), so a remember cannot fall back to an agent-wide scope', async () => {
    const dir = tempDir()
    const { agent, model } = modelAgent(fsWorkspace(dir), [
      { toolCalls: [{ toolName: 'memory_remember', input: { kind: 'semantic', content: 'anonymous fact' } }] },
      { text: 'done' },
    ])
    const { events, result } = await finish(runAgent(agent, { input: 'remember' }))
    expect(result.status).toBe('completed')
    expect(ofType(events, 'tool-error')[0]?.error.code).toBe('TOOL_NOT_FOUND')
    expect(model.calls[0]!.tools ?? []).toEqual([])
    expect(logLines(dir)).toEqual([])
  })

  it('a store scoped { agent } does not see records of { agent, user } scopes in the same file, nor can it supersede or delete them', async () => {
    const dir = tempDir()
    const workspace = fsWorkspace(dir)
    const adapter = await adapterOver(workspace)
    const alices = await adapter.append(aliceTarget, { kind: 'semantic', content: 'alice secret plan' }, apiAudit)
    const { agent } = modelAgent(workspace, [
      { toolCalls: [
        { toolName: 'memory_search', input: { query: 'secret' } },
        { toolName: 'memory_read', input: { id: alices.id } },
        { toolName: 'memory_delete', input: { id: alices.id } },
        { toolName: 'memory_remember', input: { kind: 'semantic', content: 'agent-wide', supersedes: [alices.id] } },
      ] },
      { text: 'ok' },
    ], { agent: { adapter: workspaceJsonlMemoryStore(), scope: { agent: 'support' }, write: { mode: 'tool' } } })
    const { events } = await finish(runAgent(agent, { input: 'look', user: bob }))
    expect(ofType(events, 'tool-result').map((event) => [event.toolName, event.output])).toEqual([['memory_search', { store: 'agent', results: [] }]])
    // Calls of one step run concurrently: compare the errors regardless of their order.
    expect(ofType(events, 'tool-error').map((event) => [event.toolName, event.error.code]).sort()).toEqual([
      ['memory_delete', 'MEMORY_RECORD_NOT_FOUND'],
      ['memory_read', 'MEMORY_RECORD_NOT_FOUND'],
      ['memory_remember', 'MEMORY_SUPERSEDE_NOT_FOUND'],
    ])
    expect(await adapter.read(aliceTarget, alices.id)).toMatchObject({ status: 'active', version: 1 })
    expect(logLines(dir)).toHaveLength(1)
  })

  it('two stores with the same scope in one file are separate: one store cannot read, delete or supersede the other\'s records', async () => {
    const dir = tempDir()
    const scope = { agent: 'support' }
    const { agent } = modelAgent(fsWorkspace(dir), [
      { toolCalls: [{ toolName: 'memory_remember', input: { store: 'notes', kind: 'semantic', content: 'note one' } }] },
      (prompt) => {
        const id = JSON.stringify(prompt).match(/mem_[0-9a-f]{32}/)![0]
        return { toolCalls: [
          { toolName: 'memory_read', input: { store: 'facts', id } },
          { toolName: 'memory_delete', input: { store: 'facts', id } },
        ] }
      },
      { text: 'ok' },
    ], {
      notes: { adapter: workspaceJsonlMemoryStore(), scope, write: { mode: 'tool' } },
      facts: { adapter: workspaceJsonlMemoryStore(), scope, write: { mode: 'tool' } },
    })
    const { events } = await finish(runAgent(agent, { input: 'go', user: alice }))
    expect(ofType(events, 'tool-error').map((event) => event.error.code)).toEqual(['MEMORY_RECORD_NOT_FOUND', 'MEMORY_RECORD_NOT_FOUND'])
    expect(logLines(dir).map((line) => line.type)).toEqual(['remember'])
  })
})

// ---------------------------------------------------------------------------------------------
// Config typos
// ---------------------------------------------------------------------------------------------

describe('config typos', () => {
  const adapter = workspaceJsonlMemoryStore()
  const typos: Array<[string, unknown]> = [
    ['top level (store instead of stores)', { store: { agent: { adapter, scope: { agent: 'a' } } } }],
    ['top level next to stores', { stores: { agent: { adapter, scope: { agent: 'a' } } }, retention: {} }],
    ['store level (allowKind)', { stores: { agent: { adapter, scope: { agent: 'a' }, allowKind: ['semantic'] } } }],
    ['read level (tool)', { stores: { agent: { adapter, scope: { agent: 'a' }, read: { tool: { search: false } } } } }],
    ['read.tools level (serach)', { stores: { agent: { adapter, scope: { agent: 'a' }, read: { tools: { serach: false } } } } }],
    ['write level (polcy)', { stores: { agent: { adapter, scope: { agent: 'a' }, write: { mode: 'tool', polcy: 'deny' } } } }],
    ['retention level (hardDel)', { stores: { agent: { adapter, scope: { agent: 'a' }, retention: { hardDel: true } } } }],
    ['scope level (usr)', { stores: { agent: { adapter, scope: { agent: 'a', usr: 'u' } } } }],
  ]
  for (const [where, options] of typos) {
    it(`an unknown key at the ${where} is an error at definition time`, () => {
      expect(() => memory(options as any)).toThrow(/MEMORY_(OPTIONS|SCOPE|STORES)_(INVALID|REQUIRED)/)
    })
  }

  it('write.mode "Tool" (wrong case) is an error, not write mode off', () => {
    expect(() => memory({ stores: { agent: { adapter, scope: { agent: 'a' }, write: { mode: 'Tool' as any } } } })).toThrow(/MEMORY_OPTIONS_INVALID.*write\.mode/)
  })

  it('write.policy "require_approval" (underscore) is an error, not allow', () => {
    expect(() => memory({ stores: { agent: { adapter, scope: { agent: 'a' }, write: { mode: 'tool', policy: 'require_approval' as any } } } })).toThrow(/MEMORY_OPTIONS_INVALID.*write\.policy/)
  })

  it('read.tools.search given as the string "false" is an error, not true', () => {
    expect(() => memory({ stores: { agent: { adapter, scope: { agent: 'a' }, read: { tools: { search: 'false' as any } } } } })).toThrow(/MEMORY_OPTIONS_INVALID/)
  })

  it('allowKinds: [] accepts no kind through the tool, custom kinds included', async () => {
    const dir = tempDir()
    const kinds = ['semantic', 'episodic', 'profile', 'procedural', 'custom']
    const { agent } = modelAgent(fsWorkspace(dir), [
      { toolCalls: kinds.map((kind) => ({ toolName: 'memory_remember', input: { kind, content: `a ${kind} fact` } })) },
      { text: 'ok' },
    ], { agent: userStore('allow', { allowKinds: [] }) })
    const { events } = await finish(runAgent(agent, { input: 'go', user: alice }))
    expect(ofType(events, 'tool-error').map((event) => event.error.code)).toEqual(Array(5).fill('MEMORY_KIND_NOT_ALLOWED'))
    expect(logLines(dir)).toEqual([])
  })

  it('workspaceJsonlMemoryStore({ pth }) (typo of path) is an error, not the default path', () => {
    expect(() => workspaceJsonlMemoryStore({ pth: 'memory/x.jsonl' } as any)).toThrow(/MEMORY_STORE_OPTIONS_INVALID.*"pth"/)
  })
})

// ---------------------------------------------------------------------------------------------
// Search edge cases through the tool
// ---------------------------------------------------------------------------------------------

describe('search edge cases through memory_search', () => {
  async function searchAfterSeeding(inputs: unknown[], mode?: 'substring'): Promise<AgentRunEvent[]> {
    const dir = tempDir()
    const workspace = fsWorkspace(dir)
    const adapter = await adapterOver(workspace)
    await adapter.append(aliceTarget, { kind: 'semantic', title: 'Colour', content: 'Her favorite color is blue', tags: ['Prefs'] }, apiAudit)
    await adapter.append(aliceTarget, { kind: 'episodic', content: 'Visited Oslo in May' }, apiAudit)
    const { agent } = modelAgent(workspace, [{ toolCalls: inputs.map((input) => ({ toolName: 'memory_search', input })) }, { text: 'ok' }], { agent: userStore('allow', mode ? { search: { mode } } : {}) })
    return (await finish(runAgent(agent, { input: 'search', user: alice }))).events
  }

  it('empty, blank, limit 0, negative and fractional limits, impossible and zone-less dates are input errors, never everything or nothing', async () => {
    const bad = [
      { query: '' }, { query: '   ' }, { query: 'blue', limit: 0 }, { query: 'blue', limit: -1 }, { query: 'blue', limit: 1.5 },
      { query: 'blue', after: 'yesterday' }, { query: 'blue', after: '2024-02-30T00:00:00Z' }, { query: 'blue', before: '2024-05-01T00:00:00' },
      { query: 'blue', after: '2025-01-02T00:00:00Z', before: '2025-01-01T00:00:00Z' }, { query: 'blue', limit: 101 },
    ]
    const events = await searchAfterSeeding(bad)
    expect(ofType(events, 'tool-result')).toEqual([])
    expect(ofType(events, 'tool-error').map((event) => event.error.code)).toEqual(Array(bad.length).fill('TOOL_INPUT_INVALID'))
  })

  it('the documented rule (search.mode "substring") counts the whole query string: a phrase inside the text matches, the same words in another order or a question do not', async () => {
    const events = await searchAfterSeeding([{ query: 'FAVORITE color' }, { query: 'color favorite' }, { query: 'what is her favorite color?' }, { query: 'prefs' }], 'substring')
    const counts = ofType(events, 'tool-result').map((event) => (event.output as any).results.length)
    expect(counts).toEqual([1, 0, 0, 1])
  })

  it('the default ranked search finds the record for the same words in another order and for a question (fault class 2)', async () => {
    const events = await searchAfterSeeding([{ query: 'FAVORITE color' }, { query: 'color favorite' }, { query: 'what is her favorite color?' }, { query: 'prefs' }])
    const firstIds = ofType(events, 'tool-result').map((event) => (event.output as any).results[0]?.content)
    expect(firstIds).toEqual(Array(4).fill('Her favorite color is blue'))
  })

  it('limit 1 returns one result and limit 100 every match', async () => {
    const events = await searchAfterSeeding([{ query: 'o', limit: 1 }, { query: 'o', limit: 100 }])
    expect(ofType(events, 'tool-result').map((event) => (event.output as any).results.length)).toEqual([1, 2])
  })

  it('after/before with offsets compare instants, not strings', async () => {
    const dir = tempDir()
    const adapter = await adapterOver(fsWorkspace(dir))
    await adapter.append(aliceTarget, { kind: 'semantic', content: 'tz test', createdAt: '2025-01-01T10:00:00Z' }, apiAudit)
    const hits = async (after: string) => (await adapter.search(aliceTarget, { query: 'tz', after })).length
    // 11:00+01:00 is 10:00Z: included; 10:30+01:00 is 09:30Z: included; 12:00+01:00 is 11:00Z: excluded.
    expect([await hits('2025-01-01T11:00:00+01:00'), await hits('2025-01-01T10:30:00+01:00'), await hits('2025-01-01T12:00:00+01:00')]).toEqual([1, 1, 0])
  })
})

// ---------------------------------------------------------------------------------------------
// Corrupt logs, read errors
// ---------------------------------------------------------------------------------------------

describe('corrupt logs through the agent', () => {
  it('a corrupt middle line makes memory tools fail loudly with MEMORY_LOG_CORRUPT, and a remember does not append after it', async () => {
    const dir = tempDir()
    const workspace = fsWorkspace(dir)
    const adapter = await adapterOver(workspace)
    for (const content of ['one', 'two', 'three']) await adapter.append(aliceTarget, { kind: 'semantic', content }, apiAudit)
    const { writeFileSync } = await import('node:fs')
    const { logFile, logText } = await import('./helpers.ts')
    const text = logText(dir).replace('"two"', '"TWO"')
    writeFileSync(logFile(dir), text)
    const { agent } = modelAgent(fsWorkspace(dir), [
      { toolCalls: [{ toolName: 'memory_search', input: { query: 'one' } }, { toolName: 'memory_remember', input: { kind: 'semantic', content: 'four' } }] },
      { text: 'the memory is damaged' },
    ])
    const { events, result } = await finish(runAgent(agent, { input: 'go', user: alice }))
    expect(result.status).toBe('completed')
    expect(ofType(events, 'tool-error').map((event) => [event.error.code, event.error.details?.line])).toEqual([['MEMORY_LOG_CORRUPT', 2], ['MEMORY_LOG_CORRUPT', 2]])
    expect(logText(dir)).toBe(text)
  })

  it('a blank line in the middle of the log is corruption, not skipped', async () => {
    const dir = tempDir()
    const adapter = await adapterOver(fsWorkspace(dir))
    await adapter.append(aliceTarget, { kind: 'semantic', content: 'one' }, apiAudit)
    await adapter.append(aliceTarget, { kind: 'semantic', content: 'two' }, apiAudit)
    const { writeFileSync } = await import('node:fs')
    const { logFile, logText } = await import('./helpers.ts')
    const [first, second] = logText(dir).split('\n')
    writeFileSync(logFile(dir), `${first}\n\n${second}\n`)
    const fresh = await adapterOver(fsWorkspace(dir))
    await expect(fresh.export(aliceTarget)).rejects.toMatchObject({ code: 'MEMORY_LOG_CORRUPT', details: { line: 2 } })
  })

  it('a log whose lines were reordered fails with a broken chain instead of folding them', async () => {
    const dir = tempDir()
    const adapter = await adapterOver(fsWorkspace(dir))
    await adapter.append(aliceTarget, { kind: 'semantic', content: 'one' }, apiAudit)
    await adapter.append(aliceTarget, { kind: 'semantic', content: 'two' }, apiAudit)
    const { writeFileSync } = await import('node:fs')
    const { logFile, logText } = await import('./helpers.ts')
    const [first, second] = logText(dir).split('\n')
    writeFileSync(logFile(dir), `${second}\n${first}\n`)
    expect((await verifyLog(fsWorkspace(dir), KEY)).ok).toBe(false)
    await expect((await adapterOver(fsWorkspace(dir))).search(aliceTarget, { query: 'one' })).rejects.toMatchObject({ code: 'MEMORY_LOG_CORRUPT', details: { line: 1 } })
  })

  it('a log that becomes unreadable after it was loaded fails reads and writes loudly, and after repair the chain continues where it was', async () => {
    const dir = tempDir()
    const adapter = await adapterOver(fsWorkspace(dir))
    for (const content of ['one', 'two', 'three']) await adapter.append(aliceTarget, { kind: 'semantic', content }, apiAudit)
    const { mkdirSync, renameSync } = await import('node:fs')
    const { logFile } = await import('./helpers.ts')
    renameSync(logFile(dir), `${logFile(dir)}.aside`)
    mkdirSync(logFile(dir))
    await expect(adapter.search(aliceTarget, { query: 'one' })).rejects.toMatchObject({ code: 'WORKSPACE_READ_FAILED' })
    await expect(adapter.append(aliceTarget, { kind: 'semantic', content: 'four' }, apiAudit)).rejects.toMatchObject({ code: 'WORKSPACE_READ_FAILED' })
    const { rmSync } = await import('node:fs')
    rmSync(logFile(dir), { recursive: true })
    renameSync(`${logFile(dir)}.aside`, logFile(dir))
    await adapter.append(aliceTarget, { kind: 'semantic', content: 'four' }, apiAudit)
    expect(logLines(dir).map((line) => [line.seq, line.content])).toEqual([[1, 'one'], [2, 'two'], [3, 'three'], [4, 'four']])
    expect(await verifyLog(fsWorkspace(dir), KEY)).toEqual({ ok: true, lines: 4 })
  })

  it('a log truncated by another writer to its first line is replayed: the store forgets nothing it cannot see, and the next append continues the chain', async () => {
    const dir = tempDir()
    const workspace = fsWorkspace(dir)
    const adapter = await adapterOver(workspace)
    await adapter.append(aliceTarget, { kind: 'semantic', content: 'one' }, apiAudit)
    await adapter.append(aliceTarget, { kind: 'semantic', content: 'two' }, apiAudit)
    const { writeFileSync } = await import('node:fs')
    const { logFile, logText } = await import('./helpers.ts')
    writeFileSync(logFile(dir), `${logText(dir).split('\n')[0]}\n`)
    expect((await adapter.export(aliceTarget)).map((record: MemoryRecord) => record.content)).toEqual(['one'])
    await adapter.append(aliceTarget, { kind: 'semantic', content: 'three' }, apiAudit)
    expect(logLines(dir).map((line) => line.seq)).toEqual([1, 2])
    expect(await verifyLog(fsWorkspace(dir), KEY)).toEqual({ ok: true, lines: 2 })
  })
})

// ---------------------------------------------------------------------------------------------
// Open design questions (left as todos on purpose; see the report)
// ---------------------------------------------------------------------------------------------

describe('open design questions', () => {
  // Locks are per process (documented limit of log.ts, "next issue"): two processes appending 100
  // records each to one fs log can interleave a stale `seq`/`prev` and break the chain.
  it.todo('two processes appending 100 records each to one fs log give 200 records and a verifying chain')
  // resolveApproval decides under an in-process lock only: two processes resolving one approval at
  // once can both read it pending and both run the write.
  it.todo('two processes resolving one approval at the same time apply it exactly once')
  // Size limits exist only on tool input (MEMORY_LIMITS); adapter.append (API, CLI import) accepts
  // a 40,000-character content and any metadata size without an error or documented truncation.
  it.todo('adapter.append through the API rejects (or documents truncating) a 40,000-character content')
})
