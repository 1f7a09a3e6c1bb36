/**
 * The MCP bridge: an agent invocation's resolved tools served over MCP with
 * `@modelcontextprotocol/sdk` 1.32, through the host's validation, policies and approvals.
 * See docs/mcp.md.
 */
export { createToolBridge, type BridgeCallOptions, type BridgeCallResult, type BridgeTool, type ToolBridge, type ToolBridgeOptions } from './bridge.ts'
export { createMcpServer, MCP_SERVER_VERSION } from './server.ts'
export { startMcpHttpServer, type McpHttpOptions, type McpHttpServer } from './http.ts'
export { serveMcpStdio, type McpStdioServer } from './stdio.ts'
export { openMcpSession, type McpSessionOptions } from './session.ts'
export { connectMcpClient } from './client.ts'
export { APPROVAL_POLL_MS, DEFAULT_APPROVAL_TIMEOUT_MS, handOverDecision } from './approvals.ts'
