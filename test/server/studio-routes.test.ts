/**
 * The studio routes over the playground's support agent on a real fs workspace, through
 * `app.fetch`: the run journal, the thread list, the records table with filters and paging,
 * ranked search highlights, version chains, paged log lines, import, and record actions that go
 * through the store's write policy (an approval) like the model's tools.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createAgentRoutes } from '../../src/server/routes.ts'
import { devIdentity } from '../../src/vite/plugin.ts'
import { discoverScopeUsers, highlightRanges } from '../../src/server/studio-routes.ts'
import { openMemoryStore } from '../../src/memory/open-store.ts'
import { createSupportAgent } from '../../playground/server/lib/support-agent.ts'
import type { AgentDefinition } from '../../src/index.ts'
import type { AgentSource } from '../../src/server/types.ts'

let dir: string
let agent: AgentDefinition
let app: ReturnType<typeof createAgentRoutes>
let source: AgentSource

type Event = { type: string; [key: string]: any }

async function call(path: string, init: { user?: string; body?: unknown; method?: string } = {}) {
  const response = await app.fetch(new Request(`http://test/__agents${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { 'x-agent-user': init.user ?? 'ann', ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  }))
  const text = await response.text()
  const type = response.headers.get('content-type') ?? ''
  const events: Event[] = type.includes('ndjson') ? text.trim().split('\n').map(line => JSON.parse(line) as Event) : []
  return { status: response.status, type, json: type.includes('application/json') ? JSON.parse(text) as Record<string, any> : undefined, events }
}

async function remember(content: string, user = 'ann'): Promise<{ id: string; threadId: string }> {
  const run = await call('/agents/support/runs', { user, body: { input: `remember ${content}` } })
  const approval = run.events.find(event => event.type === 'approval-request')!.approval as { id: string; threadId: string }
  const approved = await call(`/agents/support/approvals/${approval.id}`, { user, body: { approved: true, reason: 'ok' } })
  return { id: approved.events.find(event => event.type === 'tool-result')!.output.record.id as string, threadId: approval.threadId }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vam-studio-'))
  agent = await createSupportAgent({ workspaceDir: dir, driver: 'scripted' })
  source = { list: async () => ['support'], load: async name => (name === 'support' ? agent : undefined) }
  app = createAgentRoutes({ agents: source, identify: devIdentity(['ann', 'ben'], { discover: () => discoverScopeUsers(source) }), mode: 'dev', devUsers: ['ann', 'ben'], studio: true })
})

afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('threads', () => {
  test('a thread is journalled with its tool steps, timings and approval decision, and listed for its user only', async () => {
    const { threadId } = await remember('I prefer aisle seats')
    const journal = await call(`/agents/support/threads/${threadId}/journal`)
    expect(journal.status).toBe(200)
    const runs = journal.json!.runs as { kind: string; status: string; events: Event[] }[]
    expect(runs.map(run => run.kind)).toEqual(['message', 'decision'])
    expect(runs[0]!.events.map(event => event.type)).toContain('approval-request')
    const decision = runs[1]!.events.find(event => event.type === 'approval-decision')!
    expect(decision).toMatchObject({ approved: true, reason: 'ok', approver: 'ann' })
    const result = runs[1]!.events.find(event => event.type === 'tool-result')!
    expect(typeof result.durationMs).toBe('number')
    expect(runs.every(run => run.status === 'completed' || run.status === 'awaiting-approval')).toBe(true)

    const listed = await call('/agents/support/threads')
    expect(listed.json!.threads.map((thread: { threadId: string }) => thread.threadId)).toContain(threadId)
    expect(listed.json!.threads.find((thread: { threadId: string }) => thread.threadId === threadId).title).toBe('remember I prefer aisle seats')
    const bens = await call('/agents/support/threads', { user: 'ben' })
    expect(bens.json!.threads.map((thread: { threadId: string }) => thread.threadId)).not.toContain(threadId)
    expect((await call(`/agents/support/threads/${threadId}/journal`, { user: 'ben' })).status).toBe(404)
  })

  test('the journal of a run exists before its first event is read', async () => {
    const response = await app.fetch(new Request('http://test/__agents/agents/support/runs', { method: 'POST', headers: { 'x-agent-user': 'ann', 'content-type': 'application/json' }, body: JSON.stringify({ input: 'what do you know about journals' }) }))
    const threadId = new TextDecoder().decode((await response.body!.getReader().read()).value).match(/"threadId":"([^"]+)"/)![1]!
    const journal = await call(`/agents/support/threads/${threadId}/journal`)
    expect(journal.status).toBe(200)
    expect(journal.json!.runs[0].input).toBe('what do you know about journals')
  })
})

describe('memory', () => {
  test('the table filters by kind, tag, pinned, status and dates and pages newest first', async () => {
    const opened = await openMemoryStore(agent, { user: { id: 'ben' } })
    for (let n = 0; n < 30; n++) {
      await opened.adapter.append(opened.target, { kind: n % 3 === 0 ? 'episodic' : 'semantic', content: `fact number ${n}`, tags: n % 2 ? ['odd'] : ['even'], pinned: n === 7, createdAt: `2024-01-${String(n + 1).padStart(2, '0')}T10:00:00.000Z` }, { audit: { via: 'api' } })
    }
    const first = await call('/agents/support/stores/agent/table?limit=10', { user: 'ben' })
    expect(first.json!.total).toBe(30)
    expect(first.json!.records.map((record: { content: string }) => record.content).slice(0, 2)).toEqual(['fact number 29', 'fact number 28'])
    expect(first.json!.kinds).toEqual(['episodic', 'semantic'])
    expect(first.json!.tags).toEqual(['even', 'odd'])
    const second = await call('/agents/support/stores/agent/table?limit=10&offset=10', { user: 'ben' })
    expect(second.json!.records[0].content).toBe('fact number 19')
    expect((await call('/agents/support/stores/agent/table?kind=episodic', { user: 'ben' })).json!.total).toBe(10)
    expect((await call('/agents/support/stores/agent/table?tag=odd&kind=semantic', { user: 'ben' })).json!.total).toBe(10)
    expect((await call('/agents/support/stores/agent/table?pinned=true', { user: 'ben' })).json!.records.map((record: { content: string }) => record.content)).toEqual(['fact number 7'])
    const january = await call('/agents/support/stores/agent/table?createdFrom=2024-01-05&createdTo=2024-01-07', { user: 'ben' })
    expect(january.json!.records.map((record: { content: string }) => record.content)).toEqual(['fact number 6', 'fact number 5', 'fact number 4'])
    expect((await call('/agents/support/stores/agent/table?createdFrom=yesterday', { user: 'ben' })).status).toBe(400)
  })

  test('search hits carry highlight ranges of the matched words', async () => {
    expect(highlightRanges('I prefer window seats', 'which seat do I prefer')).toEqual([[2, 8], [16, 21]])
    await remember('the spare key is under the blue pot')
    const found = await call('/agents/support/stores/agent/search?q=keys%20pot')
    const hit = found.json!.hits.find((candidate: { record: { content: string } }) => candidate.record.content === 'the spare key is under the blue pot')
    expect(hit.highlights).toEqual([[10, 13], [32, 35]])
  })

  test('pin, edit and delete from the studio wait for approval, then write a new version in the chain', async () => {
    const { id } = await remember('my dog is called Rex')
    const pin = await call(`/agents/support/stores/agent/records/${id}/actions`, { body: { action: 'pin' } })
    const request = pin.events.find(event => event.type === 'approval-request')!.approval as { id: string; toolName: string; input: { pinned: boolean; supersedes: string[] } }
    expect(request.toolName).toBe('memory_remember')
    expect(request.input).toMatchObject({ pinned: true, supersedes: [id] })
    // Nothing is written before the approval.
    expect((await call(`/agents/support/stores/agent/records/${id}`)).json!.record.status).toBe('active')
    const approved = await call(`/agents/support/approvals/${request.id}`, { body: { approved: true } })
    const pinned = approved.events.find(event => event.type === 'tool-result')!.output.record as { id: string; pinned: boolean }
    expect(pinned.pinned).toBe(true)
    expect(approved.events.find(event => event.type === 'finish')!.text).toMatch(/^Done: /)

    const edit = await call(`/agents/support/stores/agent/records/${pinned.id}/actions`, { body: { action: 'edit', content: 'my dog is called Max' } })
    const editRequest = edit.events.find(event => event.type === 'approval-request')!.approval as { id: string }
    const edited = (await call(`/agents/support/approvals/${editRequest.id}`, { body: { approved: true } })).events.find(event => event.type === 'tool-result')!.output.record as { id: string }
    const versions = await call(`/agents/support/stores/agent/records/${edited.id}/versions`)
    expect(versions.json!.versions.map((record: { content: string; status: string }) => [record.content, record.status])).toEqual([
      ['my dog is called Rex', 'superseded'], ['my dog is called Rex', 'superseded'], ['my dog is called Max', 'active'],
    ])
    expect(versions.json!.events.map((line: { type: string }) => line.type)).toContain('supersede')

    const denied = await call(`/agents/support/stores/agent/records/${edited.id}/actions`, { body: { action: 'delete', reason: 'wrong' } })
    const deleteRequest = denied.events.find(event => event.type === 'approval-request')!.approval as { id: string }
    const refused = await call(`/agents/support/approvals/${deleteRequest.id}`, { body: { approved: false, reason: 'keep it' } })
    expect(refused.events.find(event => event.type === 'finish')!.text).toMatch(/^Not done/)
    expect((await call(`/agents/support/stores/agent/records/${edited.id}`)).json!.record.status).toBe('active')
    // Studio action threads stay out of the chat thread list.
    const threads = (await call('/agents/support/threads')).json!.threads as { title: string }[]
    expect(threads.some(thread => thread.title.startsWith('{'))).toBe(false)
  })

  test('an action on a superseded record is refused', async () => {
    const { id } = await remember('the wifi password is on the fridge')
    const pin = await call(`/agents/support/stores/agent/records/${id}/actions`, { body: { action: 'pin' } })
    const request = pin.events.find(event => event.type === 'approval-request')!.approval as { id: string }
    await call(`/agents/support/approvals/${request.id}`, { body: { approved: true } })
    const again = await call(`/agents/support/stores/agent/records/${id}/actions`, { body: { action: 'unpin' } })
    expect(again.status).toBe(400)
    expect(again.json!.error.code).toBe('MEMORY_RECORD_NOT_ACTIVE')
  })

  test('log lines are paged per scope, newest page first, and the scopes of the log are listed', async () => {
    const lines = await call('/agents/support/stores/agent/lines?limit=5', { user: 'ben' })
    expect(lines.json!.total).toBe(30)
    expect(lines.json!.offset).toBe(25)
    expect(lines.json!.lines).toHaveLength(5)
    expect(lines.json!.lines.at(-1).text).toContain('fact number 29')
    const scopes = await call('/agents/support/stores/agent/scopes')
    expect(scopes.json!.scopes.map((entry: { scope: { user: string } }) => entry.scope.user).sort()).toEqual(['ann', 'ben'])
  })

  test('an imported scope is opened by its user, who the dev identity then accepts', async () => {
    const exported = await call('/agents/support/stores/agent/export', { user: 'ben' })
    expect(exported.status).toBe(200)
    const opened = await openMemoryStore(agent, { user: { id: 'Caroline' } })
    await opened.adapter.append(opened.target, { kind: 'semantic', content: 'Caroline went to a support group', tags: ['Caroline'] }, { audit: { via: 'import' } })
    expect((await call('/studio-users')).json!.users).toEqual(['ann', 'ben', 'Caroline'])
    expect((await call('/agents/support/stores/agent/table', { user: 'Caroline' })).json!.total).toBe(1)
    expect((await call('/agents/support/stores/agent/table', { user: 'Nobody' })).status).toBe(401)

    const file = await (await app.fetch(new Request('http://test/__agents/agents/support/stores/agent/export', { headers: { 'x-agent-user': 'ben' } }))).json()
    const imported = await call('/agents/support/stores/agent/import', { user: 'Caroline', body: file })
    expect(imported.json).toMatchObject({ added: 30 })
    expect((await call('/agents/support/stores/agent/table', { user: 'Caroline' })).json!.total).toBe(31)
  })
})

test('an import larger than the body limit of other routes is taken (a scope export of megabytes)', async () => {
  const source = await openMemoryStore(agent, { user: { id: 'eve' } })
  for (let n = 0; n < 1500; n++) await source.adapter.append(source.target, { kind: 'semantic', content: `eve's note ${n}: ${'a long line of text about many things '.repeat(8)}` }, { audit: { via: 'api' } })
  const exported = await (await app.fetch(new Request('http://test/__agents/agents/support/stores/agent/export', { headers: { 'x-agent-user': 'eve' } }))).text()
  expect(exported.length).toBeGreaterThan(256 * 1024)
  const target = await openMemoryStore(agent, { user: { id: 'frank' } })
  await target.adapter.append(target.target, { kind: 'semantic', content: 'frank was here' }, { audit: { via: 'api' } })
  const imported = await call('/agents/support/stores/agent/import', { user: 'frank', body: JSON.parse(exported) })
  expect(imported.status).toBe(200)
  expect(imported.json).toMatchObject({ added: 1500 })
  // Every other body keeps the routes' limit.
  expect((await call('/agents/support/runs', { user: 'frank', body: { input: 'x'.repeat(300 * 1024) } })).status).toBe(413)
})

test('the studio UI is served from its folder without an identity, with types and no file outside it', async () => {
  const ui = mkdtempSync(join(tmpdir(), 'vam-studio-ui-'))
  mkdirSync(join(ui, 'assets'))
  writeFileSync(join(ui, 'index.html'), '<!doctype html><title>Studio</title>')
  writeFileSync(join(ui, 'assets', 'app-1.js'), 'export {}')
  writeFileSync(join(dir, 'secret.txt'), 'no')
  const served = createAgentRoutes({ agents: source, identify: () => undefined, studio: { dir: ui } })
  const get = (path: string) => served.fetch(new Request(`http://test/__agents${path}`))
  const index = await get('/studio/')
  expect(index.status).toBe(200)
  expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8')
  expect(await index.text()).toContain('<title>Studio</title>')
  expect((await get('/studio')).status).toBe(308)
  expect((await get('/studio/assets/app-1.js')).headers.get('content-type')).toBe('text/javascript; charset=utf-8')
  expect((await get('/studio/..%2F..%2Fsecret.txt')).status).toBe(404)
  expect((await get('/studio/missing.js')).status).toBe(404)
  // The data routes still refuse a request without an identity.
  expect((await get('/agents/support/threads')).status).toBe(401)
  rmSync(ui, { recursive: true, force: true })
})
