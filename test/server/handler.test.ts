/**
 * The production handler with jwtIdentity: two real JWT identities (HS256 via jose), the
 * playground's support agent over a real fs workspace, requests through `app.fetch`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SignJWT, exportJWK, generateKeyPair } from 'jose'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createAgentHandler, jwtIdentity } from '../../src/server/index.ts'
import { createSupportAgent } from '../../playground/server/lib/support-agent.ts'
import type { AgentDefinition } from '../../src/index.ts'

const SECRET = 'a-test-secret-of-at-least-32-bytes!!'
let dir: string
let agent: AgentDefinition
let app: ReturnType<typeof createAgentHandler>

async function token(sub: string, options: { secret?: string; expiresIn?: string } = {}) {
  return new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setIssuedAt().setExpirationTime(options.expiresIn ?? '5m').sign(new TextEncoder().encode(options.secret ?? SECRET))
}

async function call(path: string, init: { token?: string; method?: string; body?: unknown } = {}) {
  const response = await app.fetch(new Request(`http://test/api/agents${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  }))
  const text = await response.text()
  const type = response.headers.get('content-type') ?? ''
  const events = type.includes('ndjson') ? text.trim().split('\n').map(line => JSON.parse(line) as { type: string; [key: string]: unknown }) : []
  return { status: response.status, type, text, json: type.includes('application/json') ? JSON.parse(text) as Record<string, any> : undefined, events }
}

let ann: string
let ben: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vam-handler-'))
  agent = await createSupportAgent({ workspaceDir: dir, driver: 'scripted' })
  app = createAgentHandler({ agents: { support: agent }, identify: jwtIdentity({ secret: SECRET }) })
  ann = await token('ann')
  ben = await token('ben')
})

afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Ann remembers `content` and approves it; returns the record id. */
async function annRemembers(content: string): Promise<string> {
  const run = await call('/agents/support/runs', { token: ann, body: { input: `remember ${content}` } })
  const request = run.events.find(event => event.type === 'approval-request') as unknown as { approval: { id: string } }
  const approved = await call(`/agents/support/approvals/${request.approval.id}`, { token: ann, body: { approved: true, reason: 'ok' } })
  const result = approved.events.find(event => event.type === 'tool-result') as unknown as { output: { record: { id: string } } }
  return result.output.record.id
}

describe('identity', () => {
  const routes = [
    ['GET', '/agents'], ['GET', '/me'], ['POST', '/agents/support/runs'], ['GET', '/agents/support/approvals'],
    ['POST', '/agents/support/approvals/apr_x'], ['GET', '/agents/support/stores'], ['GET', '/agents/support/stores/agent/records'],
    ['GET', '/agents/support/stores/agent/records/mem_x'], ['GET', '/agents/support/stores/agent/search?q=x'],
    ['GET', '/agents/support/stores/agent/log'], ['POST', '/agents/support/stores/agent/verify'], ['GET', '/agents/support/stores/agent/export'],
    ['GET', '/no/such/route'],
  ] as const

  test('a request with no token is refused with 401 UNAUTHENTICATED on every route', async () => {
    for (const [method, path] of routes) {
      const response = await call(path, { method, ...(method === 'POST' ? { body: { input: 'hi', approved: true } } : {}) })
      expect([method, path, response.status, response.json?.error.code]).toEqual([method, path, 401, 'UNAUTHENTICATED'])
    }
  })

  test('a token signed with another secret, an expired token and garbage are refused with 401 AUTH_TOKEN_INVALID', async () => {
    const bad = [await token('ann', { secret: 'another-secret-of-at-least-32-bytes!' }), await token('ann', { expiresIn: '-1h' }), 'not.a.jwt']
    for (const candidate of bad) {
      const response = await call('/agents', { token: candidate })
      expect(response.status).toBe(401)
      expect(response.json?.error.code).toBe('AUTH_TOKEN_INVALID')
      expect(response.text).not.toContain(candidate)
    }
  })

  test('a token without an exp claim is refused unless requireExpiry is false', async () => {
    const forever = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('ann').setIssuedAt().sign(new TextEncoder().encode(SECRET))
    const refused = await call('/me', { token: forever })
    expect([refused.status, refused.json?.error.code]).toEqual([401, 'AUTH_TOKEN_INVALID'])
    const lenient = createAgentHandler({ agents: {}, identify: jwtIdentity({ secret: SECRET, requireExpiry: false }) })
    const response = await lenient.fetch(new Request('http://test/api/agents/me', { headers: { authorization: `Bearer ${forever}` } }))
    expect(response.status).toBe(200)
  })

  test('a valid token names the identity from its sub claim', async () => {
    expect((await call('/me', { token: ann })).json).toEqual({ identity: expect.objectContaining({ id: 'ann' }) })
  })

  test('createAgentHandler without identify is refused with SERVER_IDENTIFY_REQUIRED', () => {
    expect(() => createAgentHandler({ agents: { support: agent } } as never)).toThrow(/SERVER_IDENTIFY_REQUIRED/)
  })

  test('jwtIdentity with a JWKS key set accepts a token signed by its private key', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256')
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }
    const jwksApp = createAgentHandler({ agents: { support: agent }, identify: jwtIdentity({ jwks: { keys: [jwk] } }) })
    const signed = await new SignJWT({ tenant: 'acme' }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setSubject('carol').setExpirationTime('5m').sign(privateKey)
    const response = await jwksApp.fetch(new Request('http://test/api/agents/me', { headers: { authorization: `Bearer ${signed}` } }))
    expect(await response.json()).toEqual({ identity: expect.objectContaining({ id: 'carol', tenant: 'acme' }) })
  })

  test('jwtIdentity({ secret: process.env.JWT_SECRET }) with the variable unset says the secret is undefined and to set the variable', () => {
    expect(() => jwtIdentity({ secret: process.env.VAM_UNSET_JWT_SECRET_FOR_TEST! })).toThrow(expect.objectContaining({
      code: 'SERVER_OPTIONS_INVALID',
      message: expect.stringContaining('jwtIdentity() got `secret: undefined`, as `process.env.JWT_SECRET` is when the variable is not set. Fix: set the environment variable'),
    }))
  })

  test('jwtIdentity needs exactly one of secret and jwks', () => {
    expect(() => jwtIdentity({})).toThrow(/SERVER_OPTIONS_INVALID/)
    expect(() => jwtIdentity({ secret: SECRET, jwks: { keys: [] } })).toThrow(/SERVER_OPTIONS_INVALID/)
  })
})

describe('runs and approvals', () => {
  test('a run streams its events as NDJSON from start to finish, for the token\'s user', async () => {
    const run = await call('/agents/support/runs', { token: ann, body: { input: 'what do I like' } })
    expect(run.status).toBe(200)
    expect(run.type).toContain('application/x-ndjson')
    expect(run.events[0]).toMatchObject({ type: 'start', agent: 'support' })
    expect(run.events.map(event => event.type)).toContain('tool-call')
    expect(run.events.at(-1)).toMatchObject({ type: 'finish', status: 'completed' })
  })

  test('a run asked for server-sent events streams them as SSE', async () => {
    const response = await app.fetch(new Request('http://test/api/agents/agents/support/runs', { method: 'POST', headers: { authorization: `Bearer ${ann}`, 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify({ input: 'hello' }) }))
    expect(response.headers.get('content-type')).toContain('text/event-stream')
    const text = await response.text()
    expect(text).toMatch(/^event: start\ndata: \{/)
    expect(text).toContain('event: finish\n')
  })

  test('a body that tries to name a user or a scope is refused with REQUEST_INVALID', async () => {
    for (const body of [{ input: 'hi', user: { id: 'ann' } }, { input: 'hi', scope: { user: 'ann' } }, { input: '' }, {}]) {
      const response = await call('/agents/support/runs', { token: ben, body })
      expect(response.status).toBe(400)
      expect(response.json?.error.code).toBe('REQUEST_INVALID')
    }
  })

  test('another user can neither list nor approve an approval, and gets the same answer as for an unknown id', async () => {
    const run = await call('/agents/support/runs', { token: ann, body: { input: 'remember the vault code is 4411' } })
    const { approval } = run.events.find(event => event.type === 'approval-request') as unknown as unknown as { approval: { id: string } }
    expect((await call('/agents/support/approvals', { token: ben })).json?.approvals).toEqual([])
    expect((await call('/agents/support/approvals', { token: ann })).json?.approvals.map((item: { id: string }) => item.id)).toContain(approval.id)

    const stolen = await call(`/agents/support/approvals/${approval.id}`, { token: ben, body: { approved: true } })
    const unknown = await call('/agents/support/approvals/apr_00000000000000000000', { token: ben, body: { approved: true } })
    expect(stolen.status).toBe(404)
    expect(stolen.status).toBe(unknown.status)
    expect(stolen.json?.error.code).toBe('APPROVAL_NOT_FOUND')
    expect(stolen.text.replaceAll(approval.id, 'ID')).toBe(unknown.text.replaceAll('apr_00000000000000000000', 'ID'))
    // Nothing was written by ben's attempt, and ann can still decide it once.
    const denied = await call(`/agents/support/approvals/${approval.id}`, { token: ann, body: { approved: false, reason: 'no' } })
    expect(denied.events.find(event => event.type === 'approval-decision')).toMatchObject({ approved: false, approver: 'ann', reason: 'no' })
    const again = await call(`/agents/support/approvals/${approval.id}`, { token: ann, body: { approved: true } })
    expect([again.status, again.json?.error.code]).toEqual([409, 'APPROVAL_ALREADY_RESOLVED'])
    const exported = (await call('/agents/support/stores/agent/export', { token: ann })).json
    expect(exported?.records.some((record: { content: string }) => record.content.includes('4411'))).toBe(false)
  })
})

test('a thread reads back as its user and assistant text for its owner, and like an unknown thread for anyone else', async () => {
  const run = await call('/agents/support/runs', { token: ann, body: { input: 'what do you know about harbours', threadId: 'ann-thread-1' } })
  expect(run.status).toBe(200)
  const own = await call('/agents/support/threads/ann-thread-1', { token: ann })
  expect(own.status).toBe(200)
  expect(own.json?.messages[0]).toEqual({ role: 'user', text: 'what do you know about harbours' })
  expect(own.json?.messages.length).toBeGreaterThan(1)
  const other = await call('/agents/support/threads/ann-thread-1', { token: ben })
  const unknown = await call('/agents/support/threads/no-such-thread', { token: ben })
  expect([other.status, other.json?.error.code]).toEqual([404, 'THREAD_NOT_FOUND'])
  expect(other.text.replaceAll('ann-thread-1', 'ID')).toBe(unknown.text.replaceAll('no-such-thread', 'ID'))
})

test('an export is offered as a file named after the agent, store and user, so two users\' exports never share a name', async () => {
  const names = await Promise.all([ann, ben].map(async (token) => {
    const response = await app.fetch(new Request('http://test/api/agents/agents/support/stores/agent/export', { headers: { authorization: `Bearer ${token}` } }))
    return response.headers.get('content-disposition')
  }))
  expect(names).toEqual(['attachment; filename="support-agent-ann-export.json"', 'attachment; filename="support-agent-ben-export.json"'])
})

describe('memory inspector across identities', () => {
  let recordId: string
  beforeAll(async () => {
    recordId = await annRemembers('I keep my passport in the blue drawer')
  })

  test('the owner reads the record with its history, provenance and audit', async () => {
    const detail = (await call(`/agents/support/stores/agent/records/${recordId}`, { token: ann })).json!
    expect(detail.record).toMatchObject({ id: recordId, content: 'I keep my passport in the blue drawer', scope: { agent: 'support', user: 'ann' }, audit: { user: 'ann', approver: 'ann', via: 'tool' } })
    expect(detail.events.map((event: { type: string }) => event.type)).toEqual(['remember'])
    expect(detail.events[0].digest).toMatch(/^[0-9a-f]{64}$/)
  })

  test('another user reading the record gets the same 404 as for a missing record', async () => {
    const stolen = await call(`/agents/support/stores/agent/records/${recordId}`, { token: ben })
    const missing = await call('/agents/support/stores/agent/records/mem_00000000000000000000000000000000', { token: ben })
    expect([stolen.status, stolen.json?.error.code]).toEqual([404, 'MEMORY_RECORD_NOT_FOUND'])
    expect(stolen.text.replaceAll(recordId, 'ID')).toBe(missing.text.replaceAll('mem_00000000000000000000000000000000', 'ID'))
  })

  test('another user\'s records, search, log lines and export hold nothing of the owner\'s scope', async () => {
    const records = (await call('/agents/support/stores/agent/records?status=all', { token: ben })).json!
    const search = (await call('/agents/support/stores/agent/search?q=passport', { token: ben })).json!
    const log = (await call('/agents/support/stores/agent/log', { token: ben })).json!
    const exported = (await call('/agents/support/stores/agent/export', { token: ben })).json!
    expect(records.scope).toEqual({ agent: 'support', user: 'ben' })
    expect(records.records.map((record: { id: string }) => record.id)).not.toContain(recordId)
    expect(search.hits).toEqual([])
    expect(log.lines.map((line: { text: string }) => line.text).join('\n')).not.toContain('passport')
    expect(exported.records.map((record: { id: string }) => record.id)).not.toContain(recordId)
    expect((await call('/agents/support/stores/agent/search?q=passport', { token: ann })).json!.hits[0].record.id).toBe(recordId)
  })

  test('verify reports a good chain, then the first bad line after a line is altered on disk', async () => {
    expect((await call('/agents/support/stores/agent/verify', { token: ann, method: 'POST' })).json).toMatchObject({ ok: true, key: 'memory:memory.jsonl' })
    const file = join(dir, 'memory', 'memory.jsonl')
    const original = readFileSync(file, 'utf8')
    writeFileSync(file, original.replace('blue drawer', 'red drawer!'))
    try {
      const verdict = (await call('/agents/support/stores/agent/verify', { token: ann, method: 'POST' })).json!
      expect(verdict.ok).toBe(false)
      expect(verdict.firstBad.line).toBeGreaterThanOrEqual(1)
    } finally {
      writeFileSync(file, original)
    }
  })

  test('an unknown store or agent answers 404 with a code', async () => {
    expect((await call('/agents/support/stores/nope/records', { token: ann })).json?.error.code).toBe('MEMORY_STORE_UNKNOWN')
    expect((await call('/agents/nope/stores', { token: ann })).json?.error.code).toBe('AGENT_NOT_FOUND')
  })
})

describe('the studio option of the production handler', () => {
  test('without studio the handler serves no studio route', async () => {
    expect((await call('/studio/')).status).toBe(401)
    expect((await call('/studio/', { token: ann })).status).toBe(404)
    expect((await call('/studio-users', { token: ann })).status).toBe(404)
  })

  test('studio: { dir } serves the UI without an identity and its data routes only for the verified identity', async () => {
    const ui = mkdtempSync(join(tmpdir(), 'vam-handler-ui-'))
    writeFileSync(join(ui, 'index.html'), '<!doctype html><title>Studio</title>')
    const studio = createAgentHandler({ agents: { support: agent }, identify: jwtIdentity({ secret: SECRET }), studio: { dir: ui } })
    const get = (path: string, bearer?: string) => studio.fetch(new Request(`http://test/api/agents${path}`, { headers: bearer ? { authorization: `Bearer ${bearer}` } : {} }))
    const index = await get('/studio/')
    expect(index.status).toBe(200)
    expect(await index.text()).toContain('<title>Studio</title>')
    expect((await get('/studio-users')).status).toBe(401)
    expect(await (await get('/studio-users', ben)).json()).toEqual({ users: ['ben'] })
    expect((await get('/agents/support/threads', ann)).status).toBe(200)
    rmSync(ui, { recursive: true, force: true })
  })

  test('a studio option that is neither a boolean nor { dir } is refused with SERVER_OPTIONS_INVALID', () => {
    expect(() => createAgentHandler({ agents: { support: agent }, identify: jwtIdentity({ secret: SECRET }), studio: 'yes' as never })).toThrow(expect.objectContaining({ code: 'SERVER_OPTIONS_INVALID' }))
  })
})
