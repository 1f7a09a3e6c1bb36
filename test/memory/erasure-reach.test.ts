/**
 * The reach of an erasure (docs/security.md, "Whose copies an erasure rewrites"): erasing bob's
 * scope scrubs bob's values and the values linked to his records (a shared agent's thread that
 * read one through memory_read), and leaves the same sentence in demo's own thread, approval and
 * history. Bytes are checked: after the erasure the sentence is in demo's files only. The agents
 * are real (memory() and history() over one fs workspace, scripted AI SDK models).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { resolveApproval } from '../../src/agent/approvals.ts'
import { defineAgent } from '../../src/agent/define.ts'
import { runAgent } from '../../src/agent/run.ts'
import { history, memory, openMemoryStore, workspaceHistoryStore, workspaceJsonlMemoryStore } from '../../src/capabilities/index.ts'
import { historyKey, openHistoryFile, userHistoryScope } from '../../src/history/store.ts'
import { verifyLog } from '../../src/memory/event-log.ts'
import { eraseMemoryScope } from '../../src/memory/retention.ts'
import { scriptedModel } from '../../src/testing/index.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import { filesHolding, rememberTurn as remember } from '../helpers/erased-text.ts'

const SENTENCE = 'my locker code at the gym is 4471'
const folders: string[] = []
afterAll(() => folders.forEach(dir => rmSync(dir, { recursive: true, force: true })))

describe('the reach of an erasure', () => {
  it('erasing bob\'s scope scrubs his values and a shared agent\'s thread that read his record, and keeps demo\'s own identical sentence', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-erase-reach-'))
    folders.push(dir)
    const workspace = createWorkspace({ dir })
    const support = (steps: Parameters<typeof scriptedModel>[0]) => defineAgent({
      name: 'support',
      driver: { model: scriptedModel(steps) },
      workspace,
      capabilities: [
        memory({ stores: { agent: { adapter: workspaceJsonlMemoryStore(), scope: ({ user }) => (user ? { agent: 'support', user: user.id } : undefined), write: { mode: 'tool', policy: 'require-approval' } } } }),
        history({ scope: 'user', store: workspaceHistoryStore() }),
      ],
    })
    const bob = { id: 'bob' }
    const demo = { id: 'demo' }
    // Bob and demo each save the same sentence in their own scope, through an approval.
    for (const [user, threadId] of [[bob, 'tb'], [demo, 'td']] as const) {
      const agent = support([remember(SENTENCE, `c-${user.id}`), { text: `Saved: ${SENTENCE}.` }])
      const asked = await runAgent(agent, { input: `remember: ${SENTENCE}`, threadId, user }).result
      expect((await resolveApproval(agent, asked.approvals[0]!.id, { approved: true, user }).result).status).toBe('completed')
    }
    const bobs = await openMemoryStore(support([]), { user: bob })
    const bobRecord = (await bobs.adapter.export(bobs.target))[0]!
    // A shared reviewing agent, run by an operator, reads bob's record through memory_read.
    const reviewer = defineAgent({
      name: 'reviewer',
      driver: { model: scriptedModel([{ text: 'Reading.', toolCalls: [{ toolName: 'memory_read', input: { id: bobRecord.id }, toolCallId: 'r1' }] }, { text: `Bob noted: ${SENTENCE}.` }]) },
      workspace,
      capabilities: [memory({ stores: { agent: { adapter: workspaceJsonlMemoryStore(), scope: ({ metadata }) => (typeof metadata.subject === 'string' ? { agent: 'support', user: metadata.subject } : undefined), write: { mode: 'off' } } } })],
    })
    expect((await runAgent(reviewer, { input: 'what did bob save?', threadId: 'review', user: { id: 'ops' }, metadata: { subject: 'bob' } }).result).status).toBe('completed')
    const before = filesHolding(dir, SENTENCE)
    expect(before).toEqual(expect.arrayContaining(['agents/support/threads/tb.json', 'agents/support/threads/td.json', 'agents/reviewer/threads/review.json', 'memory/memory.jsonl']))
    expect(before.filter(file => file.startsWith('history/'))).toHaveLength(2)
    expect(before.filter(file => file.startsWith('agents/support/approvals/'))).toHaveLength(2)

    const report = await eraseMemoryScope(bobs.adapter, bobs.target, { audit: { via: 'api', user: 'admin' } })

    expect(report.ids).toEqual([bobRecord.id])
    const after = filesHolding(dir, SENTENCE)
    // Only demo's own files keep the sentence: his thread, his approval, his history, his record in the log and its checkpoint.
    const demoApproval = before.find(file => file.startsWith('agents/support/approvals/') && readFileSync(join(dir, file), 'utf8').includes('"demo"'))!
    const demoHistory = before.find(file => file.startsWith('history/') && file.includes('demo'))!
    expect(after).toEqual([demoApproval, 'agents/support/threads/td.json', demoHistory, 'memory/memory.jsonl', 'memory/memory.jsonl.checkpoint'].sort())
    expect(report.copies.scrubbed.map(copy => copy.key)).toEqual(expect.arrayContaining(['agents:support:threads:tb.json', 'agents:reviewer:threads:review.json']))
    expect(report.copies.kept.sort()).toEqual([demoApproval, 'agents/support/threads/td.json', demoHistory].map(file => file.replaceAll('/', ':')).sort())
    // Demo's record is untouched; bob's is gone; the chain verifies.
    const demos = await openMemoryStore(support([]), { user: demo })
    expect((await demos.adapter.export(demos.target)).map(record => record.content)).toEqual([SENTENCE])
    expect(await bobs.adapter.export(bobs.target)).toEqual([])
    expect((await verifyLog(workspace, 'memory:memory.jsonl')).ok).toBe(true)
  })

  it('erasing a scope without a user scrubs the text from every user\'s values: recall of a shared scope leaves no link', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-erase-reach-'))
    folders.push(dir)
    const workspace = createWorkspace({ dir })
    const agent = (steps: Parameters<typeof scriptedModel>[0]) => defineAgent({
      name: 'support',
      driver: { model: scriptedModel(steps) },
      workspace,
      capabilities: [memory({ stores: { shared: { adapter: workspaceJsonlMemoryStore(), scope: { agent: 'support' }, write: { mode: 'tool', policy: 'allow' } } } })],
    })
    expect((await runAgent(agent([remember(SENTENCE, 'c1'), { text: 'Saved.' }]), { input: 'save the office fact', threadId: 't1', user: { id: 'bob' } }).result).status).toBe('completed')
    expect((await runAgent(agent([{ text: `The office note says ${SENTENCE}.` }]), { input: 'what is the note?', threadId: 't2', user: { id: 'demo' } }).result).status).toBe('completed')
    expect(filesHolding(dir, SENTENCE)).toEqual(['agents/support/threads/t1.json', 'agents/support/threads/t2.json', 'memory/memory.jsonl'])
    const shared = await openMemoryStore(agent([]), { store: 'shared' })
    const report = await eraseMemoryScope(shared.adapter, shared.target, { audit: { via: 'api' } })
    expect(report.erased).toBe(1)
    expect(filesHolding(dir, SENTENCE)).toEqual([])
    expect(report.copies.kept).toEqual([])
  })

  it('erasing alice\'s scope in one tenant scrubs her history there and the history written before the tenant was in its key, with no link to her records, and keeps alice\'s of another tenant', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-erase-tenant-'))
    folders.push(dir)
    const workspace = createWorkspace({ dir })
    const support = (steps: Parameters<typeof scriptedModel>[0]) => defineAgent({
      name: 'support',
      driver: { model: scriptedModel(steps) },
      workspace,
      capabilities: [
        memory({ stores: { agent: { adapter: workspaceJsonlMemoryStore(), scope: ({ user }) => (user ? { agent: 'support', project: 'notes', ...(user.tenant ? { tenant: user.tenant } : {}), user: user.id } : undefined), write: { mode: 'tool' } } } }),
      ],
    })
    const north = { id: 'alice', tenant: 'north' }
    const south = { id: 'alice', tenant: 'south' }
    for (const [user, threadId] of [[north, 'tn'], [south, 'ts']] as const) {
      const agent = support([remember(SENTENCE, `c-${user.tenant}`), { text: `Saved: ${SENTENCE}.` }])
      expect((await runAgent(agent, { input: `remember: ${SENTENCE}`, threadId, user }).result).status).toBe('completed')
    }
    // Each alice's history({ scope: 'user' }) holds the sentence with no link to a record, and so
    // does the history kept under the key without the tenant (as history() wrote it before).
    const backend = await workspaceHistoryStore().open({ agent: 'support', workspace })
    for (const scope of [userHistoryScope('support', north), userHistoryScope('support', south), { agent: 'support', user: 'alice' }]) {
      await (await openHistoryFile(backend, scope)).add([{ role: 'user', content: `my code: ${SENTENCE}` }])
    }
    const histories = () => filesHolding(dir, SENTENCE).filter(file => file.startsWith('history/'))
    expect(histories()).toHaveLength(3)
    const norths = await openMemoryStore(support([]), { user: north })

    await eraseMemoryScope(norths.adapter, norths.target, { audit: { via: 'api', user: 'admin' } })

    expect(histories()).toEqual([`history/${(await historyKey({ agent: 'support', tenant: 'south', user: 'alice' })).slice('history:'.length)}`])
    const souths = await openMemoryStore(support([]), { user: south })
    expect((await souths.adapter.export(souths.target)).map(record => record.content)).toEqual([SENTENCE])
  })
})
