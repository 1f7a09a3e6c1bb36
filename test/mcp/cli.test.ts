/**
 * `agent mcp` as a real child process (`node --import tsx src/cli/main.ts mcp ...`) driven by the
 * SDK's real MCP client over stdio and over Streamable HTTP. Approvals are decided from
 * this test process with resolveApproval over the shared fs workspace, as `agent dev` would.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { listApprovals, resolveApproval } from '../../src/index.ts'
import type { AgentDefinition, ApprovalRequest } from '../../src/index.ts'
import { jsonlLines, resultText } from './helpers.ts'

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const MAIN = join(REPO_ROOT, 'src/cli/main.ts')

/** A project with `server/agents/notes.ts`: one per-user JSONL store whose writes need approval. */
async function project(): Promise<{ root: string; workspace: { dir: string }; agent: AgentDefinition }> {
  const root = mkdtempSync(join(tmpdir(), 'vam-mcp-cli-'))
  const workspaceDir = join(root, '.agent/workspace')
  mkdirSync(join(root, 'server/agents'), { recursive: true })
  const file = join(root, 'server/agents/notes.ts')
  writeFileSync(file, `
import { createWorkspace, defineAgent } from ${JSON.stringify(pathToFileURL(join(REPO_ROOT, 'src/index.ts')).href)}
import { memory, workspaceJsonlMemoryStore } from ${JSON.stringify(pathToFileURL(join(REPO_ROOT, 'src/capabilities/index.ts')).href)}
export default defineAgent({
  name: 'notes',
  driver: { run() {} },
  workspace: createWorkspace({ dir: ${JSON.stringify(workspaceDir)} }),
  capabilities: [memory({ stores: { agent: {
    adapter: workspaceJsonlMemoryStore(),
    scope: ({ user }) => (user ? { agent: 'notes', user: user.id } : undefined),
    write: { mode: 'tool', policy: 'require-approval' },
  } } })],
})
`)
  const agent = (await import(pathToFileURL(file).href) as { default: AgentDefinition }).default
  return { root, workspace: { dir: workspaceDir }, agent }
}

const clients: Client[] = []
const children: Array<{ pid?: number; kill(signal?: NodeJS.Signals): boolean }> = []
afterEach(async () => {
  while (clients.length) await clients.pop()!.close().catch(() => {})
  while (children.length) children.pop()!.kill('SIGTERM')
})

async function stdioClient(root: string, user: string): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', MAIN, 'mcp', '--agent', 'notes', '--root', root, '--user', user], cwd: REPO_ROOT, env: process.env as Record<string, string>, stderr: 'pipe' })
  const client = new Client({ name: 'test', version: '1' })
  await client.connect(transport)
  clients.push(client)
  return client
}

async function pendingApproval(agent: AgentDefinition): Promise<ApprovalRequest> {
  for (let i = 0; i < 300; i++) {
    const [approval] = await listApprovals(agent, { status: 'pending' })
    if (approval) return approval
    await new Promise((done) => setTimeout(done, 20))
  }
  throw new Error('no pending approval')
}

const remember = (content: string, extra: Record<string, unknown> = {}) => ({ name: 'memory_remember', arguments: { kind: 'semantic', content, ...extra } })

describe('agent mcp', () => {
  it('over stdio: lists the tools, and a remember waits for an approval given by another process, then runs once in the --user scope', async () => {
    const { root, workspace, agent } = await project()
    const client = await stdioClient(root, 'alice')
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['memory_delete', 'memory_read', 'memory_remember', 'memory_search'])
    expect(client.getServerVersion()?.name).toBe('vite-agent-memory/notes')

    const call = client.callTool(remember('Alice takes the 8:15 train'))
    const approval = await pendingApproval(agent)
    expect(approval).toMatchObject({ via: 'mcp', user: { id: 'alice' }, toolName: 'memory_remember' })
    expect(jsonlLines(workspace)).toEqual([])
    expect((await resolveApproval(agent, approval.id, { approved: true, approver: 'alice', user: { id: 'alice' } }).result).status).toBe('completed')
    expect(await call).toMatchObject({ structuredContent: { action: 'created' } })
    expect(jsonlLines(workspace)).toHaveLength(1)
    expect(jsonlLines(workspace)[0]).toMatchObject({ scope: { agent: 'notes', user: 'alice' }, audit: { approver: 'alice', user: 'alice' } })

    const search = await client.callTool({ name: 'memory_search', arguments: { query: 'train' } })
    expect((search.structuredContent as { results: Array<{ content: string }> }).results.map((hit) => hit.content)).toEqual(['Alice takes the 8:15 train'])
  })

  it('over stdio: a denied remember returns a tool error saying so; scope and user arguments change nothing', async () => {
    const { root, workspace, agent } = await project()
    const client = await stdioClient(root, 'alice')
    const call = client.callTool(remember('Alice is an admin'))
    const approval = await pendingApproval(agent)
    await resolveApproval(agent, approval.id, { approved: false, reason: 'no', approver: 'alice' }).result
    const denied = await call
    expect(denied).toMatchObject({ isError: true, structuredContent: { error: { code: 'APPROVAL_DENIED' } } })
    expect(resultText(denied)).toContain('the user denied "memory_remember"')

    const forged = await client.callTool(remember('x', { scope: { agent: 'notes', user: 'bob' } }))
    const other = await client.callTool({ name: 'memory_search', arguments: { query: 'x', user: 'bob' } })
    expect([forged, other].map((result) => (result.structuredContent as { error: { code: string } }).error.code)).toEqual(['TOOL_INPUT_INVALID', 'TOOL_INPUT_INVALID'])
    expect(await listApprovals(agent, { status: 'pending' })).toEqual([])
    expect(jsonlLines(workspace)).toEqual([])
  })

  it('over http: prints a loopback url and token; the SDK client with the token lists the tools, without it gets 401', async () => {
    const { root } = await project()
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'mcp', '--agent', 'notes', '--root', root, '--user', 'alice', '--transport', 'http'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    children.push(child)
    let out = ''
    const endpoint = await new Promise<{ url: string; token: string }>((done, fail) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString()
        const url = /url: (\S+)/.exec(out)?.[1]
        const token = /token: (\S+)/.exec(out)?.[1]
        if (url && token) done({ url, token })
      })
      child.once('exit', (code) => fail(new Error(`agent mcp exited with ${code}`)))
    })
    expect(endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    expect(endpoint.token).toMatch(/^[0-9a-f]{64}$/)
    const client = new Client({ name: 'test', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint.url), { requestInit: { headers: { Authorization: `Bearer ${endpoint.token}` } } }))
    clients.push(client)
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['memory_delete', 'memory_read', 'memory_remember', 'memory_search'])
    const refused = await fetch(endpoint.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) })
    expect(refused.status).toBe(401)
  })

  it('rejects an unknown transport with a clear error', async () => {
    const { root } = await project()
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'mcp', '--agent', 'notes', '--root', root, '--transport', 'websocket'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let err = ''
    child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
    const code = await new Promise<number | null>((done) => child.once('exit', done))
    expect(code).toBe(1)
    expect(err).toContain('CLI_INVALID_OPTION')
    expect(err).toContain('--transport stdio or --transport http')
  })
})
