import type { ModelMessage } from 'ai'
import { agentError, isAgentError, type AgentErrorShape } from '../../errors.ts'
import { createToolBridge } from '../../mcp/bridge.ts'
import { connectMcpClient } from '../../mcp/client.ts'
import { startMcpHttpServer } from '../../mcp/http.ts'
import type { RunOutcome } from '../events.ts'
import type { Invocation } from '../invocation.ts'
import { saveThread, type ThreadRecord } from '../store.ts'
import type { AgentDriver, McpBridgeClient, ProviderDriver, ProviderRunContext } from '../types.ts'
import { abortedError } from './model.ts'

/** Whether the driver is provider-backed (`{ provider }`). */
export function isProviderDriver(driver: AgentDriver): driver is ProviderDriver {
  return 'provider' in driver
}

/**
 * Runs one provider-backed invocation on a locked thread (source: capability document,
 * "Driver support", provider-backed row).
 *
 * Starts the invocation's MCP bridge on loopback with a new bearer token, calls
 * `driver.provider.run(ctx)` with the endpoint and `ctx.connect()`, and stops the bridge when
 * `run` returns (pending approvals of calls still open are stored as denied; running calls are
 * awaited, so nothing runs after the outcome). Every call goes through the host pipeline (see
 * {@link createToolBridge}); `require-approval` calls block inside the run, so the run never ends
 * `'awaiting-approval'`. The user input and the text the provider wrote are stored in the thread.
 * A provider that throws fails the run with `DRIVER_FAILED` (or its own AgentError); an aborted
 * signal with `RUN_ABORTED`.
 */
export async function runProvider(invocation: Invocation, driver: ProviderDriver, thread: ThreadRecord, input: string): Promise<RunOutcome> {
  const bridge = createToolBridge(invocation, { ...(driver.approvalTimeoutMs !== undefined ? { approvalTimeoutMs: driver.approvalTimeoutMs } : {}) })
  let error: AgentErrorShape | undefined
  let text = ''
  const clients: McpBridgeClient[] = []
  let endpoint: Awaited<ReturnType<typeof startMcpHttpServer>> | undefined
  try {
    endpoint = await startMcpHttpServer(bridge)
    const mcp = { url: endpoint.url, token: endpoint.token, headers: endpoint.headers }
    const context: ProviderRunContext = {
      agent: invocation.agent.name,
      runId: invocation.runId,
      threadId: invocation.threadId,
      ...(invocation.user ? { user: invocation.user } : {}),
      metadata: invocation.metadata,
      input,
      messages: thread.messages,
      instructions: invocation.instructions,
      mcp,
      async connect() {
        const client = (await connectMcpClient(mcp)) as unknown as McpBridgeClient
        clients.push(client)
        return client
      },
      write(chunk) {
        if (!chunk) return
        text += chunk
        invocation.emit({ type: 'text-delta', text: chunk })
      },
      ...(invocation.signal ? { signal: invocation.signal } : {}),
    }
    await driver.provider.run(context)
  }
  catch (failure) {
    error = invocation.signal?.aborted
      ? abortedError()
      : isAgentError(failure) ? failure.toJSON() : agentError('DRIVER_FAILED', `the provider${driver.provider.name ? ` "${driver.provider.name}"` : ''} threw: ${failure instanceof Error ? failure.message : String(failure)}`, 'fix the provider; tool mistakes come back as MCP tool results with isError and should be handled there', undefined, failure).toJSON()
  }
  finally {
    await Promise.allSettled(clients.map((client) => client.close()))
    if (endpoint) await endpoint.close()
    else await bridge.close()
  }
  if (!error && invocation.signal?.aborted) error = abortedError()
  const added: ModelMessage[] = [{ role: 'user', content: input }]
  if (text) added.push({ role: 'assistant', content: text })
  await saveThread(invocation.store, { ...thread, messages: [...thread.messages, ...added], pendingApprovalIds: [] })
  return error ? { status: 'failed', approvals: [], error } : { status: 'completed', approvals: [] }
}
