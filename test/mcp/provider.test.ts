/**
 * The provider-backed driver and its MCP bridge over Streamable HTTP, driven by a
 * scripted provider that uses the SDK's real MCP `Client` against the real loopback server.
 */
import { describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { defineAgent, listApprovals, resolveApproval, runAgent } from '../../src/index.ts'
import type { AgentRun, AgentRunEvent, CustomRunContext, ProviderRunContext } from '../../src/index.ts'
import { memory } from '../../src/capabilities/index.ts'
import { fsWorkspace, jsonlLines, nextEvent, providerAgent, resultText, scriptedProvider, userStore } from './helpers.ts'

/** Starts iterating a run at once (so events can be awaited while it runs). */
function follow(run: AgentRun) {
  const events: AgentRunEvent[] = []
  const done = (async () => {
    for await (const event of run) events.push(event)
    return run.result
  })()
  return { events, done }
}

const remember = (content: string, extra: Record<string, unknown> = {}) => ({ name: 'memory_remember', arguments: { kind: 'semantic', content, ...extra } })

describe('provider-backed driver: the MCP bridge over Streamable HTTP', () => {
  it('lists exactly the invocation\'s resolved tools, with the JSON Schemas a custom-run driver gets', async () => {
    const workspace = fsWorkspace()
    const listed: Array<Array<{ name: string; description?: string; inputSchema: unknown }>> = []
    const { provider } = scriptedProvider(async (client) => { listed.push((await client.listTools()).tools) })
    await runAgent(providerAgent(userStore('allow'), provider, workspace), { input: 'hi', user: { id: 'alice' } }).result
    await runAgent(providerAgent(userStore('off'), provider, workspace), { input: 'hi', user: { id: 'alice' } }).result

    let custom: CustomRunContext | undefined
    await runAgent(defineAgent({ name: 'notes', driver: { run(ctx) { custom = ctx } }, workspace, capabilities: [memory(userStore('allow'))] }), { input: 'hi', user: { id: 'alice' } }).result
    const expected = Object.values(custom!.tools).map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }))

    expect(listed[0]!.map((tool) => tool.name).sort()).toEqual(['memory_delete', 'memory_read', 'memory_remember', 'memory_search'])
    expect(listed[0]!.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema })).sort((a, b) => a.name.localeCompare(b.name))).toEqual(expected.sort((a, b) => a.name.localeCompare(b.name)))
    // A store without tool writes: the write tools are not served at all.
    expect(listed[1]!.map((tool) => tool.name).sort()).toEqual(['memory_read', 'memory_search'])
  })

  it('memory_remember and memory_search over MCP write and find in the run user\'s scope, with run events for each call', async () => {
    const workspace = fsWorkspace()
    const results: unknown[] = []
    const { provider } = scriptedProvider(async (client, ctx) => {
      results.push(await client.callTool(remember('Alice prefers window seats')))
      results.push(await client.callTool({ name: 'memory_search', arguments: { query: 'window seats' } }))
      ctx.write('Noted.')
    })
    const agent = providerAgent(userStore('allow'), provider, workspace)
    const { events, done } = follow(runAgent(agent, { input: 'remember my seat', user: { id: 'alice' } }))
    const result = await done
    expect(result).toMatchObject({ status: 'completed', text: 'Noted.' })
    expect(results[0]).toMatchObject({ structuredContent: { action: 'created', store: 'agent' } })
    expect(results[0]).not.toHaveProperty('isError')
    const found = (results[1] as { structuredContent: { results: Array<{ content: string }> } }).structuredContent.results
    expect(found.map((hit) => hit.content)).toEqual(['Alice prefers window seats'])
    const lines = jsonlLines(workspace)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ scope: { agent: 'notes', user: 'alice' }, audit: { via: 'tool', runId: result.runId, user: 'alice' } })
    expect(events.map((event) => event.type)).toEqual(['start', 'tool-call', 'tool-result', 'tool-call', 'tool-result', 'text-delta', 'finish'])
  })

  it('a require-approval memory_remember blocks until resolveApproval approves it, then runs once', async () => {
    const workspace = fsWorkspace()
    const results: unknown[] = []
    const { provider } = scriptedProvider(async (client) => { results.push(await client.callTool(remember('Alice is vegetarian'))) })
    const agent = providerAgent(userStore('require-approval'), provider, workspace)
    const { events, done } = follow(runAgent(agent, { input: 'remember I am vegetarian', user: { id: 'alice' } }))
    const request = await nextEvent(events, 'approval-request')
    expect(request.approval).toMatchObject({ toolName: 'memory_remember', status: 'pending', via: 'mcp', user: { id: 'alice' }, input: { kind: 'semantic', content: 'Alice is vegetarian' } })
    expect(jsonlLines(workspace)).toEqual([]) // blocked: nothing written before the decision
    expect(results).toEqual([])

    const decision = await resolveApproval(agent, request.approval.id, { approved: true, approver: 'alice', reason: 'yes', user: { id: 'alice' } }).result
    expect(decision).toMatchObject({ status: 'completed', runId: request.approval.runId })
    const result = await done
    expect(result.status).toBe('completed')
    expect(results[0]).toMatchObject({ structuredContent: { action: 'created' } })
    expect(jsonlLines(workspace)).toHaveLength(1)
    expect(jsonlLines(workspace)[0]).toMatchObject({ content: 'Alice is vegetarian', approvalReason: 'yes', audit: { via: 'tool', approver: 'alice', runId: request.approval.runId, user: 'alice' } })
    expect(events.map((event) => event.type)).toEqual(['start', 'tool-call', 'approval-request', 'approval-decision', 'tool-result', 'finish'])

    const again = await resolveApproval(agent, request.approval.id, { approved: true }).result
    expect(again.error?.code).toBe('APPROVAL_ALREADY_RESOLVED')
    expect(jsonlLines(workspace)).toHaveLength(1)
  })

  it('a denied memory_remember returns a tool error saying so, and nothing is written', async () => {
    const workspace = fsWorkspace()
    const results: unknown[] = []
    const { provider } = scriptedProvider(async (client) => { results.push(await client.callTool(remember('Alice owes Bob money'))) })
    const agent = providerAgent(userStore('require-approval'), provider, workspace)
    const { events, done } = follow(runAgent(agent, { input: 'remember that', user: { id: 'alice' } }))
    const request = await nextEvent(events, 'approval-request')
    await resolveApproval(agent, request.approval.id, { approved: false, reason: 'not true', approver: 'alice' }).result
    expect((await done).status).toBe('completed')
    expect(results[0]).toMatchObject({ isError: true, structuredContent: { error: { code: 'APPROVAL_DENIED', details: { reason: 'not true' } } } })
    expect(resultText(results[0])).toContain('the user denied "memory_remember"')
    expect(resultText(results[0])).toContain('not true')
    expect(jsonlLines(workspace)).toEqual([])
    expect(events.find((event) => event.type === 'tool-error')).toMatchObject({ toolName: 'memory_remember', error: { code: 'APPROVAL_DENIED' } })
  })

  it('when a read and a gated write run in one step and the write is denied, the read result still arrives', async () => {
    const workspace = fsWorkspace()
    const results: Record<string, unknown> = {}
    const { provider } = scriptedProvider(async (client) => {
      const [search, write] = await Promise.all([
        client.callTool(remember('Alice lives in Lyon')),
        client.callTool({ name: 'memory_search', arguments: { query: 'Lyon' } }),
      ]).then(([w, s]) => [s, w])
      Object.assign(results, { search, write })
    })
    const agent = providerAgent(userStore('require-approval'), provider, workspace)
    const { events, done } = follow(runAgent(agent, { input: 'go', user: { id: 'alice' } }))
    const request = await nextEvent(events, 'approval-request')
    await nextEvent(events, 'tool-result') // the search finished while the write waits
    await resolveApproval(agent, request.approval.id, { approved: false }).result
    await done
    expect(results.search).toMatchObject({ structuredContent: { results: [] } })
    expect(results.write).toMatchObject({ isError: true, structuredContent: { error: { code: 'APPROVAL_DENIED' } } })
    expect(jsonlLines(workspace)).toEqual([])
  })

  it('an approval nobody decides times out with APPROVAL_TIMEOUT, writes nothing and cannot be approved later', async () => {
    const workspace = fsWorkspace()
    const results: unknown[] = []
    const { provider } = scriptedProvider(async (client) => { results.push(await client.callTool(remember('late fact'))) })
    const agent = providerAgent(userStore('require-approval'), provider, workspace, 300)
    const { events, done } = follow(runAgent(agent, { input: 'go', user: { id: 'alice' } }))
    expect((await done).status).toBe('completed')
    expect(results[0]).toMatchObject({ isError: true, structuredContent: { error: { code: 'APPROVAL_TIMEOUT', details: { timeoutMs: 300 } } } })
    expect(resultText(results[0])).toContain('nobody decided within 300 ms')
    const [approval] = await listApprovals(agent)
    expect(approval).toMatchObject({ status: 'denied', decision: { approved: false } })
    expect(events.find((event) => event.type === 'approval-decision')).toMatchObject({ approved: false })
    const late = await resolveApproval(agent, approval!.id, { approved: true }).result
    expect(late.error?.code).toBe('APPROVAL_ALREADY_RESOLVED')
    expect(jsonlLines(workspace)).toEqual([])
  })

  it('a request without the bearer token (or with another one) is refused with 401 and reaches no tool', async () => {
    const workspace = fsWorkspace()
    const statuses: number[] = []
    let refusedConnect: unknown
    const { provider } = scriptedProvider(async (_client, ctx) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: remember('forged').valueOf() })
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
      statuses.push((await fetch(ctx.mcp.url, { method: 'POST', headers, body })).status)
      statuses.push((await fetch(ctx.mcp.url, { method: 'POST', headers: { ...headers, authorization: `Bearer ${'0'.repeat(64)}` }, body })).status)
      statuses.push((await fetch(ctx.mcp.url, { method: 'POST', headers: { ...headers, authorization: ctx.mcp.token }, body })).status)
      const stranger = new Client({ name: 'stranger', version: '1' })
      refusedConnect = await stranger.connect(new StreamableHTTPClientTransport(new URL(ctx.mcp.url))).then(() => 'connected', (error: unknown) => error)
    })
    const { events, done } = follow(runAgent(providerAgent(userStore('allow'), provider, workspace), { input: 'go', user: { id: 'alice' } }))
    await done
    expect(statuses).toEqual([401, 401, 401])
    expect(refusedConnect).toBeInstanceOf(Error)
    expect(String(refusedConnect)).toContain('Unauthorized')
    expect(events.filter((event) => event.type === 'tool-call')).toEqual([])
    expect(jsonlLines(workspace)).toEqual([])
  })

  it('a client passing a scope or another user\'s id in arguments changes nothing', async () => {
    const workspace = fsWorkspace()
    const bob = scriptedProvider(async (client) => { await client.callTool(remember('Bob secret: the safe code is 1234')) })
    await runAgent(providerAgent(userStore('allow'), bob.provider, workspace), { input: 'go', user: { id: 'bob' } }).result
    const before = jsonlLines(workspace)
    expect(before).toHaveLength(1)

    const results: unknown[] = []
    const alice = scriptedProvider(async (client) => {
      results.push(await client.callTool(remember('forged', { scope: { agent: 'notes', user: 'bob' } })))
      results.push(await client.callTool(remember('forged', { user: 'bob' })))
      results.push(await client.callTool({ name: 'memory_search', arguments: { query: 'safe code', scope: { user: 'bob' } } }))
      results.push(await client.callTool({ name: 'memory_search', arguments: { query: 'safe code', _meta: { user: 'bob' } } }))
      results.push(await client.callTool({ name: 'memory_search', arguments: { query: 'safe code' }, _meta: { user: 'bob', scope: { user: 'bob' } } }))
      results.push(await client.callTool({ name: 'memory_delete', arguments: { id: String(before[0]!.id) } }))
    })
    await runAgent(providerAgent(userStore('allow'), alice.provider, workspace), { input: 'go', user: { id: 'alice' } }).result
    const codes = results.map((result) => (result as { structuredContent?: { error?: { code: string } } }).structuredContent?.error?.code)
    expect(codes.slice(0, 4)).toEqual(['TOOL_INPUT_INVALID', 'TOOL_INPUT_INVALID', 'TOOL_INPUT_INVALID', 'TOOL_INPUT_INVALID'])
    expect(results[4]).toMatchObject({ structuredContent: { results: [] } }) // _meta is not an argument: alice's own scope, nothing of bob's
    expect(results[5]).toMatchObject({ isError: true }) // bob's record is not in alice's scope
    expect(jsonlLines(workspace)).toEqual(before)
  })

  it('each invocation gets its own loopback endpoint and token, and the endpoint stops when the run ends', async () => {
    const workspace = fsWorkspace()
    const { provider, seen } = scriptedProvider(async () => {})
    const agent = providerAgent(userStore('allow'), provider, workspace)
    await runAgent(agent, { input: 'one', user: { id: 'alice' } }).result
    await runAgent(agent, { input: 'two', user: { id: 'alice' } }).result
    const [first, second] = seen.map((ctx: ProviderRunContext) => ctx.mcp)
    expect(first!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    expect(first!.token).toMatch(/^[0-9a-f]{64}$/)
    expect(second!.token).not.toBe(first!.token)
    expect(first!.headers).toEqual({ Authorization: `Bearer ${first!.token}` })
    const after = await fetch(first!.url, { method: 'POST', headers: first!.headers, body: '{}' }).then(() => 'answered', (error: unknown) => error)
    expect(after).toBeInstanceOf(Error)
  })

  it('the provider receives ids, user, instructions and the transcript; its text is stored in the thread', async () => {
    const workspace = fsWorkspace()
    const { provider, seen } = scriptedProvider(async (_client, ctx) => { ctx.write(`echo ${ctx.input}`) })
    const agent = providerAgent(userStore('off'), provider, workspace)
    const first = await runAgent(agent, { input: 'hello', user: { id: 'alice' }, threadId: 't1', metadata: { tenant: 'acme' } }).result
    await runAgent(agent, { input: 'again', user: { id: 'alice' }, threadId: 't1' }).result
    expect(seen[0]).toMatchObject({ agent: 'notes', runId: first.runId, threadId: 't1', user: { id: 'alice' }, metadata: { tenant: 'acme' }, input: 'hello', messages: [] })
    expect(seen[0]!.instructions).toContain('Keep notes for the user.')
    expect(seen[1]!.messages).toEqual([{ role: 'user', content: 'hello' }, { role: 'assistant', content: 'echo hello' }])
  })

  it('a provider that throws fails the run with DRIVER_FAILED, and a pending approval it left is closed as denied', async () => {
    const workspace = fsWorkspace()
    const { provider } = scriptedProvider(async (client) => {
      void client.callTool(remember('never')).catch(() => {})
      await new Promise((resolve) => setTimeout(resolve, 200))
      throw new Error('provider crashed')
    })
    const agent = providerAgent(userStore('require-approval'), provider, workspace)
    const result = await runAgent(agent, { input: 'go', user: { id: 'alice' } }).result
    expect(result).toMatchObject({ status: 'failed', error: { code: 'DRIVER_FAILED' } })
    expect(result.error!.message).toContain('provider crashed')
    const [approval] = await listApprovals(agent)
    expect(approval).toMatchObject({ status: 'denied', via: 'mcp' })
    expect(jsonlLines(workspace)).toEqual([])
  })

  it('defineAgent rejects a provider driver with an unknown key or without run()', () => {
    const workspace = fsWorkspace()
    expect(() => defineAgent({ driver: { provider: { run() {} }, approvalTimeout: 5 } as never, workspace })).toThrow(/AGENT_OPTIONS_INVALID.*approvalTimeout/)
    expect(() => defineAgent({ driver: { provider: {} } as never, workspace })).toThrow(/AGENT_OPTIONS_INVALID.*driver\.provider\.run/)
  })
})

describe('MCP bridge: progress while a call waits for approval', () => {
  it('sends MCP progress notifications to a client that asked for them, until the call times out', async () => {
    const { openMcpSession, startMcpHttpServer, connectMcpClient } = await import('../../src/mcp/index.ts')
    const workspace = fsWorkspace()
    const agent = providerAgent(userStore('require-approval'), { async run() {} }, workspace)
    const bridge = await openMcpSession(agent, { user: { id: 'alice' }, approvalTimeoutMs: 1500, progressIntervalMs: 200 })
    const server = await startMcpHttpServer(bridge)
    const client = await connectMcpClient(server)
    const progress: string[] = []
    const result = await client.callTool(remember('slow'), undefined, { onprogress: (update) => { progress.push(update.message ?? '') }, resetTimeoutOnProgress: true })
    await client.close()
    await server.close()
    expect(progress.length).toBeGreaterThanOrEqual(1)
    expect(progress[0]).toMatch(/^waiting for approval apr_[0-9a-f]{20} of memory_remember$/)
    expect(result).toMatchObject({ isError: true, structuredContent: { error: { code: 'APPROVAL_TIMEOUT' } } })
    expect(jsonlLines(workspace)).toEqual([])
  })
})
