import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import type { ToolBridge } from './bridge.ts'

/** Version reported in the MCP `serverInfo`. */
export const MCP_SERVER_VERSION = '0.1.0'

/**
 * An MCP server (`@modelcontextprotocol/sdk` 1.32 low-level `Server`) over a {@link ToolBridge}:
 * capability `tools`, `serverInfo.name` = `vite-agent-memory/<agent>`, the invocation's
 * instructions as the server `instructions`. `tools/list` answers `bridge.list()` (no pagination);
 * `tools/call` runs `bridge.call()` with the request's cancellation signal and, when the client
 * sent a `progressToken`, progress notifications while the call waits for approval.
 * Connect it to one transport (see http.ts and stdio.ts); make one per HTTP request.
 */
export function createMcpServer(bridge: ToolBridge): Server {
  const { invocation } = bridge
  const server = new Server(
    { name: `vite-agent-memory/${invocation.agent.name}`, version: MCP_SERVER_VERSION },
    { capabilities: { tools: {} }, ...(invocation.instructions ? { instructions: invocation.instructions } : {}) },
  )
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: bridge.list() }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const progressToken = request.params._meta?.progressToken
    return bridge.call(request.params.name, request.params.arguments ?? {}, {
      signal: extra.signal,
      ...(progressToken !== undefined
        ? { progress: (progress: number, message: string) => extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } }).catch(() => {}) }
        : {}),
    })
  })
  return server
}
