/**
 * Trust boundaries of the HTTP routes (docs/security.md): two tenants sharing a user id, two
 * replicas (this process and a real second process) over one fs workspace deciding the same
 * approvals in parallel, the request body limit, and approval files read by id and by index
 * only (a corrupt one affects only its own request). Real JWTs (jose, HS256).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createAgentHandler, jwtIdentity } from '../../src/server/index.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import { createSupportAgent } from '../../playground/server/lib/support-agent.ts'
import { rendezvousWorkspace, shipAgent, sideEffects } from '../agent/fixtures/ship-agent.ts'

const SECRET = 'a-test-secret-of-at-least-32-bytes!!'
const CHILD = fileURLToPath(new URL('../agent/fixtures/decide-child.ts', import.meta.url))
const dirs: string[] = []
const children: ChildProcess[] = []
afterAll(() => {
  for (const child of children) child.kill()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vam-trust-http-'))
  dirs.push(dir)
  return dir
}

async function token(sub: string, tenant?: string) {
  return new SignJWT(tenant ? { tenant } : {}).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(SECRET))
}

type Fetcher = (request: Request) => Promise<Response> | Response
async function call(fetcher: Fetcher, base: string, path: string, init: { token?: string; body?: unknown; raw?: BodyInit; headers?: Record<string, string> } = {}) {
  const hasBody = init.body !== undefined || init.raw !== undefined
  const response = await fetcher(new Request(`${base}${path}`, {
    method: hasBody ? 'POST' : 'GET',
    headers: { ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), ...(hasBody ? { 'content-type': 'application/json' } : {}), ...init.headers },
    ...(init.raw !== undefined ? { body: init.raw, duplex: 'half' } as RequestInit : init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  }))
  const text = await response.text()
  const type = response.headers.get('content-type') ?? ''
  const events = type.includes('ndjson') ? text.trim().split('\n').map(line => JSON.parse(line) as { type: string; [key: string]: any }) : []
  return { status: response.status, json: type.includes('application/json') ? JSON.parse(text) as Record<string, any> : undefined, events }
}

describe('one identity everywhere: two tenants sharing the user id "admin"', () => {
  let app: ReturnType<typeof createAgentHandler>
  let acme: string
  let globex: string
  const api = (path: string, init: Parameters<typeof call>[3] = {}) => call(request => app.fetch(request), 'http://test/api/agents', path, init)

  beforeAll(async () => {
    const agent = await createSupportAgent({ workspaceDir: tempDir(), driver: 'scripted' })
    app = createAgentHandler({ agents: { support: agent }, identify: jwtIdentity({ secret: SECRET }) })
    acme = await token('admin', 'acme')
    globex = await token('admin', 'globex')
  })

  test('globex\'s admin can neither read, continue nor supersede acme\'s admin\'s thread, nor see or decide its approval, nor read its memory', async () => {
    const asked = await api('/agents/support/runs', { token: acme, body: { input: 'remember the acme launch code is 7731' } })
    const approval = asked.events.find(event => event.type === 'approval-request')!.approval as { id: string; threadId: string }
    const threadId = approval.threadId

    expect((await api(`/agents/support/threads/${threadId}`, { token: globex })).status).toBe(404)
    const continued = await api('/agents/support/runs', { token: globex, body: { input: 'forget it', threadId } })
    expect(continued.events.find(event => event.type === 'error')?.error.code).toBe('THREAD_ACCESS_DENIED')
    expect((await api('/agents/support/approvals', { token: globex })).json).toEqual({ approvals: [] })
    const decided = await api(`/agents/support/approvals/${approval.id}`, { token: globex, body: { approved: true } })
    expect(decided.status).toBe(404)
    expect(decided.json!.error.code).toBe('APPROVAL_NOT_FOUND')

    // acme's approval is still pending (the refused continuation did not deny it) and still acme's to decide.
    const pending = await api('/agents/support/approvals', { token: acme })
    expect(pending.json!.approvals.map((item: { id: string; status: string }) => [item.id, item.status])).toEqual([[approval.id, 'pending']])
    const approved = await api(`/agents/support/approvals/${approval.id}`, { token: acme, body: { approved: true } })
    expect(approved.status).toBe(200)
    expect(approved.events.some(event => event.type === 'tool-result')).toBe(true)

    const acmeRecords = await api('/agents/support/stores/agent/records', { token: acme })
    expect(acmeRecords.json!.records.map((record: { content: string }) => record.content)).toEqual(['the acme launch code is 7731'])
    const globexRecords = await api('/agents/support/stores/agent/records', { token: globex })
    expect(globexRecords.json!.records).toEqual([])
  })
})

describe('request bodies', () => {
  let app: ReturnType<typeof createAgentHandler>
  let ann: string
  const api = (path: string, init: Parameters<typeof call>[3] = {}) => call(request => app.fetch(request), 'http://test/api/agents', path, init)
  beforeAll(async () => {
    const agent = await createSupportAgent({ workspaceDir: tempDir(), driver: 'scripted' })
    app = createAgentHandler({ agents: { support: agent }, identify: jwtIdentity({ secret: SECRET }), maxBodyBytes: 4096 })
    ann = await token('ann')
  })

  test('a body declared larger than maxBodyBytes is refused with 413 REQUEST_TOO_LARGE', async () => {
    const answer = await api('/agents/support/runs', { token: ann, body: { input: 'x'.repeat(5000) } })
    expect(answer.status).toBe(413)
    expect(answer.json!.error).toMatchObject({ code: 'REQUEST_TOO_LARGE', details: { limit: 4096 } })
  })

  test('a chunked body without content-length is cut off at maxBodyBytes with 413, not buffered whole', async () => {
    let sent = 0
    const chunk = new TextEncoder().encode(`{"input":"${'y'.repeat(1000)}`)
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent++
        // 1,000 chunks of 1 KB would be 1 MB: the reader must stop long before.
        if (sent > 1000) controller.close()
        else controller.enqueue(chunk)
      },
    })
    const answer = await api('/agents/support/runs', { token: ann, raw: endless })
    expect(answer.status).toBe(413)
    expect(answer.json!.error.code).toBe('REQUEST_TOO_LARGE')
    expect(sent).toBeLessThan(20)
  })

  test('a body within the limit still runs', async () => {
    const answer = await api('/agents/support/runs', { token: ann, body: { input: 'what do you know?' } })
    expect(answer.status).toBe(200)
    expect(answer.events.at(-1)?.type).toBe('finish')
  })
})

describe('approval files over HTTP', () => {
  test('a corrupt approval file fails only its own request; other approvals of the same and other users still list and decide', async () => {
    const dir = tempDir()
    const agent = await createSupportAgent({ workspaceDir: dir, driver: 'scripted' })
    const app = createAgentHandler({ agents: { support: agent }, identify: jwtIdentity({ secret: SECRET }) })
    const api = (path: string, init: Parameters<typeof call>[3] = {}) => call(request => app.fetch(request), 'http://test/api/agents', path, init)
    const ann = await token('ann')
    const ben = await token('ben')
    const ask = async (who: string, input: string) => (await api('/agents/support/runs', { token: who, body: { input } })).events.find(event => event.type === 'approval-request')!.approval.id as string
    const broken = await ask(ann, 'remember the first fact')
    const kept = await ask(ann, 'remember the second fact')
    const bens = await ask(ben, 'remember ben likes tea')
    writeFileSync(join(dir, 'agents/support/approvals', `${broken}.json`), '{"id": "half a file')

    const listed = await api('/agents/support/approvals', { token: ann })
    expect(listed.status).toBe(200)
    expect(listed.json!.approvals.map((item: { id: string }) => item.id)).toEqual([kept])
    const failed = await api(`/agents/support/approvals/${broken}`, { token: ann, body: { approved: true } })
    expect(failed.status).toBe(503)
    expect(failed.json!.error.code).toBe('WORKSPACE_CORRUPT_JSON')
    expect((await api(`/agents/support/approvals/${kept}`, { token: ann, body: { approved: true } })).status).toBe(200)
    expect((await api(`/agents/support/approvals/${bens}`, { token: ben, body: { approved: true } })).status).toBe(200)
  })

  test('listing reads only the identity\'s approvals: 300 unreadable approval files of others change nothing', async () => {
    const dir = tempDir()
    const agent = await createSupportAgent({ workspaceDir: dir, driver: 'scripted' })
    const app = createAgentHandler({ agents: { support: agent }, identify: jwtIdentity({ secret: SECRET }) })
    const api = (path: string, init: Parameters<typeof call>[3] = {}) => call(request => app.fetch(request), 'http://test/api/agents', path, init)
    const ann = await token('ann')
    const mine = (await api('/agents/support/runs', { token: ann, body: { input: 'remember ann likes jazz' } })).events.find(event => event.type === 'approval-request')!.approval
    const folder = join(dir, 'agents/support/approvals')
    mkdirSync(folder, { recursive: true })
    for (let i = 0; i < 300; i++) writeFileSync(join(folder, `apr_other${i}.json`), 'not json')
    const listed = await api('/agents/support/approvals', { token: ann })
    expect(listed.json!.approvals.map((item: { id: string }) => item.id)).toEqual([mine.id])
    const byThread = await api(`/agents/support/approvals?threadId=${mine.threadId}`, { token: ann })
    expect(byThread.json!.approvals.map((item: { id: string }) => item.id)).toEqual([mine.id])
  })
})

describe('two HTTP replicas over one fs workspace', () => {
  test('parallel POSTs of the same approvals to two replicas (two processes) run each approved call once; the other answer is 409 APPROVAL_ALREADY_RESOLVED', async () => {
    const dir = tempDir()
    const requests = shipAgent(dir)
    const ids: string[] = []
    const user = await token('ann', 'acme')
    const local = createAgentHandler({ agents: { shipper: shipAgent(dir, rendezvousWorkspace(createWorkspace({ dir }), dir, 'parent')) }, identify: jwtIdentity({ secret: SECRET }) })
    const asker = createAgentHandler({ agents: { shipper: requests }, identify: jwtIdentity({ secret: SECRET }) })
    for (let i = 0; i < 6; i++) {
      const asked = await call(request => asker.fetch(request), 'http://test/api/agents', '/agents/shipper/runs', { token: user, body: { input: `parcel-${i}` } })
      ids.push(asked.events.find(event => event.type === 'approval-request')!.approval.id)
    }
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, 'serve', dir, SECRET], { stdio: ['ignore', 'pipe', 'pipe'] })
    children.push(child)
    const port = await new Promise<number>((ready, fail) => {
      let out = ''
      let err = ''
      child.stderr!.on('data', chunk => { err += chunk })
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString()
        const match = /port (\d+)\n/.exec(out)
        if (match) ready(Number(match[1]))
      })
      child.on('exit', code => fail(new Error(`replica exited (${code}): ${err}`)))
    })
    const remote: Fetcher = request => fetch(request)
    const answers = await Promise.all(ids.flatMap(id => [
      call(request => local.fetch(request), 'http://test/api/agents', `/agents/shipper/approvals/${id}`, { token: user, body: { approved: true } }).then(answer => ({ id, ...answer })),
      call(remote, `http://127.0.0.1:${port}/api/agents`, `/agents/shipper/approvals/${id}`, { token: user, body: { approved: true } }).then(answer => ({ id, ...answer })),
    ]))
    for (const id of ids) {
      const mine = answers.filter(answer => answer.id === id)
      expect(mine.map(answer => answer.status).sort()).toEqual([200, 409])
      expect(mine.find(answer => answer.status === 409)!.json!.error.code).toBe('APPROVAL_ALREADY_RESOLVED')
      expect(mine.find(answer => answer.status === 200)!.events.some(event => event.type === 'tool-result')).toBe(true)
    }
    expect(sideEffects(dir).map(line => line.split(' ')[0]).sort()).toEqual(ids.map((_, i) => `parcel-${i}`).sort())
  }, 60_000)
})
