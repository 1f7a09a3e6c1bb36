import { randomId } from '../agent/ids.ts'
import { resolveInvocation } from '../agent/invocation.ts'
import { hostWorkspace } from '../agent/store.ts'
import type { AgentDefinition, AgentRunEvent, AgentUser } from '../agent/types.ts'
import { createToolBridge, type ToolBridge, type ToolBridgeOptions } from './bridge.ts'

/** Options of {@link openMcpSession}. */
export interface McpSessionOptions extends ToolBridgeOptions {
  /** The user every call runs for; fixed for the whole session. */
  user?: AgentUser
  /** Invocation metadata passed to capabilities (for example a tenant). Default `{}`. */
  metadata?: Record<string, unknown>
  /** Receives the session's events (`tool-call`, `tool-result`, `approval-request`, ...). */
  onEvent?: (event: AgentRunEvent) => void
}

/**
 * Resolves `agent`'s capabilities once for `user` and returns a {@link ToolBridge} over the
 * resulting tools, for serving them to an external MCP client (`agent mcp`). The scope is fixed
 * here, at start: every call runs as `user`, in a session with its own run id (`run_` + 20 hex)
 * and thread id (`thread_` + 20 hex) recorded in provenance and approvals. Approvals are stored in
 * the agent's workspace, so `resolveApproval` from another process sharing it (for example
 * `agent dev` with `/approve <id>`) decides them.
 *
 * @throws what capability resolution throws (`CAPABILITY_RESOLVE_FAILED`, `TOOL_NAME_DUPLICATE`, ...).
 */
export async function openMcpSession(agent: AgentDefinition, options: McpSessionOptions = {}): Promise<ToolBridge> {
  const invocation = await resolveInvocation({
    agent,
    store: hostWorkspace(agent),
    runId: randomId('run'),
    threadId: randomId('thread'),
    ...(options.user ? { user: options.user } : {}),
    metadata: options.metadata ?? {},
    emit: options.onEvent ?? (() => {}),
  })
  return createToolBridge(invocation, {
    ...(options.approvalTimeoutMs !== undefined ? { approvalTimeoutMs: options.approvalTimeoutMs } : {}),
    ...(options.progressIntervalMs !== undefined ? { progressIntervalMs: options.progressIntervalMs } : {}),
  })
}
