/**
 * Erasure erases every copy (docs/security.md): after eraseMemoryScope or hardDeleteMemoryRecord,
 * a byte scan of every file of the workspace finds the erased text nowhere (log, checkpoint,
 * approval inputs, transcripts, history entries and summaries, torn leftovers), while other
 * users' records stay and the log still verifies. The agent is real (memory() and history() over
 * an fs workspace, a scripted AI SDK model); the torn leftover comes from a real torn append.
 */
import { appendFileSync, copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { listApprovals, resolveApproval } from '../../src/agent/approvals.ts'
import { defineAgent } from '../../src/agent/define.ts'
import { runAgent } from '../../src/agent/run.ts'
import { history, memory, openHistory, openMemoryStore, workspaceHistoryStore, workspaceJsonlMemoryStore } from '../../src/capabilities/index.ts'
import { sha256HexSync, serializeEvent } from '../../src/log/index.ts'
import { memoryFold, verifyLog } from '../../src/memory/event-log.ts'
import { eraseMemoryScope, hardDeleteMemoryRecord } from '../../src/memory/retention.ts'
import type { MemoryLogStoreAdapter } from '../../src/memory/stores/workspace-jsonl.ts'
import { scriptedModel } from '../../src/testing/index.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import { filesHolding, rememberTurn as remember } from '../helpers/erased-text.ts'

const SECRET = 'the vault combination is quixotically 314159'
const KEPT = 'ben keeps bees in the garden'
const folders: string[] = []
afterAll(() => folders.forEach(dir => rmSync(dir, { recursive: true, force: true })))

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'vam-erase-'))
  folders.push(dir)
  const model = scriptedModel([remember(SECRET, 'c1'), { text: `Saved: ${SECRET}.` }, remember(`${SECRET}, again`, 'c2')])
  const summarizer = scriptedModel(Array.from({ length: 6 }, () => ({ text: `The user shared that ${SECRET}.` })))
  const agent = defineAgent({
    name: 'support',
    driver: { model },
    workspace: createWorkspace({ dir }),
    capabilities: [
      memory({ stores: { agent: { adapter: workspaceJsonlMemoryStore(), scope: ({ user }) => (user ? { agent: 'support', user: user.id } : undefined), write: { mode: 'tool', policy: 'require-approval' } } } }),
      history({ scope: 'user', store: workspaceHistoryStore(), maxMessages: 4, pinCount: 0, recentCount: 1, summarizer: { model: summarizer } }),
    ],
  })
  const ann = { id: 'ann' }
  // Thread t1: remember the secret (approved: it is in the log, the approval, the transcript, history).
  const asked = await runAgent(agent, { input: `please remember: ${SECRET}`, threadId: 't1', user: ann }).result
  expect((await resolveApproval(agent, asked.approvals[0]!.id, { approved: true, user: ann }).result).status).toBe('completed')
  // Thread t2: the same text again, left pending.
  const pending = await runAgent(agent, { input: 'remember it once more', threadId: 't2', user: ann }).result
  expect(pending.status).toBe('awaiting-approval')
  // A history summary that quotes it.
  const conversation = await openHistory(agent, { user: ann })
  await conversation.add({ role: 'user', content: 'one' }, { role: 'assistant', content: 'two' }, { role: 'user', content: 'three' })
  await conversation.summarize()
  expect((await conversation.list()).some(entry => entry.role === 'summary' && entry.content.includes(SECRET))).toBe(true)
  // Ben's record in the same log survives.
  const bens = await openMemoryStore(agent, { user: { id: 'ben' } })
  await bens.adapter.append(bens.target, { content: KEPT, kind: 'semantic' }, { audit: { via: 'api' } })
  // A torn append (a crash mid-line) holding the secret, moved aside by the next write as `.torn-*`.
  appendFileSync(join(dir, 'memory/memory.jsonl'), `{"v":2,"type":"remember","content":"${SECRET} torn`)
  await bens.adapter.append(bens.target, { content: 'ben also likes honey cake', kind: 'semantic' }, { audit: { via: 'api' } })
  const anns = await openMemoryStore(agent, { user: ann })
  await (anns.adapter as MemoryLogStoreAdapter).log.checkpoint()
  return { dir, agent, ann, anns, bens, pendingId: pending.approvals[0]!.id, conversation }
}


/** A scripted agent per call whose one tool-write store `agent` (per-user scope) erases on delete (`retention.hardDelete`), writing with `policy`, in the workspace folder `dir`. */
function hardDeleteAgent(dir: string, policy: 'allow' | 'require-approval') {
  const store = { adapter: workspaceJsonlMemoryStore(), scope: ({ user }: { user?: { id: string } }) => (user ? { agent: 'support', user: user.id } : undefined), write: { mode: 'tool' as const, policy }, retention: { hardDelete: true } }
  return (steps: Parameters<typeof scriptedModel>[0]) => defineAgent({ name: 'support', driver: { model: scriptedModel(steps) }, workspace: createWorkspace({ dir }), capabilities: [memory({ stores: { agent: store } })] })
}

describe('erasure erases every copy', () => {
  it('eraseMemoryScope leaves no byte of the erased text anywhere in the workspace, reports every copy, and keeps other users\' records', async () => {
    const { dir, agent, ann, anns, bens, pendingId, conversation } = await setup()
    const before = filesHolding(dir, SECRET)
    expect(before.some(file => file.startsWith('agents/support/approvals/'))).toBe(true)
    expect(before).toContain('agents/support/threads/t1.json')
    expect(before.some(file => file.startsWith('history/'))).toBe(true)
    expect(before.some(file => file.includes('.torn-'))).toBe(true)
    expect(before).toContain('memory/memory.jsonl')

    const report = await eraseMemoryScope(anns.adapter, anns.target, { audit: { via: 'api', user: 'ann' } })
    expect(report.erased).toBe(1)
    expect(filesHolding(dir, SECRET)).toEqual([])
    expect(filesHolding(dir, 'quixotically')).toEqual([])
    expect(report.copies.scrubbed.map(copy => copy.key)).toEqual(expect.arrayContaining(['agents:support:threads:t1.json', 'agents:support:threads:t2.json']))
    expect(report.copies.scrubbed.filter(copy => copy.key.startsWith('agents:support:approvals:'))).toHaveLength(2)
    expect(report.copies.scrubbed.some(copy => copy.key.startsWith('history:'))).toBe(true)
    expect(report.copies.removed.some(key => key.startsWith('memory:memory.jsonl.torn-'))).toBe(true)
    expect(report.copies.denied).toEqual([pendingId])
    expect(report.copies.remaining).toEqual([])

    // The pending approval of the erased text can no longer write it.
    expect((await resolveApproval(agent, pendingId, { approved: true, user: ann }).result).error?.code).toBe('APPROVAL_ALREADY_RESOLVED')
    expect((await listApprovals(agent, { user: ann })).map(approval => approval.status)).toEqual(['approved', 'denied'])
    // Other users' records, the log chain and the threads still work.
    expect((await bens.adapter.export(bens.target)).map(record => record.content)).toEqual([KEPT, 'ben also likes honey cake'])
    expect((await verifyLog(agent.workspace!, 'memory:memory.jsonl')).ok).toBe(true)
    expect(filesHolding(dir, KEPT)).toContain('memory/memory.jsonl')
    // History reads the rewritten value: the summary says "[erased]" now.
    expect((await conversation.list()).find(entry => entry.role === 'summary')?.content).toBe('The user shared that [erased].')
  })

  it('hardDeleteMemoryRecord erases one record\'s text from every copy and leaves the other records of the scope', async () => {
    const { dir, anns } = await setup()
    const other = await anns.adapter.append(anns.target, { content: 'ann collects vintage stamps', kind: 'semantic' }, { audit: { via: 'api' } })
    const secret = (await anns.adapter.export(anns.target)).find(record => record.content === SECRET)!
    const report = await hardDeleteMemoryRecord(anns.adapter, anns.target, secret.id, { audit: { via: 'api' } })
    expect(report).toMatchObject({ erased: 1, ids: [secret.id] })
    expect(filesHolding(dir, SECRET)).toEqual([])
    expect((await anns.adapter.read(anns.target, other.id))?.content).toBe('ann collects vintage stamps')
    expect(await hardDeleteMemoryRecord(anns.adapter, anns.target, secret.id, { audit: { via: 'api' } })).toMatchObject({ erased: 0, ids: [] })
  })

  it('a checkpoint a crash left unrenamed (.tmp beside the log), whose sections hold the text compressed, is removed by the erasure', async () => {
    const { dir, anns } = await setup()
    // The crash: the checkpoint's sibling file written whole, the process killed before its rename.
    const leftover = join(dir, `memory/memory.jsonl.checkpoint.${process.pid}.${Date.now()}.tmp`)
    copyFileSync(join(dir, 'memory/memory.jsonl.checkpoint'), leftover)
    expect(readFileSync(leftover, 'utf8')).not.toContain(SECRET)
    expect(filesHolding(dir, SECRET)).toContain(leftover.slice(dir.length + 1))
    const report = await eraseMemoryScope(anns.adapter, anns.target, { audit: { via: 'api', user: 'ann' } })
    expect(filesHolding(dir, SECRET)).toEqual([])
    expect(report.copies.removed).toContain(`memory:${basename(leftover)}`)
  })

  it('an approval decided with a reason that quotes the text: the erasure removes the reason from the log line, scrubs it from the approval file and its decision claim, and the log still verifies', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-erase-'))
    folders.push(dir)
    const agent = defineAgent({
      name: 'support',
      driver: { model: scriptedModel([remember(SECRET, 'c1'), { text: 'Saved.' }]) },
      workspace: createWorkspace({ dir }),
      capabilities: [memory({ stores: { agent: { adapter: workspaceJsonlMemoryStore(), scope: ({ user }) => (user ? { agent: 'support', user: user.id } : undefined), write: { mode: 'tool', policy: 'require-approval' } } } })],
    })
    const ann = { id: 'ann' }
    const asked = await runAgent(agent, { input: 'remember it', threadId: 't1', user: ann }).result
    const id = asked.approvals[0]!.id
    expect((await resolveApproval(agent, id, { approved: true, reason: `fine, keep "${SECRET}"`, user: ann }).result).status).toBe('completed')
    const claim = `agents/support/approvals/${id}.decision`
    expect(filesHolding(dir, SECRET)).toContain(claim)
    const anns = await openMemoryStore(agent, { user: ann })
    const report = await eraseMemoryScope(anns.adapter, anns.target, { audit: { via: 'api', user: 'ann' } })
    expect(filesHolding(dir, SECRET)).toEqual([])
    // The whole reason leaves the log line, not only the quoted part: it is free text about the record.
    expect(filesHolding(dir, 'fine, keep').filter(file => file.startsWith('memory/'))).toEqual([])
    expect(report.copies.scrubbed.map(copy => copy.key)).toContain(claim.replaceAll('/', ':'))
    const [approval] = await listApprovals(agent, { user: ann })
    expect(approval).toMatchObject({ id, status: 'approved', decision: { approved: true, reason: 'fine, keep "[erased]"' } })
    const [line] = readFileSync(join(dir, 'memory/memory.jsonl'), 'utf8').split('\n').map(text => JSON.parse(text || 'null'))
    expect(line).toMatchObject({ type: 'remember', erased: true, audit: { via: 'tool', user: 'ann' } })
    expect(line.audit.approvalReason).toBeUndefined()
    expect(await verifyLog(createWorkspace({ dir }), 'memory:memory.jsonl')).toMatchObject({ ok: true, lines: 2 })
  })

  it('memory_delete through approvals on a hardDelete store: the write\'s approval reason, the delete\'s approval reason and the delete reason, each quoting the text, are in no file and the log verifies', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-erase-'))
    folders.push(dir)
    const build = hardDeleteAgent(dir, 'require-approval')
    const ann = { id: 'ann' }
    const writer = build([remember(SECRET, 'c1'), { text: 'Saved.' }])
    const asked = await runAgent(writer, { input: 'remember it', threadId: 't1', user: ann }).result
    expect((await resolveApproval(writer, asked.approvals[0]!.id, { approved: true, reason: `yes, remember that ${SECRET}`, user: ann }).result).status).toBe('completed')
    const anns = await openMemoryStore(writer, { user: ann })
    const [record] = await anns.adapter.export(anns.target)
    expect(record!.audit.approvalReason).toBe(`yes, remember that ${SECRET}`)
    const eraser = build([{ text: 'Forgetting.', toolCalls: [{ toolName: 'memory_delete', input: { id: record!.id, reason: `the user no longer wants "${SECRET}" kept` }, toolCallId: 'd1' }] }, { text: 'Done.' }])
    const deleting = await runAgent(eraser, { input: 'forget it', threadId: 't2', user: ann }).result
    expect((await resolveApproval(eraser, deleting.approvals[0]!.id, { approved: true, reason: `ok, drop ${SECRET}`, user: ann }).result).status).toBe('completed')
    expect(await anns.adapter.read(anns.target, record!.id)).toBeUndefined()
    expect(filesHolding(dir, SECRET)).toEqual([])
    for (const words of ['yes, remember that', 'no longer wants', 'ok, drop']) expect(filesHolding(dir, words).filter(file => file.startsWith('memory/'))).toEqual([])
    const lines = readFileSync(join(dir, 'memory/memory.jsonl'), 'utf8').trim().split('\n').map(text => JSON.parse(text) as Record<string, unknown>)
    expect(lines.map(line => [line.type, line.erased])).toEqual([['remember', true], ['erase', true]])
    expect(await verifyLog(createWorkspace({ dir }), 'memory:memory.jsonl')).toMatchObject({ ok: true, lines: 2 })
    // A fresh process replays the stripped erase line as an erasure: the id stays erased.
    const fresh = await openMemoryStore(build([]), { user: ann })
    expect(await fresh.adapter.read(fresh.target, record!.id)).toBeUndefined()
    await expect(fresh.adapter.export(fresh.target)).resolves.toEqual([])
  })

  it('a log written before the approval reason left the header (audit.approvalReason in the digest): erasing its record re-chains the log, the reason is in no file, and it verifies', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-erase-'))
    folders.push(dir)
    const workspace = createWorkspace({ dir })
    // The lines as the earlier writer made them: the schema without the move of the reason into the payload.
    const earlier = { ...memoryFold.schema, lineDraft: undefined }
    const hash = (await sha256HexSync())!
    const scope = { agent: 'support', user: 'ann' }
    const head = { store: 'agent', scope, version: 1, at: '2026-01-01T00:00:00.000Z', kind: 'semantic', tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, createdAt: '2026-01-01T00:00:00.000Z' }
    const first = serializeEvent(earlier, { ...head, type: 'remember', recordId: 'mem_a', content: SECRET, audit: { via: 'tool', user: 'ann', approver: 'ann', approvalReason: `keep ${SECRET}` } }, 1, null, false, hash) as { line: string; digest: string }
    const second = serializeEvent(earlier, { ...head, type: 'remember', recordId: 'mem_b', content: KEPT, audit: { via: 'api' } }, 2, first.digest, false, hash) as { line: string; digest: string }
    await workspace.append('memory:memory.jsonl', `${first.line}\n${second.line}\n`)
    expect(JSON.parse(first.line).audit.approvalReason).toBe(`keep ${SECRET}`)
    const adapter = workspaceJsonlMemoryStore().create({ workspace, store: 'agent', agent: 'support', writable: true }) as MemoryLogStoreAdapter
    const target = { store: 'agent', scope }
    expect((await adapter.read(target, 'mem_a'))?.audit.approvalReason).toBe(`keep ${SECRET}`)
    expect(await hardDeleteMemoryRecord(adapter, target, 'mem_a', { audit: { via: 'api' } })).toMatchObject({ erased: 1 })
    expect(filesHolding(dir, SECRET)).toEqual([])
    expect(filesHolding(dir, 'keep ')).toEqual([])
    expect(await verifyLog(workspace, 'memory:memory.jsonl')).toMatchObject({ ok: true, lines: 3 })
    const reopened = workspaceJsonlMemoryStore().create({ workspace: createWorkspace({ dir }), store: 'agent', agent: 'support', writable: true })
    expect((await reopened.export(target)).map(record => record.content)).toEqual([KEPT])
  })

  it('memory_delete with retention.hardDelete inside a run: the run saving its transcript afterwards does not write the erased text back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-erase-'))
    folders.push(dir)
    const build = hardDeleteAgent(dir, 'allow')
    const ann = { id: 'ann' }
    const first = build([remember(SECRET, 'c1'), { text: 'Saved.' }])
    const events = []
    for await (const event of runAgent(first, { input: `remember ${SECRET}`, threadId: 't1', user: ann })) events.push(event)
    const saved = events.find(event => event.type === 'tool-result') as { output: { record: { id: string } } } | undefined
    const id = saved!.output.record.id
    expect(filesHolding(dir, SECRET)).toEqual(['agents/support/threads/t1.json', 'memory/memory.jsonl'])
    const second = build([{ text: 'Forgetting.', toolCalls: [{ toolName: 'memory_delete', input: { id }, toolCallId: 'd1' }] }, { text: 'Done.' }])
    expect((await runAgent(second, { input: 'forget it', threadId: 't1', user: ann }).result).status).toBe('completed')
    expect(filesHolding(dir, SECRET)).toEqual([])
  })
})
