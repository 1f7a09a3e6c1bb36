import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { directoryAgentSource } from '../../src/cli/commands/studio.ts'
import { createAgentHandler } from '../../src/server/index.ts'
import { createAgentRoutes } from '../../src/server/routes.ts'
import { isAgentError } from '../../src/errors.ts'
import type { AgentDefinition } from '../../src/index.ts'
import { REPO_ROOT } from '../cli/locomo.ts'

/**
 * The `agents` of createAgentHandler: the quick-start agent (no `name`) in a project of its own,
 * served by the CLI's folder source (as `agent dev` and the Vite plugin serve it) and by the
 * production handler, over one fs workspace.
 */
let root = ''
let workspaceDir = ''
let support: AgentDefinition

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'vam-handler-agents-'))
  workspaceDir = join(root, '.agent', 'workspace')
  mkdirSync(join(root, 'server', 'agents'), { recursive: true })
  writeFileSync(join(root, 'server', 'agents', 'support.ts'), [
    `import { createWorkspace, defineAgent } from ${JSON.stringify(join(REPO_ROOT, 'src/index.ts'))}`,
    `export default defineAgent({`,
    `  driver: { run(context) { context.write('hello ' + context.input) } },`,
    `  workspace: createWorkspace({ dir: ${JSON.stringify(workspaceDir)} }),`,
    `})`,
  ].join('\n'))
  support = ((await import(pathToFileURL(join(root, 'server', 'agents', 'support.ts')).href)) as { default: AgentDefinition }).default
})

afterAll(() => rmSync(root, { recursive: true, force: true }))

async function run(app: { fetch(request: Request): Response | Promise<Response> }, prefix: string, body: Record<string, unknown>) {
  const response = await app.fetch(new Request(`http://test${prefix}/agents/support/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }))
  return (await response.text()).trim().split('\n').map(line => JSON.parse(line) as { type: string; [key: string]: unknown })
}

describe('createAgentHandler names an unnamed agent by its key', () => {
  it('an unnamed agent served under key support runs as agent "support" and stores its thread under agents/support', async () => {
    expect(support.name).toBe('agent')
    const app = createAgentHandler({ agents: { support }, identify: () => ({ id: 'ann' }) })
    const events = await run(app, '/api/agents', { input: 'there' })
    expect(events[0]).toMatchObject({ type: 'start', agent: 'support' })
    const threadId = events[0]!.threadId as string
    expect(readdirSync(join(workspaceDir, 'agents'))).toEqual(['support'])
    expect(existsSync(join(workspaceDir, 'agents', 'support', 'threads'))).toBe(true)
    const thread = await app.fetch(new Request(`http://test/api/agents/agents/support/threads/${threadId}`))
    expect(thread.status).toBe(200)
  })

  it('a thread made through the CLI folder source is read by the production handler on the same workspace', async () => {
    const dev = createAgentRoutes({ agents: directoryAgentSource(root), identify: () => ({ id: 'ben' }), prefix: '/__agents', mode: 'dev' })
    const events = await run(dev, '/__agents', { input: 'from dev' })
    expect(events[0]).toMatchObject({ type: 'start', agent: 'support' })
    const threadId = events[0]!.threadId as string
    const production = createAgentHandler({ agents: { support: () => import(pathToFileURL(join(root, 'server', 'agents', 'support.ts')).href) }, identify: () => ({ id: 'ben' }) })
    const response = await production.fetch(new Request(`http://test/api/agents/agents/support/threads/${threadId}`))
    expect(response.status).toBe(200)
    const thread = await response.json() as { messages: Array<{ role: string; text: string }> }
    expect(thread.messages).toEqual([{ role: 'user', text: 'from dev' }, { role: 'assistant', text: 'hello from dev' }])
  })

  it('an agent with its own name keeps it under any key', async () => {
    const named = { ...support, name: 'helpdesk' } as AgentDefinition
    const app = createAgentHandler({ agents: { support: named }, identify: () => ({ id: 'ann' }) })
    const events = await run(app, '/api/agents', { input: 'x' })
    expect(events[0]).toMatchObject({ type: 'start', agent: 'helpdesk' })
  })
})

describe('createAgentHandler given a module instead of its default export', () => {
  it('accepts the { default: agent } a CommonJS app gets from importing a TypeScript agent, named by its key', async () => {
    const app = createAgentHandler({ agents: { support: { default: support } }, identify: () => ({ id: 'cy' }) })
    const events = await run(app, '/api/agents', { input: 'cjs' })
    expect(events[0]).toMatchObject({ type: 'start', agent: 'support' })
    expect(events.find(event => event.type === 'error')).toBeUndefined()
  })

  it('an entry that is no agent says what it got and how to pass the default export', () => {
    let thrown: unknown
    try {
      createAgentHandler({ agents: { support: { agent: support } as never }, identify: () => ({ id: 'ann' }) })
    } catch (error) {
      thrown = error
    }
    expect(isAgentError(thrown) && thrown.code).toBe('SERVER_OPTIONS_INVALID')
    const error = thrown as Error & { why: string; fix: string }
    expect(error.why).toBe('agents.support is neither an agent definition nor a loader function (got an object with keys "agent")')
    expect(error.fix).toContain("the module's default export (import support from \"./agents/support.ts\", or mod.default)")
  })

  it('a loader whose module default-exports no agent fails that agent with SERVER_OPTIONS_INVALID', async () => {
    const app = createAgentHandler({ agents: { support: async () => ({ default: { default: 42 } }) }, identify: () => ({ id: 'ann' }) })
    const response = await app.fetch(new Request('http://test/api/agents/agents/support/stores'))
    const { error } = await response.json() as { error: { code: string; why: string; fix: string } }
    expect(error.code).toBe('SERVER_OPTIONS_INVALID')
    expect(error.why).toBe('the loader of agents.support resolved to no agent definition (got an object with keys "default")')
    expect(error.fix).toContain('export default defineAgent')
  })
})

describe('createAgentHandler refuses what would mix agents or leak a setup error', () => {
  const thrownBy = (make: () => unknown) => {
    try {
      make()
    } catch (error) {
      return error as Error & { code: string; why: string; fix: string }
    }
    throw new Error('nothing was thrown')
  }

  it('an unnamed agent under a key that is no agent name is AGENT_NAME_INVALID, not a second agent named "agent"', () => {
    for (const key of ['support v2', 'a/b', 'ünï', 'x'.repeat(65)]) {
      const error = thrownBy(() => createAgentHandler({ agents: { [key]: support }, identify: () => ({ id: 'ann' }) }))
      expect(error.code).toBe('AGENT_NAME_INVALID')
      expect(error.why).toContain(`"${key}" is no agent name`)
      expect(error.fix).toContain('defineAgent({ name:')
    }
    // Named agents may sit under any key.
    expect(() => createAgentHandler({ agents: { 'support v2': { ...support, name: 'support_v2' } as AgentDefinition }, identify: () => ({ id: 'ann' }) })).not.toThrow()
  })

  it('an unnamed agent a loader gives under such a key fails its routes with a 500 AGENT_NAME_INVALID', async () => {
    const app = createAgentHandler({ agents: { 'notes app': async () => support }, identify: () => ({ id: 'ann' }) })
    const response = await app.fetch(new Request('http://test/api/agents/agents/notes%20app/stores'))
    expect(response.status).toBe(500)
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('AGENT_NAME_INVALID')
  })

  it('a loader that throws is a 500 AGENT_LOAD_FAILED whose answer holds none of the thrown message', async () => {
    const logged: unknown[][] = []
    const error = console.error
    console.error = (...args: unknown[]) => { logged.push(args) }
    try {
      const app = createAgentHandler({ agents: { support: async () => { throw new Error('secret db password xyz') } }, identify: () => ({ id: 'ann' }) })
      const response = await app.fetch(new Request('http://test/api/agents/agents/support/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'hi' }) }))
      const text = await response.text()
      expect(response.status).toBe(500)
      expect(JSON.parse(text)).toMatchObject({ error: { code: 'AGENT_LOAD_FAILED', why: 'the loader of agent "support" failed' } })
      expect(text).not.toContain('secret')
      const listed = await (await app.fetch(new Request('http://test/api/agents/agents'))).text()
      expect(listed).toContain('AGENT_LOAD_FAILED')
      expect(listed).not.toContain('secret')
      // The message is in the server's log.
      expect(String((logged[0]?.[1] as Error | undefined)?.message)).toBe('secret db password xyz')
    } finally {
      console.error = error
    }
  })

  it('an entry that is a Promise (a forgotten await) says to await it', () => {
    const error = thrownBy(() => createAgentHandler({ agents: { support: Promise.resolve(support) as never }, identify: () => ({ id: 'ann' }) }))
    expect(error.code).toBe('SERVER_OPTIONS_INVALID')
    expect(error.why).toContain('got a Promise (await it first')
  })
})

describe('the CLI names an unnamed agent by its file', () => {
  it('an unnamed agent in a file whose name is no agent name (v1.2.ts) fails to load with AGENT_NAME_INVALID naming the file', async () => {
    const { loadAgent } = await import('../../src/cli/load-agent.ts')
    const file = join(root, 'server', 'agents', 'v1.2.ts')
    writeFileSync(file, `export { default } from ${JSON.stringify(join(root, 'server', 'agents', 'support.ts'))}`)
    await expect(loadAgent(root, 'v1.2')).rejects.toMatchObject({ code: 'AGENT_NAME_INVALID', why: expect.stringContaining(`the agent of ${file} has no name, and "v1.2" is no agent name`) })
    expect((await loadAgent(root, 'support')).agent.name).toBe('support')
    rmSync(file)
  })
})

describe('internal errors in production answers', () => {
  it('an error that is no AgentError is a 500 INTERNAL_ERROR without its message in production, and with it in dev', async () => {
    const logged: unknown[][] = []
    const error = console.error
    console.error = (...args: unknown[]) => { logged.push(args) }
    try {
      const identify = () => { throw new Error('secret token xyz') }
      const production = createAgentHandler({ agents: { support }, identify })
      const answer = await production.fetch(new Request('http://test/api/agents/agents/support/threads'))
      const text = await answer.text()
      expect(answer.status).toBe(500)
      expect(JSON.parse(text)).toMatchObject({ error: { code: 'INTERNAL_ERROR', why: 'the server failed; its log has the error' } })
      expect(text).not.toContain('secret')
      expect((logged[0]?.[1] as Error).message).toBe('secret token xyz')
      const dev = createAgentRoutes({ agents: { list: async () => ['support'], load: async () => support }, identify, mode: 'dev' })
      const devAnswer = await dev.fetch(new Request('http://test/__agents/agents/support/threads'))
      expect(devAnswer.status).toBe(500)
      expect(await devAnswer.json()).toMatchObject({ error: { code: 'INTERNAL_ERROR', why: 'secret token xyz' } })
    } finally {
      console.error = error
    }
  })

  it('a run whose driver throws streams an error event without the message in production, and with it in dev', async () => {
    const logged: unknown[][] = []
    const error = console.error
    console.error = (...args: unknown[]) => { logged.push(args) }
    try {
      const { defineAgent } = await import('../../src/index.ts')
      const boom = defineAgent({ name: 'boom', driver: { run() { throw new Error('provider said: bad key sk-123') } }, workspace: support.workspace })
      const production = createAgentHandler({ agents: { boom }, identify: () => ({ id: 'ann' }) })
      const answer = await production.fetch(new Request('http://test/api/agents/agents/boom/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'hi' }) }))
      const text = await answer.text()
      expect(text).not.toContain('sk-123')
      expect(text.trim().split('\n').map(line => JSON.parse(line) as { type: string; error?: { code: string; why: string } }).find(event => event.type === 'error')).toMatchObject({ error: { code: 'DRIVER_FAILED', why: 'the server failed; its log has the error' } })
      expect(logged.some(args => String(args[1]).includes('sk-123'))).toBe(true)
      const dev = createAgentRoutes({ agents: { list: async () => ['boom'], load: async () => boom }, identify: () => ({ id: 'ann' }), mode: 'dev' })
      const devText = await (await dev.fetch(new Request('http://test/__agents/agents/boom/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'hi' }) }))).text()
      expect(devText).toContain('sk-123')
    } finally {
      console.error = error
    }
  })
})
